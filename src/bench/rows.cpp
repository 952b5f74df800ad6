// Derived rates of one report row and the summary over rows (geometric mean and minimum of the ratios).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench/bench.hpp"

namespace tilegemm {

namespace {
double per_us(double amount, const BenchStats& s) {
  return s.samples > 0 && s.median_us > 0 ? amount / s.median_us : 0;
}
}  // namespace

// amount / µs × 1e-6 = TFLOP/s for FLOPs; bytes / µs × 1e-3 = GB/s.
double BenchRow::ours_tflops() const {
  return per_us(flops, ours) * 1e-6;
}
double BenchRow::ours_gbps() const {
  return per_us(min_bytes, ours) * 1e-3;
}
double BenchRow::ours_pct_floor() const {
  return per_us(floor_us, ours) * 100.0;
}
double BenchRow::ours_pct_b_read() const {
  return has_b_read() ? per_us(b_read.median_us, ours) * 100.0 : 0;
}
double BenchRow::cublas_tflops() const {
  return per_us(flops, cublas) * 1e-6;
}
double BenchRow::cublas_per_tensor_tflops() const {
  return per_us(flops, cublas_per_tensor) * 1e-6;
}

double BenchRow::ratio() const {
  if (!has_ours() || !has_cublas() || ours.median_us <= 0) return 0;
  return cublas.median_us / ours.median_us;
}

double BenchRow::intensity() const {
  return min_bytes > 0 ? flops / min_bytes : 0;
}

std::string BenchRow::shape_label() const {
  if (kind == "dense") return fmt::format("{}x{}x{}", m, n, k);
  return fmt::format("{}x{}x{}x{}", groups, groups > 0 ? m / groups : m, n, k);
}

BenchSummary summarize_rows(const std::vector<BenchRow>& rows) {
  BenchSummary s;
  double log_sum = 0, log_sum_b_read = 0;
  s.min_ratio = std::numeric_limits<double>::infinity();
  for (const auto& row : rows) {
    // A row with an error (e.g. a failed sanity check) has no trustworthy ratio.
    if (!row.error.empty()) {
      ++s.errors;
      continue;
    }
    if (row.has_ours() && row.has_b_read()) ++s.b_read_compared, log_sum_b_read += std::log(row.ours_pct_b_read());
    const double r = row.ratio();
    if (r <= 0) continue;
    ++s.compared;
    log_sum += std::log(r);
    if (r < s.min_ratio) s.min_ratio = r, s.min_ratio_shape = row.shape_label();
  }
  if (s.b_read_compared > 0) s.geomean_pct_b_read = std::exp(log_sum_b_read / s.b_read_compared);
  if (s.compared == 0) {
    s.min_ratio = 0;
    return s;
  }
  s.geomean_ratio = std::exp(log_sum / s.compared);
  return s;
}

std::vector<MaskedVsContiguous> masked_vs_contiguous(const std::vector<BenchRow>& rows) {
  const auto usable = [](const BenchRow& r) { return r.error.empty() && r.has_ours(); };
  std::vector<MaskedVsContiguous> out;
  for (const auto& masked : rows) {
    if (masked.kind != "m_grouped_masked" || !usable(masked)) continue;
    for (const auto& twin : rows)
      if (twin.kind == "m_grouped_contiguous" && usable(twin) && twin.groups == masked.groups && twin.m == masked.m &&
          twin.n == masked.n && twin.k == masked.k && twin.dtype == masked.dtype) {
        out.push_back({masked.shape_label(), masked.ours.median_us, twin.ours.median_us,
                       masked.ours.median_us / twin.ours.median_us});
        break;
      }
  }
  return out;
}

std::string compact_config(const GemmConfig& c) {
  return fmt::format("{}x{}x{} st{} wg{} cl{}x{} sk{}", c.block_m, c.block_n, c.block_k, c.stages,
                     c.num_math_warpgroups, c.cluster_m, c.cluster_n, c.split_k);
}

}  // namespace tilegemm
