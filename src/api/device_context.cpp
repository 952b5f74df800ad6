#include "api/device_context.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm {

const DeviceContext& current_device_context() {
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) {
    cudaGetLastError();
    throw RuntimeError(fmt::format("no CUDA GPU available: {}", cudaGetErrorString(err)));
  }
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DeviceContext>> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = contexts[device];
  if (!slot) slot = std::make_unique<DeviceContext>(DeviceContext{device, hardware_from_device(device)});
  return *slot;
}

}  // namespace tilegemm
