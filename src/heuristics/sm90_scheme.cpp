// Which way the SM90 kernels (BF16 and FP8) cut a problem across CTAs: data-parallel, split-K or stream-K — the grid it
// launches, the workspace a scheme needs, and the candidates the selector weighs (from the ledger's wave
// analysis: split K when the tiles cannot fill the SMs, stream-K when the last wave idles).
#include <algorithm>

#include <fmt/format.h>

#include "heuristics/sm90_cost.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
constexpr int kCounterAlignment = 256;
constexpr long long kStreamKMaxWaves = 2;
// Measured on the H200: on the 8 small-M DeepSeek shapes where the cost model chose split-K with wide tiles, narrow
// data-parallel tiles that fill the SMs were faster on every one (by 0.6–7.9 µs): the exposed fix-up tail costs
// more than the wider tiles save. So the selector cuts K on its own only when even the narrowest data-parallel
// tiling leaves most SMs idle.
constexpr int kNarrowestBlockM = 64, kNarrowestBlockN = 16;
constexpr double kAutoCutMaxFill = 0.5;
bool splittable_type(GemmType t) {
  return t == GemmType::kNormal || t == GemmType::kBatched || t == GemmType::kBatchReduced;
}

// Fraction of the SMs the narrowest data-parallel tiling keeps busy (capped at 1).
double narrowest_fill(const GemmDesc& desc, int num_sms) {
  long long tiles = ceil_div(desc.m, kNarrowestBlockM) * ceil_div(desc.n, kNarrowestBlockN);
  if (desc.type == GemmType::kBatched) tiles *= desc.num_groups;
  return std::min(1.0, static_cast<double>(tiles) / num_sms);
}
}  // namespace

const char* scheme_name(GemmScheme scheme) {
  switch (scheme) {
    case GemmScheme::kDataParallel:
      return "data-parallel";
    case GemmScheme::kSplitK:
      return "split-K";
    case GemmScheme::kStreamK:
      return "stream-K";
  }
  return "unknown";
}

long long sm90_tiles(const GemmDesc& desc, const GemmConfig& c) {
  long long tiles = ceil_div(desc.m, c.block_m) * ceil_div(desc.n, c.block_n);
  if (desc.type == GemmType::kBatched || desc.type == GemmType::kMGroupedMasked ||
      desc.type == GemmType::kKGroupedContiguous)
    tiles *= desc.num_groups;
  return tiles;
}

int sm90_grid_size(const GemmDesc& desc, const GemmConfig& c, int ctas_per_sm) {
  const long long tiles = sm90_tiles(desc, c);
  long long units = tiles;
  if (c.scheme == GemmScheme::kSplitK) units = tiles * c.split_k;
  if (c.scheme == GemmScheme::kStreamK) units = tiles * ceil_div(desc.k, c.block_k);
  if (desc.use_psum_layout) units = c.num_sms;  // the group sizes live on the device
  // A cluster of two takes pairs of m-blocks: the grid is a multiple of the cluster size.
  const int cluster = c.cluster_m;
  if (cluster > 1) {
    // Contiguous groups share the m-blocks of all rows; masked and batched problems repeat them per group.
    const long long groups = desc.type == GemmType::kMGroupedContiguous ? 1 : desc.num_groups;
    units =
        ceil_div(desc.m, static_cast<long long>(cluster) * c.block_m) * cluster * ceil_div(desc.n, c.block_n) * groups;
  }
  const long long slots = static_cast<long long>(c.num_sms) * ctas_per_sm;
  int grid = static_cast<int>(std::max<long long>(cluster, std::min<long long>(slots, units)));
  grid -= grid % cluster;
  // Balanced persistent grid: as few CTAs as give the same number of waves. 4096 tiles on 132 SMs take 32
  // waves whose last one keeps 4 SMs busy; 128 CTAs take the same 32 waves with every CTA equally loaded, and the
  // 4 idle SMs leave power to the others on this power-limited part. Masked problems only know an upper bound
  // of their work on the host; split-K / stream-K size their workspace by the grid and keep it whole.
  if (c.scheme == GemmScheme::kDataParallel && desc.type != GemmType::kMGroupedMasked && !desc.use_psum_layout) {
    const long long clusters = ceil_div(units, static_cast<long long>(cluster));
    const long long waves = ceil_div(clusters, static_cast<long long>(grid / cluster));
    grid = static_cast<int>(ceil_div(clusters, waves) * cluster);
  }
  return grid;
}

