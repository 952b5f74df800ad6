#include "jit/driver_api.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::jit {
namespace {

// 12.0 is the ABI of every function used here; asking for it keeps 12.x drivers usable.
constexpr unsigned kDriverAbiVersion = 12000;

template <typename Fn>
void resolve(const char* symbol, Fn& fn, const std::string& who) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &p, kDriverAbiVersion, cudaEnableDefault, &status);
  if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr)
    throw RuntimeError(
        fmt::format("{}: cannot launch: the CUDA driver function {} is unavailable ({}); is there a "
                    "GPU and an NVIDIA driver on this machine?",
                    who, symbol, rc != cudaSuccess ? cudaGetErrorString(rc) : "symbol not found"));
  fn = reinterpret_cast<Fn>(p);
}

}  // namespace

const DriverApi& driver_api(const std::string& who) {
  static std::mutex mutex;
  static DriverApi api;
  static bool ready = false;
  std::lock_guard lock(mutex);
  if (ready) return api;
  DriverApi fresh;
  resolve("cuCtxGetCurrent", fresh.cuCtxGetCurrent, who);
  resolve("cuModuleLoadData", fresh.cuModuleLoadData, who);
  resolve("cuModuleGetFunction", fresh.cuModuleGetFunction, who);
  resolve("cuFuncSetAttribute", fresh.cuFuncSetAttribute, who);
  resolve("cuLaunchKernelEx", fresh.cuLaunchKernelEx, who);
  resolve("cuOccupancyMaxActiveClusters", fresh.cuOccupancyMaxActiveClusters, who);
  resolve("cuGetErrorString", fresh.cuGetErrorString, who);
  resolve("cuTensorMapEncodeTiled", fresh.cuTensorMapEncodeTiled, who);
  api = fresh;
  ready = true;
  return api;
}

std::string driver_error_text(const DriverApi& api, CUresult status) {
  const char* text = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(status, &text) == CUDA_SUCCESS && text)
    return fmt::format("CUresult {} ({})", static_cast<int>(status), text);
  return fmt::format("CUresult {}", static_cast<int>(status));
}

}  // namespace tilegemm::jit
