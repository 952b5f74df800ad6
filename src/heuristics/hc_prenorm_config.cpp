// The HC-prenorm split: a model of where the time of a memory-bound skinny GEMM goes, per K split.
//   A CTA streams its K slice through its SM in stages of 128 k; a stage takes as long as the copy engine needs for
//   its TMA box rows (two A boxes of the row block's 64 or 16 rows, out-of-bounds rows past M included, and four B
//   boxes of N rows: at small M that, not the bytes, is what a stage costs). A wave of `active` CTAs lasts as long
//   as the slower of its CTAs' streams and the wave's A bytes at the DRAM bandwidth, plus a CTA's fixed cost
//   (launch, epilogue) and its pipeline fill, which scales with the stage time. Splits the library chooses are summed
//   in the kernel (sm90_tf32_hc_prenorm_gemm.cuh): inside a cluster through distributed shared memory (two cluster
//   barriers and one round of remote loads), and across a row block's clusters by the last to arrive on each share of
//   the tile, which copies the clusters' sums of its share in one L2 round trip after its arrival's.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/config_filter.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hc_prenorm.hpp"
#include "tilegemm/hc_prenorm_params.hpp"

namespace tilegemm {
namespace {

// Fitted to kernel times (bench/reports/layout-helpers-and-hc-tail/, hc-small-m/): 1 to 32 caller splits of
// 13x24x28672 took about 5.3 us + 0.41 us per stage in 64-row blocks (224 box rows, H200) and 4.3 us + 0.23 us per
// stage in 16-row blocks (128 box rows, H100, whose times for 64-row blocks matched the H200's within 3%): a fixed
// part and 5.6 stage times of fill. One split of 8192x24x28672 read A at 0.8 of the datasheet bandwidth.
constexpr double kTmaRowNs = 1.78;       // one 128-byte TMA box row
constexpr double kCtaFixedUs = 2.8;      // a CTA's launch and epilogue beyond its stages
constexpr double kFillStages = 5.6;      // the pipeline's fill, in stage times (at most its stages)
constexpr double kDramEfficiency = 0.8;  // of the datasheet bandwidth, for the wave's reads of A
// The library's split sum (H100: 28 and 56 splits of 82-word tiles, 28 of 400-word ones, beyond the model's time
// for as many caller splits): 1.3 us plus the partials' bytes at 21 GB/s, the rate one CTA copies them in, zeroes
// them and adds them.
constexpr double kReduceLatencyUs = 1.3;
constexpr double kReduceBytesPerUs = 21e3;
// A cluster's sum in distributed shared memory: two cluster barriers and one round of remote loads. H100, one cluster
// of 8 holding the whole split: 6.4 us at 13x24x7168 and 6.8 at 137x24x7168 where the model says 6.2 (it is low
// by as much for the last-CTA sum: 7.0 and 7.9 against 6.7 and 7.0).
constexpr double kClusterSumUs = 0.5;
// Unpinned, the selector sums in a cluster only where one cluster holds the row block's whole split: the clusters'
// L2 sum beyond it measured 1.5-2.6 us slower than modelled (two clusters of 8: 7.9 us at 13x24x7168, 10.7 at
// 13x24x28672, against 6.4 and 9.1 modelled), so it is taken only when TILEGEMM_CONFIG_FILTER pins cluster_m. Two
// splits of 64-row blocks in a cluster of 2 (M = 4096): 4096x24x28672 106.0 -> 92.3 us, 4096x24x7168 33.2 either way.
constexpr int kUnpinnedMaxCluster = hc_prenorm::kMaxCluster;
constexpr int kMaxLibrarySplits = 64;
// 16-row blocks up to 256 rows: the model does not price B's reads from L2 (once per row block), and from there on
// 64-row blocks fill the SMs with four times fewer of them.
constexpr int kSmallBlockMaxM = 256;
constexpr int kMaxStages = 8;

int stages_that_fit(int n, int block_m, const HardwareModel& hw) {
  int stages = kMaxStages;
  while (stages > 2 && hc_prenorm::smem_bytes(n, stages, block_m) > hw.smem_per_block_bytes) --stages;
  return stages;
}

}  // namespace

double hc_prenorm_model_us(int m, int n, int k, int block_m, int splits, bool reduce, const HardwareModel& hw,
                           int num_sms, int cluster) {
  const int rows = std::min(m, block_m);
  const std::int64_t row_blocks = (m + block_m - 1) / block_m;
  const std::int64_t ctas = row_blocks * splits;
  const std::int64_t resident = std::max(1, num_sms / cluster) * cluster;  // whole clusters
  const std::int64_t waves = (ctas + resident - 1) / resident;
  const std::int64_t active = std::min<std::int64_t>(ctas, resident);
  const int k_blocks = (k + hc_prenorm::kBlockK - 1) / hc_prenorm::kBlockK;
  const int stages = (k_blocks + splits - 1) / splits;  // the longest slice
  const int box_rows = 2 * block_m + hc_prenorm::kConsumerWarps * n;
  const double stage_us = box_rows * kTmaRowNs * 1e-3, stream_us = stages * stage_us;
  const double a_cta = rows * (static_cast<double>(k) / splits) * 2;
  const double dram_us = active * a_cta / (kDramEfficiency * hw.hbm_bytes_per_s()) * 1e6;
  const double fill_us = std::min<double>(stages, kFillStages) * stage_us;
  double us = static_cast<double>(waves) * (std::max(stream_us, dram_us) + fill_us + kCtaFixedUs);
  if (reduce && splits > 1) {  // the partial tiles hold the row block's rows of A only (4 floats a word)
    const int words = (rows * (n + 1) + 3) / 4, clusters = splits / cluster;
    if (cluster > 1) us += kClusterSumUs;
    if (clusters > 1)
      us +=
          kReduceLatencyUs + static_cast<double>(clusters) * ((words + cluster - 1) / cluster) * 16 / kReduceBytesPerUs;
  }
  return us;
}

HcPrenormConfig select_hc_prenorm_config(int m, int n, int k, std::optional<int> num_splits, const HardwareModel& hw,
                                         int num_sms) {
  TILEGEMM_REQUIRE(m >= 0, "m", "a row count >= 0", fmt::format("{}", m));
  TILEGEMM_REQUIRE(n >= 8 && n <= 32 && n % 8 == 0, "n", "8, 16, 24 or 32 columns (B's rows)", fmt::format("{}", n));
  TILEGEMM_REQUIRE(k > 0, "k", "a reduction length > 0", fmt::format("{}", k));
  TILEGEMM_REQUIRE(num_sms > 0 && hw.num_sms > 0 && hw.hbm_gbps > 0, "hw",
                   "a hardware model with SMs and DRAM bandwidth",
                   fmt::format("{} ({} SMs asked, {} GB/s)", hw.name, num_sms, hw.hbm_gbps));
  const int k_blocks = (k + hc_prenorm::kBlockK - 1) / hc_prenorm::kBlockK;
  HcPrenormConfig c;
  c.m = m, c.n = n, c.k = k;
  if (num_splits)
    TILEGEMM_REQUIRE(*num_splits >= 1 && (static_cast<std::int64_t>(m) + 15) / 16 * *num_splits <= INT32_MAX,
                     "num_splits", "a split count >= 1 (None: chosen by the library)", fmt::format("{}", *num_splits));
  // The row block, split and cluster the model finds fastest; a library split must win clearly (it costs a
  // workspace). TILEGEMM_CONFIG_FILTER (tests, tuning) may pin block_m, and for the library's split split_k and
  // cluster_m.
  const ConfigFilter& filter = env_config_filter();
  const int pin_block_m = filter.value_of("block_m"), pin_splits = filter.value_of("split_k");
  const int pin_cluster = filter.value_of("cluster_m");
  TILEGEMM_REQUIRE(pin_block_m == 0 || pin_block_m == hc_prenorm::kSmallBlockM || pin_block_m == hc_prenorm::kBlockM,
                   "TILEGEMM_CONFIG_FILTER", "block_m 16 or 64 for tf32_hc_prenorm_gemm",
                   fmt::format("block_m={}", pin_block_m));
  const bool cluster_ok = pin_cluster <= hc_prenorm::kMaxCluster && (pin_cluster & (pin_cluster - 1)) == 0 &&
                          (pin_splits == 0 || pin_splits % std::max(pin_cluster, 1) == 0);
  TILEGEMM_REQUIRE(cluster_ok, "TILEGEMM_CONFIG_FILTER",
                   "cluster_m 1, 2, 4 or 8 dividing split_k for tf32_hc_prenorm_gemm",
                   fmt::format("cluster_m={} split_k={}", pin_cluster, pin_splits));
  double best = 0;
  bool chosen = false;
  for (const int block_m : {hc_prenorm::kSmallBlockM, hc_prenorm::kBlockM}) {
    if (pin_block_m ? block_m != pin_block_m : block_m == hc_prenorm::kSmallBlockM && m > kSmallBlockMaxM) continue;
    const auto consider = [&](int splits, bool reduce, int cluster) {
      const double us = hc_prenorm_model_us(m, n, k, block_m, splits, reduce, hw, num_sms, cluster);
      if (chosen && us >= (reduce ? 0.98 : 1.0) * best) return;
      chosen = true, best = us, c.block_m = block_m, c.num_splits = splits, c.reduce_in_kernel = reduce;
      c.cluster = cluster;
    };
    if (num_splits) {
      consider(*num_splits, false, 1);
      continue;
    }
    if (pin_splits <= 1 && pin_cluster <= 1) consider(1, false, 1);
    for (int s = 2; s <= std::max(pin_splits, std::min(k_blocks, kMaxLibrarySplits)); ++s) {
      if (pin_splits && s != pin_splits) continue;
      for (int cluster = 1; cluster <= std::min(s, hc_prenorm::kMaxCluster); cluster *= 2)
        if (s % cluster == 0 &&
            (pin_cluster ? cluster == pin_cluster : cluster == 1 || (cluster == s && cluster <= kUnpinnedMaxCluster)))
          consider(s, true, cluster);
    }
  }
  TILEGEMM_REQUIRE(chosen, "TILEGEMM_CONFIG_FILTER", "pins tf32_hc_prenorm_gemm can run with",
                   fmt::format("{} (m={} k={})", env().config_filter, m, k));
  c.caller_splits = num_splits.has_value();
  const std::int64_t row_blocks = (static_cast<std::int64_t>(m) + c.block_m - 1) / c.block_m;
  const int clusters = c.num_splits / c.cluster;
  c.stages = stages_that_fit(n, c.block_m, hw);
  c.smem_bytes = hc_prenorm::smem_bytes(n, c.stages, c.block_m);
  TILEGEMM_REQUIRE(c.smem_bytes <= hw.smem_per_block_bytes, "hw", "room for two pipeline stages in shared memory",
                   fmt::format("{} bytes per block ({} needed)", hw.smem_per_block_bytes, c.smem_bytes));
  c.grid = static_cast<int>(row_blocks * c.num_splits);
  const int slices = c.caller_splits ? c.num_splits : 1;
  c.bytes = 2.0 * m * k + 4.0 * n * k + 4.0 * slices * m * (n + 1);
  if (c.reduce_in_kernel && clusters > 1) c.bytes += 2.0 * clusters * m * (n + 1) * 4;  // clusters' sums, out and back
  c.floor_us = c.bytes / hw.hbm_bytes_per_s() * 1e6;
  c.predicted_us = best;
  return c;
}

std::string format_hc_prenorm_config(const HcPrenormConfig& c) {
  return fmt::format(
      "tf32_hc_prenorm_gemm m={} n={} k={} -> block_m={} splits={}{} grid={} stages={} smem={} | {:.1f} MB, "
      "floor {:.1f} us, model {:.1f} us",
      c.m, c.n, c.k, c.block_m, c.num_splits,
      c.caller_splits      ? " (caller's)"
      : c.reduce_in_kernel ? fmt::format(" (summed in the kernel, clusters of {})", c.cluster)
                           : "",
      c.grid, c.stages, c.smem_bytes, c.bytes / 1e6, c.floor_us, c.predicted_us);
}

}  // namespace tilegemm
