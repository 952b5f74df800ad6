// Pure statistics of the harness: iteration counts from millisecond budgets and the summary of samples.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tilegemm/errors.hpp"
#include "tilegemm/timer.hpp"

namespace tilegemm {

IterationCounts iteration_counts(double estimate_ms, double warmup_ms, double rep_ms) {
  TILEGEMM_REQUIRE(std::isfinite(warmup_ms) && warmup_ms >= 0, "--warmup-ms", "a finite number >= 0",
                   fmt::format("{}", warmup_ms));
  TILEGEMM_REQUIRE(std::isfinite(rep_ms) && rep_ms > 0, "--rep-ms", "a finite number > 0", fmt::format("{}", rep_ms));
  TILEGEMM_REQUIRE(std::isfinite(estimate_ms) && estimate_ms >= 0, "estimate_ms", "a finite number >= 0",
                   fmt::format("{}", estimate_ms));
  // A call too fast for the event resolution (estimate 0) gets the cap rather than a division by zero.
  auto count = [&](double budget_ms) {
    if (estimate_ms <= 0) return kMaxBenchIterations;
    const double n = std::floor(budget_ms / estimate_ms);
    return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxBenchIterations)));
  };
  return {count(warmup_ms), count(rep_ms)};
}

BenchStats summarize(std::vector<double> samples_us) {
  TILEGEMM_REQUIRE(!samples_us.empty(), "samples_us", "at least one sample", "none");
  std::sort(samples_us.begin(), samples_us.end());
  const std::size_t n = samples_us.size();
  BenchStats s;
  s.samples = static_cast<int>(n);
  s.median_us = n % 2 ? samples_us[n / 2] : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(n);
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  double squares = 0;
  for (double x : samples_us) squares += (x - s.mean_us) * (x - s.mean_us);
  s.stddev_us = std::sqrt(squares / static_cast<double>(n));
  return s;
}

std::int64_t default_flush_bytes(std::int64_t l2_bytes) {
  constexpr std::int64_t kTritonFlushBytes = 256LL << 20;
  return std::max(kTritonFlushBytes, 2 * l2_bytes);
}

}  // namespace tilegemm

namespace tilegemm {

double relative_spread(const BenchStats& stats) {
  return stats.samples > 0 && stats.median_us > 0 ? stats.stddev_us / stats.median_us : 0;
}

GraphPlan graph_plan(int rep) {
  TILEGEMM_REQUIRE(rep >= 1, "rep", ">= 1 timed call", std::to_string(rep));
  GraphPlan plan;
  plan.replays = std::min(rep, kGraphReplays);
  // Round up so that the replays together make at least `rep` calls, as the events backend would.
  plan.calls_per_graph = std::min((rep + plan.replays - 1) / plan.replays, kMaxGraphCalls);
  return plan;
}

}  // namespace tilegemm
