#include "kernels/split_workspace.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "core/relaxed_capture.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::kernels {

namespace {

struct Buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  bool zeroed = false;    // false until a memset on the stream outside any capture
  bool in_graph = false;  // used while capturing: a graph may launch kernels on it at any later replay
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

namespace {

// The per-(device, stream) buffer of `kind`: grown on demand, zeroed once when `zeroed` is asked for.
enum class BufferKind { kSplitWorkspace, kScratch };

void* stream_buffer(BufferKind kind, std::size_t bytes, void* stream_ptr, bool zeroed) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  // Buffers live for the process: kernels still in flight at exit must not see them freed.
  static std::mutex mutex;
  static auto* buffers = new std::map<std::tuple<BufferKind, int, cudaStream_t>, Buffer>();
  std::lock_guard lock(mutex);
  Buffer& buf = (*buffers)[{kind, device, stream}];
  // Asked on every launch (one cheap driver query): a buffer that fits must still be marked as a graph's when this
  // launch is being captured, so that it is never freed under the graph.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  const bool capturing = capture != cudaStreamCaptureStatusNone;
  if (buf.bytes < bytes) {
    // Grow by at least 2x so a sequence of slightly larger shapes does not reallocate every call. A buffer a graph
    // may use is never freed (its kernels would read freed memory at the next replay).
    const std::size_t grown = std::max(bytes, 2 * buf.bytes);
    if (buf.ptr != nullptr && !buf.in_graph && !capturing) check(cudaFreeAsync(buf.ptr, stream), "cudaFreeAsync");
    void* ptr = nullptr;
    if (capturing)  // not stream-ordered: a captured cudaMallocAsync would be a node of the graph, not this buffer
      check(with_relaxed_capture([&] { return cudaMalloc(&ptr, grown); }), "cudaMalloc (while capturing)");
    else
      check(cudaMallocAsync(&ptr, grown, stream), "cudaMallocAsync");
    buf = {ptr, grown};
  }
  if (zeroed && !buf.zeroed) {
    // Kernels leave the buffer zeroed, so this runs once per buffer; while capturing, it is a node of the graph
    // (zeroing before the graph's kernels at every replay) and runs again at the next launch outside a capture.
    check(cudaMemsetAsync(buf.ptr, 0, buf.bytes, stream), "cudaMemsetAsync");
    buf.zeroed = !capturing;
  }
  buf.in_graph |= capturing;
  require_workspace_fits(bytes, buf.bytes);
  return buf.ptr;
}

}  // namespace

void* split_workspace(std::size_t bytes, void* stream) {
  return stream_buffer(BufferKind::kSplitWorkspace, bytes, stream, true);
}

void* stream_scratch(std::size_t bytes, void* stream) {
  TILEGEMM_REQUIRE(bytes > 0, "scratch", "a positive size", "0 bytes");
  return stream_buffer(BufferKind::kScratch, bytes, stream, false);
}

}  // namespace tilegemm::kernels
