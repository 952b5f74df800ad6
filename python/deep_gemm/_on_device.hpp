#pragma once
// How a binding runs a library call: with the tensors' device current in this module's CUDA runtime (cudart is
// linked statically, so torch's current device is not ours), without the GIL (a kernel's first call JIT-compiles
// it), and with the library's InvalidArgument renamed to the Python API's argument names. Without a GPU nothing is
// switched: the call checks its arguments and then fails with "no GPU" from the library.
#include <nanobind/nanobind.h>

#include "_device_scope.hpp"
#include "_plan.hpp"

namespace deep_gemm_ext {

template <typename Fn>
void on_device(int device, const Renames& renames, Fn&& fn) {
  require_device(device);
  const DeviceScope scope(device);
  nanobind::gil_scoped_release release;
  try {
    fn();
  } catch (const tilegemm::InvalidArgument& e) {
    nanobind::gil_scoped_acquire acquire;
    rethrow_renamed(e, renames);
  }
}

}  // namespace deep_gemm_ext
