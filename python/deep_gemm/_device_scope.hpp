#pragma once
// The CUDA device a binding runs on. The extension links cudart statically, so torch's current device is not this
// module's: each call names its device, checked here and made current for the call. Without a GPU nothing is
// checked or switched: the call checks its arguments and the library then reports the missing GPU.
#include <cuda_runtime_api.h>

#include <string>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace deep_gemm_ext {

// InvalidArgument (ValueError in Python) unless `device` is a device index of this machine.
inline void require_device(int device) {
  const int count = tilegemm::cuda_device_count();
  if (count == 0) return;
  if (device < 0 || device >= count)
    throw tilegemm::InvalidArgument("device", fmt::format("a CUDA device index in [0, {})", count),
                                    std::to_string(device));
}

// `device` current for the scope, the previous one restored after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (previous_ == device) return;
    if (cudaSetDevice(device) != cudaSuccess)
      throw tilegemm::InvalidArgument("device", "a CUDA device this process can make current", std::to_string(device));
    switched_ = true;
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
};

}  // namespace deep_gemm_ext
