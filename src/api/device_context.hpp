#pragma once
// What the operations need to know about the GPU they run on, read once per device.
#include "tilegemm/gemm.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

struct DeviceContext {
  int device = 0;
  HardwareModel hw;  // filled from the device (SM count, smem limits, ...)
};

// The context of the calling thread's current CUDA device. Throws RuntimeError when there is no GPU.
const DeviceContext& current_device_context();

// The SMs a call uses: the set_num_sms limit (0: none) within the device's.
inline int sms_used(int limit, const HardwareModel& hw) {
  return limit > 0 && limit < hw.num_sms ? limit : hw.num_sms;
}

// The heuristics' config for `desc` on the current device, with the SM count options.num_sms asks for (0 = all)
// and the shared memory the config's kernel needs.
GemmConfig select_config_for_current_device(const GemmDesc& desc, const GemmOptions& options);
// The same for hardware `hw` (a preset when there is no GPU: what precompiling for a serving machine selects).
GemmConfig select_config_on(const GemmDesc& desc, const HardwareModel& hw, const GemmOptions& options);

}  // namespace tilegemm
