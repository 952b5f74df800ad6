#pragma once
// The CUDA-graph timer backend (TimerBackend::kCudaGraph). Internal to src/bench; bench() calls it after
// the shared first call, estimate and warm-up.
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "tilegemm/timer.hpp"

namespace tilegemm::bench_detail {

// A non-blocking stream owned by the harness for `device`, created on first use and kept for the
// process (per-stream library state such as cuBLASLt's workspace is then set up once, not per shape).
cudaStream_t capture_stream(int device);

// Captures plan.calls_per_graph calls of `fn` on `stream` into one graph, then per replay: flush (outside
// the timed region), event, graph launch, event. Returns one sample per replay: its time / calls, in µs.
std::vector<double> time_with_graph(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream,
                                    const GraphPlan& plan, const std::function<void()>& flush_l2);

}  // namespace tilegemm::bench_detail
