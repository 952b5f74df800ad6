#include "kernels/split_workspace.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::kernels {

namespace {

struct Buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw RuntimeError(fmt::format("split-K workspace: {} failed: {}", what, cudaGetErrorString(status)));
}

}  // namespace

void require_workspace_fits(std::size_t needed, std::size_t capacity) {
  TILEGEMM_REQUIRE(needed > 0, "workspace", "a positive size (tile counters at least)", "0 bytes");
  TILEGEMM_REQUIRE(needed <= capacity, "workspace", fmt::format("at least {} bytes", needed),
                   fmt::format("a buffer of {} bytes", capacity));
}

void* split_workspace(std::size_t bytes, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  // Buffers live for the process: kernels still in flight at exit must not see them freed.
  static std::mutex mutex;
  static auto* buffers = new std::map<std::pair<int, cudaStream_t>, Buffer>();
  std::lock_guard lock(mutex);
  Buffer& buf = (*buffers)[{device, stream}];
  if (buf.bytes < bytes) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
    if (capture != cudaStreamCaptureStatusNone)
      throw RuntimeError(fmt::format("split-K workspace must grow from {} to {} bytes while the stream is being "
                                     "captured; run this GEMM once before capturing the graph",
                                     buf.bytes, bytes));
    // Grow by at least 2x so a sequence of slightly larger shapes does not reallocate every call.
    const std::size_t grown = std::max(bytes, 2 * buf.bytes);
    if (buf.ptr != nullptr) check(cudaFreeAsync(buf.ptr, stream), "cudaFreeAsync");
    buf = {};
    void* ptr = nullptr;
    check(cudaMallocAsync(&ptr, grown, stream), "cudaMallocAsync");
    check(cudaMemsetAsync(ptr, 0, grown, stream), "cudaMemsetAsync");
    buf = {ptr, grown};
  }
  require_workspace_fits(bytes, buf.bytes);
  return buf.ptr;
}

}  // namespace tilegemm::kernels
