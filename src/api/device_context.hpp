#pragma once
// What the operations need to know about the GPU they run on, read once per device.
#include "tilegemm/hw.hpp"

namespace tilegemm {

struct DeviceContext {
  int device = 0;
  HardwareModel hw;  // filled from the device (SM count, smem limits, ...)
};

// The context of the calling thread's current CUDA device. Throws RuntimeError when there is no GPU.
const DeviceContext& current_device_context();

}  // namespace tilegemm
