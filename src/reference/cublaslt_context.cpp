#include "reference/cublaslt_context.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::reference_detail {

void check_cuda_status(cudaError_t status, const char* who, const char* what) {
  if (status != cudaSuccess)
    throw RuntimeError(fmt::format("{}: {} failed: {} ({})", who, what, cudaGetErrorName(status),
                                   cudaGetErrorString(status)));
}

void check_cublas_status(cublasStatus_t status, const char* who, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(fmt::format("{}: {} failed: {} ({})", who, what, cublasLtGetStatusName(status),
                                   cublasLtGetStatusString(status)));
}

CublasLtContext& cublaslt_context(int device, void* stream, const char* who) {
  static std::mutex mutex;
  static std::map<std::pair<int, void*>, CublasLtContext> contexts;
  std::lock_guard lock(mutex);
  CublasLtContext& ctx = contexts[{device, stream}];
  if (!ctx.handle) {
    check_cuda_status(cudaMalloc(&ctx.workspace, kCublasLtWorkspaceBytes), who, "cudaMalloc(workspace)");
    check_cublas_status(cublasLtCreate(&ctx.handle), who, "cublasLtCreate");
  }
  return ctx;
}

std::uint32_t pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address == 0) return 256;
  return static_cast<std::uint32_t>(std::min<std::uintptr_t>(256, address & (~address + 1)));
}

}  // namespace tilegemm::reference_detail
