#pragma once
// The kernel timer backend (TimerBackend::kKernel): the GPU's own start and end timestamps of every kernel a
// timed call launches, read through CUPTI's activity API (what PyTorch's profiler and DeepGEMM's bench_kineto
// report). Launch gaps and the time between the call's kernels are not counted. Internal to src/bench; bench()
// calls it after the shared first call, estimate and warm-up.
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

namespace tilegemm::bench_detail {

// Per timed call: flush_l2() (not timed), then fn(stream) inside a CUPTI external-correlation range that tags
// the kernels it launches. Returns one sample per call: the sum of its kernels' durations, in µs. Throws
// RuntimeError when CUPTI cannot be loaded or used, or when a call launched no kernel the timer saw.
std::vector<double> time_kernels(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, int calls,
                                 const std::function<void()>& flush_l2);

}  // namespace tilegemm::bench_detail
