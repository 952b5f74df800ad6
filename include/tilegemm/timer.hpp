#pragma once
// Timing one callable, as triton's do_bench does: estimate the per-call time, derive warm-up and timed iteration
// counts from millisecond budgets, flush a buffer of at least twice the L2 before every timed call (outside the
// timed region), time each call and report the median. The `tilegemm bench` suites and `deep_gemm.bench` both time
// with it.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

namespace tilegemm {

// How the timed calls are measured.
//  - kCudaEvents (default, do_bench's method): flush, event, one call, event; one sample per call, so each
//    sample includes the launch gap between the start event and the kernel.
//  - kCudaGraph: the timed calls are captured back to back into a CUDA graph and the graph is replayed; one
//    sample = one replay's event time / the calls in it. Launch gaps are gone, and so is the per-call flush:
//    the buffer is zeroed once before each replay (outside the timed region), so only the first call of a
//    replay starts with a cold L2 — the graph numbers are closer to a steady-state stream of GEMMs.
//  - kKernel: flush, one call, as with events, but a sample is the GPU's own duration of the kernels the call
//    launched (summed when there are several), read from CUPTI activity records: what PyTorch's profiler and
//    DeepGEMM's bench_kineto report. The launch gap (~3.7 µs of an empty kernel under events on the H200) is
//    not in it. Needs libcupti at run time (TILEGEMM_CUPTI_LIBRARY).
enum class TimerBackend : int { kCudaEvents = 0, kCudaGraph = 1, kKernel = 2 };
std::string_view timer_backend_name(TimerBackend timer);  // "cuda-events" / "cuda-graph" / "cupti-kernel"
// Accepts "cuda-events"/"events", "cuda-graph"/"graph" and "cupti-kernel"/"kernel"; throws InvalidArgument
// naming `argument`.
TimerBackend parse_timer_backend(std::string_view name, const std::string& argument = "--timer");
// How the L2 is flushed before a timed call (always outside the timed region).
//  - kZero (default, do_bench's `cache.zero_()`): a memset of the flush buffer. It leaves the L2 full of dirty
//    lines, which a memory-bound call then writes back to HBM inside its timed region (10–30 MB measured on
//    the H200, docs/bench.md).
//  - kRead: a kernel reads the buffer without writing it: the operands are just as cold, and the L2 is clean.
enum class FlushMode : int { kZero = 0, kRead = 1 };
std::string_view flush_mode_name(FlushMode mode);  // "zero" / "read"
// Accepts "zero" and "read"; throws InvalidArgument naming `argument`.
FlushMode parse_flush_mode(std::string_view name, const std::string& argument = "--flush");
// One sentence on how and when the L2 flush happens under `timer`, recorded in reports.
std::string flush_policy(TimerBackend timer, std::int64_t flush_bytes, FlushMode mode = FlushMode::kZero);

struct BenchOptions {
  TimerBackend timer = TimerBackend::kCudaEvents;
  double warmup_ms = 25;         // warm-up budget (do_bench's `warmup`)
  double rep_ms = 200;           // timed budget (do_bench's `rep`)
  std::int64_t flush_bytes = 0;  // buffer flushed through L2 before each timed call; 0 = max(256 MiB, 2 × L2)
  FlushMode flush = FlushMode::kZero;
  int estimate_calls = 5;  // calls (each after a flush) used to estimate the per-call time
  cudaStream_t stream = nullptr;
};

struct BenchStats {
  int samples = 0;  // 0 = not measured
  double median_us = 0, mean_us = 0, min_us = 0, max_us = 0;
  double stddev_us = 0;  // population standard deviation: the spread of the samples
};

struct IterationCounts {
  int warmup = 0;
  int rep = 0;
};

// Upper bound on timed iterations: every timed call holds two CUDA events until the end of the run.
inline constexpr int kMaxBenchIterations = 100000;

// do_bench's rule: warmup = max(1, floor(warmup_ms / estimate_ms)), rep likewise, capped at
// kMaxBenchIterations. Throws InvalidArgument for a negative warm-up, a non-positive rep budget or a
// non-finite estimate.
IterationCounts iteration_counts(double estimate_ms, double warmup_ms, double rep_ms);

// Median (mean of the two middle values for an even count), mean, min, max and spread of the samples.
// Throws InvalidArgument when `samples_us` is empty.
BenchStats summarize(std::vector<double> samples_us);

// The relative run-to-run spread of a measurement: stddev / median (0 without samples). --compare treats a
// difference smaller than the larger spread of the two rows as noise.
double relative_spread(const BenchStats& stats);

// The graph backend's split of `rep` timed calls: `replays` samples (at most kGraphReplays) of
// `calls_per_graph` calls each (at most kMaxGraphCalls, so a graph stays a reasonable size). rep >= 1.
inline constexpr int kGraphReplays = 20;
inline constexpr int kMaxGraphCalls = 1000;
struct GraphPlan {
  int calls_per_graph = 1;
  int replays = 1;
};
GraphPlan graph_plan(int rep);

struct BenchResult {
  BenchStats stats;
  IterationCounts iterations;    // rep = timed calls (graph: calls_per_graph × replays)
  double estimate_ms = 0;        // per-call time estimate (flush included, as in do_bench)
  std::int64_t flush_bytes = 0;  // bytes actually zeroed before each timed call
};

// Default flush size for an L2 of `l2_bytes`: at least 2 × L2 and never less than 256 MiB (do_bench's size).
std::int64_t default_flush_bytes(std::int64_t l2_bytes);

// Times `fn` with options.timer. Events and kernel: on options.stream. Graph: on options.stream, or on a stream of its
// own when that is the legacy default stream (which cannot be captured); `fn` must then be capturable (no
// synchronisation inside). Throws RuntimeError when no GPU is present or a CUDA call fails,
// InvalidArgument for bad budgets.
BenchResult bench(const std::function<void(cudaStream_t)>& fn, const BenchOptions& options = {});

}  // namespace tilegemm