std::vector<WorkRange> sm90_launch_chunks(const GemmDesc& desc, const GemmConfig& c, int grid, int waves_per_launch) {
  const std::vector<WorkRange> one_launch(1);
  const bool m_grouped = desc.type == GemmType::kMGroupedContiguous || desc.type == GemmType::kMGroupedMasked;
  if (waves_per_launch <= 0 || !m_grouped || c.scheme != GemmScheme::kDataParallel) return one_launch;
  const long long slots = std::max(1, grid / c.cluster_m);  // work units one wave of the grid takes
  const long long n_blocks = ceil_div(desc.n, c.block_n);
  auto m_units = [&](long long rows) { return ceil_div(ceil_div(rows, c.block_m), c.cluster_m); };
  std::vector<WorkRange> out;
  if (desc.type == GemmType::kMGroupedContiguous && !desc.use_psum_layout) {
    // Per-row group index: tiles (pairs) are numbered over all rows, so any cut works.
    const long long units = m_units(desc.m) * n_blocks;
    const long long per_launch = waves_per_launch * slots;
    if (units <= per_launch) return one_launch;
    for (long long b = 0; b < units; b += per_launch)
      out.push_back({static_cast<int>(b), static_cast<int>(std::min(units, b + per_launch))});
    return out;
  }
  // Masked and prefix-sum problems are walked group by group: cut between groups. Their sizes live on the
  // device, so the cut uses expected_m (masked) or the mean group (prefix sum).
  const long long rows = desc.expected_m > 0                      ? desc.expected_m
                         : desc.type == GemmType::kMGroupedMasked ? desc.m
                                                                  : ceil_div(desc.m, desc.num_groups);
  const long long group_units = std::max(1LL, m_units(rows) * n_blocks);
  const long long groups_per_launch = std::max(1LL, (waves_per_launch * slots + group_units / 2) / group_units);
  if (groups_per_launch >= desc.num_groups) return one_launch;
  for (long long g = 0; g < desc.num_groups; g += groups_per_launch)
    out.push_back({static_cast<int>(g), static_cast<int>(std::min<long long>(desc.num_groups, g + groups_per_launch))});
  return out;
}

SplitWorkspaceLayout sm90_split_workspace(const GemmDesc& desc, const GemmConfig& c, int grid) {
  SplitWorkspaceLayout w;
  if (c.scheme == GemmScheme::kDataParallel) return w;
  w.tiles = sm90_tiles(desc, c);
  if (c.scheme == GemmScheme::kStreamK)
    w.tiles -= stream_k_whole_tiles<long long>(w.tiles, grid);  // only these are cut
  const std::size_t counters = static_cast<std::size_t>(w.tiles) * c.num_math_warpgroups * sizeof(int);
  w.counter_bytes = (counters + kCounterAlignment - 1) / kCounterAlignment * kCounterAlignment;
  w.slot_bytes = static_cast<std::size_t>(c.block_m) * c.block_n * sizeof(float);
  if (!desc.deterministic)
    w.slots = w.tiles;
  else
    w.slots = c.scheme == GemmScheme::kSplitK ? w.tiles * c.split_k : 2LL * grid;
  return w;
}

std::vector<SchemeChoice> sm90_scheme_choices(const GemmDesc& desc, const GemmConfig& base, const HardwareModel& hw) {
  const int forced = env().force_scheme;
  std::vector<SchemeChoice> out;
  if (forced < 0 || forced == 0) out.push_back({GemmScheme::kDataParallel, 1, ""});
  if (!splittable_type(desc.type) || base.cluster_m * base.cluster_n != 1) return out;

  // The ledger's wave analysis of this tile shape on the SMs the kernel gets.
  HardwareModel sms = hw;
  sms.num_sms = base.num_sms;
  const ProblemShape shape = sm90_problem_shape(desc);
  const VariantDecision v = choose_variant(shape, base.block_m, base.block_n, base.block_k, sms);
  const long long tiles = v.tiles, k_blocks = v.k_iters;

  // Split-K: every count from 2 up to what still fits one wave and keeps kMinKItersPerSplit K blocks per
  // slice (the ledger's suggestion is the largest); a forced count is taken as long as each slice has work.
  const bool auto_cut = forced < 0 && narrowest_fill(desc, base.num_sms) < kAutoCutMaxFill;
  const bool want_split = forced == 1 || (auto_cut && v.variant == Variant::kSplitK);
  if (want_split) {
    const int fixed = env().force_split_k;
    // Forced without a count: at least 2 slices even where the ledger would not split.
    const long long hi =
        fixed > 0 ? fixed : std::max<long long>(forced == 1 ? 2 : 0, std::min(v.suggested_split_k, 64));
    for (long long s = fixed > 0 ? fixed : 2; s <= hi; ++s) {
      if (s > k_blocks) break;
      out.push_back({GemmScheme::kSplitK, static_cast<int>(s),
                     fmt::format("split-K {}: {} tiles fill {:.0f}% of {} SMs, {} x {} = {} units of {:.1f} K blocks",
                                 s, tiles, 100.0 * tiles / base.num_sms, base.num_sms, tiles, s, tiles * s,
                                 static_cast<double>(k_blocks) / s)});
    }
  }
  // Stream-K: when the ledger sees the last wave idle more than kStreamKTailWaste of all slots, and the problem is
  // at most kStreamKMaxWaves waves. NOTE: with more waves the cost model is wrong about stream-K. Measured on the
  // H200, FP8 at M=4096 with the whole-tile waves first and only the tail shared: 12–25% slower than data-parallel
  // on all six DeepSeek shapes, where the model predicted up to 6.5% faster. In the shared tail the CTAs work at
  // unrelated K offsets, so those that share an operand panel no longer read it from L2 together; the model does
  // not see that, nor the fix-up's 128 KB of fp32 per cut 256x128 tile. Data-parallel keeps every large-M choice.
  if (forced == 2 || (auto_cut && v.variant == Variant::kStreamK && v.waves.waves <= kStreamKMaxWaves))
    out.push_back({GemmScheme::kStreamK, 1,
                   fmt::format("stream-K: {} tiles x {} K blocks over {} CTAs ({} waves, last {}/{} busy as tiles)",
                               tiles, k_blocks, std::min<long long>(base.num_sms, tiles * k_blocks), v.waves.waves,
                               v.waves.last_wave_units, base.num_sms)});
  return out;
}

}  // namespace tilegemm
