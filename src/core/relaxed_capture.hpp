#pragma once
// One-time device allocations that may happen while the caller's stream is being captured into a CUDA graph.
// torch captures on a stream of its own, so a GEMM warmed up on the default stream still meets a fresh stream
// there. cudaMalloc is not a stream operation, but in the default (global) capture mode it invalidates every
// capture in progress; with this thread's mode relaxed for the call it is allowed.
#include <cuda_runtime_api.h>

namespace tilegemm {

template <class Fn>
cudaError_t with_relaxed_capture(Fn&& fn) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  const cudaError_t status = fn();
  cudaThreadExchangeStreamCaptureMode(&mode);  // back to the caller's mode
  return status;
}

}  // namespace tilegemm
