// bench(): do_bench's method with CUDA events. Per timed call: flush the L2 (zero the flush buffer, or with
// FlushMode::kRead read it, so every call starts with a cold L2), record start, run, record end — the flush sits
// outside the timed region. The graph backend shares the first call, estimate and warm-up, then hands over
// to time_with_graph(), the kernel timer to time_kernels().
#include <vector>

#include "timer/graph_timer.hpp"
#include "timer/kernel_timer.hpp"

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/timer.hpp"
#include "timer/device_buffer.hpp"
#include "timer/read_flush.hpp"

namespace tilegemm {

using bench_detail::cuda_check;
using bench_detail::DeviceBuffer;
using bench_detail::EventPool;

BenchResult bench(const std::function<void(cudaStream_t)>& fn, const BenchOptions& options) {
  TILEGEMM_REQUIRE(static_cast<bool>(fn), "fn", "a callable", "an empty std::function");
  TILEGEMM_REQUIRE(options.estimate_calls >= 1, "estimate_calls", ">= 1", std::to_string(options.estimate_calls));
  TILEGEMM_REQUIRE(options.flush_bytes >= 0, "--flush-bytes", ">= 0 (0 = 2 × L2, at least 256 MiB)",
                   std::to_string(options.flush_bytes));
  iteration_counts(1.0, options.warmup_ms, options.rep_ms);  // validates the budgets before any GPU work
  if (!gpu_available()) throw RuntimeError("no CUDA GPU found: bench() needs an NVIDIA GPU");

  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  int l2_bytes = 0, num_sms = 0;
  cuda_check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute(L2)");
  cuda_check(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute(SMs)");
  BenchResult result;
  result.flush_bytes = options.flush_bytes > 0 ? options.flush_bytes : default_flush_bytes(l2_bytes);
  DeviceBuffer flush(static_cast<std::size_t>(result.flush_bytes));
  // A graph cannot be captured on the legacy default stream; everything then runs on the harness's own
  // stream so that per-stream state (cuBLASLt's workspace) exists before the capture.
  const cudaStream_t stream = options.timer == TimerBackend::kCudaGraph && options.stream == nullptr
                                  ? bench_detail::capture_stream(device)
                                  : options.stream;
  auto flush_l2 = [&] {
    if (options.flush == FlushMode::kRead)
      bench_detail::read_flush(flush.get(), flush.bytes(), num_sms, stream);
    else
      cuda_check(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream), "cudaMemsetAsync(flush)");
  };

  // Estimate: as do_bench, the flush is part of each estimated call.
  {
    EventPool ev(2);
    if (options.flush == FlushMode::kRead) flush_l2();  // compiles and loads the flush kernel before any timing
    fn(stream);  // first call outside everything: JIT compile, module load, cuBLASLt heuristics
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(first call)");
    cuda_check(cudaEventRecord(ev[0], stream), "cudaEventRecord");
    for (int i = 0; i < options.estimate_calls; ++i) {
      flush_l2();
      fn(stream);
    }
    cuda_check(cudaEventRecord(ev[1], stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(ev[1]), "cudaEventSynchronize(estimate)");
    float total_ms = 0;
    cuda_check(cudaEventElapsedTime(&total_ms, ev[0], ev[1]), "cudaEventElapsedTime");
    result.estimate_ms = total_ms / options.estimate_calls;
  }
  result.iterations = iteration_counts(result.estimate_ms, options.warmup_ms, options.rep_ms);

  for (int i = 0; i < result.iterations.warmup; ++i) fn(stream);

  if (options.timer == TimerBackend::kCudaGraph) {
    const GraphPlan plan = graph_plan(result.iterations.rep);
    result.iterations.rep = plan.calls_per_graph * plan.replays;
    result.stats = summarize(bench_detail::time_with_graph(fn, stream, plan, flush_l2));
    return result;
  }

  const int reps = result.iterations.rep;
  if (options.timer == TimerBackend::kKernel) {
    result.stats = summarize(bench_detail::time_kernels(fn, stream, reps, flush_l2));
    return result;
  }
  EventPool ev(2 * static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    flush_l2();
    cuda_check(cudaEventRecord(ev[2 * i], stream), "cudaEventRecord(start)");
    fn(stream);
    cuda_check(cudaEventRecord(ev[2 * i + 1], stream), "cudaEventRecord(end)");
  }
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(timed calls)");
  std::vector<double> samples_us(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    samples_us[i] = 1e3 * ms;
  }
  result.stats = summarize(std::move(samples_us));
  return result;
}

}  // namespace tilegemm
