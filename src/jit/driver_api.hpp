#pragma once
// The few CUDA driver functions the launcher needs, resolved at run time through the runtime's
// cudaGetDriverEntryPointByVersion: the library never links libcuda, so it loads (and compiles kernels) on a
// machine without a driver. cuda.h is included for its types only.
#include <cuda.h>

#include <string>

namespace tilegemm::jit {

struct DriverApi {
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;
  decltype(&::cuOccupancyMaxActiveClusters) cuOccupancyMaxActiveClusters = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;  // kernel families encode TMA maps
};

// Resolves the entry points once per process. Throws RuntimeError (prefixed with `who`) when there is no
// usable driver or GPU; the error is not cached, so a later call may succeed.
const DriverApi& driver_api(const std::string& who);

// "CUDA_ERROR_INVALID_VALUE (invalid argument)"-style text for a driver status.
std::string driver_error_text(const DriverApi& api, CUresult status);

}  // namespace tilegemm::jit
