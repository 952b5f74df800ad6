#include "api/device_context.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

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

GemmConfig select_config_for_current_device(const GemmDesc& desc, const GemmOptions& options) {
  return select_config_on(desc, current_device_context().hw, options);
}

GemmConfig select_config_on(const GemmDesc& desc, const HardwareModel& hw, const GemmOptions& options) {
  const int num_sms = options.num_sms > 0 ? std::min(options.num_sms, hw.num_sms) : hw.num_sms;
  GemmConfig config = select_config(desc, hw, num_sms);
  if (config.smem_bytes == 0) config.smem_bytes = sm90_smem_bytes(desc, config);
  return config;
}

}  // namespace tilegemm
