// The harness's pure arithmetic: statistics of samples and iteration counts from millisecond budgets.
#include <gtest/gtest.h>

#include "bench/bench.hpp"
#include "expect_invalid.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

TEST(BenchStats, OddCountMedianIsTheMiddleSample) {
  const BenchStats s = summarize({5.0, 1.0, 3.0, 2.0, 4.0});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_us, 3.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 3.0);
  EXPECT_DOUBLE_EQ(s.min_us, 1.0);
  EXPECT_DOUBLE_EQ(s.max_us, 5.0);
  EXPECT_DOUBLE_EQ(s.stddev_us, std::sqrt(2.0));  // population: mean of squared deviations = 10/5
}

TEST(BenchStats, EvenCountMedianAveragesTheTwoMiddleSamples) {
  const BenchStats s = summarize({10.0, 40.0, 20.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median_us, 30.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 42.5);
  EXPECT_DOUBLE_EQ(s.min_us, 10.0);
  EXPECT_DOUBLE_EQ(s.max_us, 100.0);
}

TEST(BenchStats, OneSampleHasNoSpread) {
  const BenchStats s = summarize({7.5});
  EXPECT_DOUBLE_EQ(s.median_us, 7.5);
  EXPECT_DOUBLE_EQ(s.stddev_us, 0.0);
}

TEST(BenchStats, EmptySamplesAreRejected) {
  EXPECT_THROW(summarize({}), InvalidArgument);
}

TEST(BenchIterations, FollowDoBenchFloorOfBudgetOverEstimate) {
  // 0.3 ms per call: 25 ms → 83 warm-up calls, 200 ms → 666 timed calls (floors, as do_bench's int()).
  const IterationCounts c = iteration_counts(0.3, 25, 200);
  EXPECT_EQ(c.warmup, 83);
  EXPECT_EQ(c.rep, 666);
}

TEST(BenchIterations, AtLeastOneCallEachEvenWhenOneCallExceedsTheBudget) {
  const IterationCounts c = iteration_counts(500, 25, 200);
  EXPECT_EQ(c.warmup, 1);
  EXPECT_EQ(c.rep, 1);
  EXPECT_EQ(iteration_counts(1.0, 0, 10).warmup, 1);  // a zero warm-up budget still warms once, as do_bench
}

TEST(BenchIterations, CappedForCallsTooFastToMeasure) {
  EXPECT_EQ(iteration_counts(0.0, 25, 200).rep, kMaxBenchIterations);
  EXPECT_EQ(iteration_counts(1e-9, 25, 200).rep, kMaxBenchIterations);
}

TEST(BenchIterations, BadBudgetsNameTheArgument) {
  try {
    iteration_counts(1.0, 25, 0);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--rep-ms");
  }
  try {
    iteration_counts(1.0, -1, 200);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--warmup-ms");
  }
  EXPECT_THROW(iteration_counts(std::nan(""), 25, 200), InvalidArgument);
}

TEST(BenchFlush, AtLeastTwiceL2AndNeverBelowDoBenchs256MiB) {
  EXPECT_EQ(default_flush_bytes(60LL << 20), 256LL << 20);  // H200: 2 × 60 MiB < 256 MiB
  EXPECT_EQ(default_flush_bytes(200LL << 20), 400LL << 20);
  EXPECT_EQ(default_flush_bytes(0), 256LL << 20);
}

TEST(BenchTimer, WithoutAGpuBenchThrowsRuntimeErrorNotACrash) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  bool called = false;
  EXPECT_THROW(bench([&](cudaStream_t) { called = true; }), RuntimeError);
  EXPECT_FALSE(called);
}

TEST(BenchTimer, EmptyCallableIsRejected) {
  EXPECT_THROW(bench(std::function<void(cudaStream_t)>{}), InvalidArgument);
}

TEST(BenchTimerBackend, NamesParseBothWaysAndBadNamesNameTheArgument) {
  EXPECT_EQ(parse_timer_backend("cuda-events"), TimerBackend::kCudaEvents);
  EXPECT_EQ(parse_timer_backend("events"), TimerBackend::kCudaEvents);
  EXPECT_EQ(parse_timer_backend("cuda-graph"), TimerBackend::kCudaGraph);
  EXPECT_EQ(parse_timer_backend("graph"), TimerBackend::kCudaGraph);
  EXPECT_EQ(timer_backend_name(TimerBackend::kCudaEvents), "cuda-events");
  EXPECT_EQ(timer_backend_name(TimerBackend::kCudaGraph), "cuda-graph");
  try {
    parse_timer_backend("wallclock", "--timer");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--timer");
    EXPECT_NE(std::string(e.what()).find("'wallclock'"), std::string::npos);
  }
}

TEST(BenchTimerBackend, FlushPolicySaysWhenTheL2IsCold) {
  EXPECT_EQ(flush_policy(TimerBackend::kCudaEvents, 256LL << 20), "256 MiB zeroed before each timed call");
  EXPECT_EQ(flush_policy(TimerBackend::kCudaGraph, 256LL << 20),
            "256 MiB zeroed once before each graph replay (only its first call starts cold)");
  EXPECT_EQ(flush_policy(TimerBackend::kCudaEvents, 256LL << 20, FlushMode::kRead),
            "256 MiB read (not written, the L2 left clean) before each timed call");
}

TEST(BenchFlushMode, NamesParseBothWaysAndBadNamesNameTheArgument) {
  EXPECT_EQ(parse_flush_mode("zero"), FlushMode::kZero);
  EXPECT_EQ(parse_flush_mode("read"), FlushMode::kRead);
  EXPECT_EQ(flush_mode_name(FlushMode::kZero), "zero");
  EXPECT_EQ(flush_mode_name(FlushMode::kRead), "read");
  EXPECT_EQ(BenchOptions{}.flush, FlushMode::kZero) << "do_bench's zero-fill stays the default";
  test_util::expect_invalid([] { parse_flush_mode("clean", "--flush"); }, "--flush", "'clean'");
}

TEST(BenchGraphPlan, SplitsTheTimedCallsIntoReplays) {
  // Fewer calls than replays: one call per replay, one sample per call as with events.
  EXPECT_EQ(graph_plan(1).replays, 1);
  EXPECT_EQ(graph_plan(1).calls_per_graph, 1);
  EXPECT_EQ(graph_plan(7).replays, 7);
  EXPECT_EQ(graph_plan(7).calls_per_graph, 1);
  // 2456 calls (cuBLAS on 64x2112x7168): 20 replays of ⌈2456 / 20⌉ = 123, never fewer calls than asked.
  const GraphPlan p = graph_plan(2456);
  EXPECT_EQ(p.replays, kGraphReplays);
  EXPECT_EQ(p.calls_per_graph, 123);
  EXPECT_GE(p.replays * p.calls_per_graph, 2456);
  // The cap keeps a graph at kMaxGraphCalls calls.
  EXPECT_EQ(graph_plan(kMaxBenchIterations).calls_per_graph, kMaxGraphCalls);
  EXPECT_THROW(graph_plan(0), InvalidArgument);
}

TEST(BenchTimer, GraphBackendWithoutAGpuThrowsRuntimeError) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  BenchOptions options;
  options.timer = TimerBackend::kCudaGraph;
  EXPECT_THROW(bench([](cudaStream_t) {}, options), RuntimeError);
}
