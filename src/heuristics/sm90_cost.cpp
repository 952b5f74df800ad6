// The cost model that ranks legal SM90 configs of both kernel families (BF16, and FP8 with its own ceilings). It is
// built on the performance ledger (tile counts, waves, tiled traffic, smem per stage) and the HardwareModel, plus a
// handful of named constants below; it predicts a time so that configs can be compared, and `tilegemm plan` prints
// every term.
//
//   per tile:  t_tile = max(t_mma, t_load, t_issue) + t_overhead
//     t_mma      = 2·bm·bn·K / (per-SM tensor peak × efficiency(bn, math warpgroups))
//     t_load     = operand bytes of the tile / the SM's share of L2→SM bandwidth (more share when the
//                  wave is partial, capped per SM and by the bytes the pipeline keeps in flight)
//     t_issue    = stages walked × (stage handshake + the warpgroup's wgmma chain of one stage): the floor
//                  of a consumer that waits for every stage (what bounds narrow small-M tiles)
//     t_overhead = fixed epilogue/prologue cost + the D tile written at the SM's share of HBM bandwidth
//   problem:   max(Σ waves t_tile, DRAM floor with the wave's panels reused in L2, compute floor) + launch
//   split-K / stream-K: the same per work unit (a tile's K sub-range: K/split_k, or T·K/CTAs per CTA for
//              stream-K) over waves of work units, plus the reduction: each cut part writes (or reduce-adds)
//              its fp32 tile in L2, and the last part reads the parts back before the D store.
#include <algorithm>
#include <cmath>

#include "heuristics/sm90_cost.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/gemm_params.hpp"  // d_chunk_bytes
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
// cuBLAS bf16 reaches 690–790 TFLOP/s on large shapes on the H200 (measured), of the 989
// dense peak: the best any kernel sustains on this power-limited part.
constexpr double kTensorEfficiencyCeiling = 0.78;
// One consumer warpgroup cannot overlap its wgmma waits with another's issue (an estimate, not measured).
constexpr double kSingleWarpgroupEfficiency = 0.9;
// Shared memory delivers 128 B/cycle/SM; wgmma reads both operands from it (A 64×16 and B bn×16 per
// m64nNk16), so narrow tiles become smem-bound: the efficiency factor below.
constexpr double kSmemBytesPerCycle = 128;
constexpr int kWgmmaM = 64, kWgmmaK = 16;
// L2→SM bandwidth: DeepGEMM's SM90 heuristic models ~6150 B/cycle for the whole chip and 64 B/cycle per SM;
// we keep the per-SM form so it scales with the SM count: ≈46.6 B/cycle/SM at 132 SMs, 64 B/cycle at most.
constexpr double kL2BytesPerCyclePerSm = 46.6;
// Measured on the H200: a partial wave did not let its SMs pull more than their full-wave share
// (64x32 tiles on 66 SMs were slower than 64x16 tiles on 132), so one SM's cap is the same share.
constexpr double kL2MaxBytesPerCycleOneSm = kL2BytesPerCyclePerSm;
// Latency one TMA load sees under load (L2 miss to HBM); the pipeline must keep bandwidth × latency bytes
// in flight (Little's law) or the SM's load rate drops below its share. Calibrated on the H200: 64x32 tiles with
// 6 stages (72 KB in flight) moved 1.38 MB per SM in 26.6 µs, i.e. 52 GB/s per SM → ≈1.4 µs.
constexpr double kLoadLatencyUs = 1.4;
// Achievable fraction of datasheet HBM bandwidth: the H200 copies at 4272 GB/s of its 4800 (measured).
constexpr double kHbmEfficiency = 4272.0 / 4800.0;
// Per tile: accumulator → smem → TMA store handshake and the scheduler's next-tile fetch (estimate).
constexpr double kTileFixedOverheadUs = 0.5;
// Once per kernel: launch and the first pipeline fill (does not change the ranking).
constexpr double kLaunchOverheadUs = 2.0;
// FP8 (block-scaled): DeepGEMM's 1D2D kernel sustains 1150–1265 TFLOP/s of the 1979 dense fp8 peak on the H200
// (measured), 0.64 against bf16's 0.78: the scaling of every K block's partials on the CUDA cores takes
// issue slots. With one consumer warpgroup nothing hides that promotion behind another warpgroup's wgmma
// (≈ bn cycles of FFMA per 2·bn cycles of wgmma): an estimate, not measured.
// Where the L2 power term below applies (M = 4096), the ceiling is 0.673: 256x128 tiles, with the power factor
// 0.951 of their L2 traffic, keep the 0.64 that DeepGEMM's numbers give.
constexpr double kFp8TensorEfficiencyCeiling = 0.64;
constexpr double kFp8PowerBoundEfficiencyCeiling = 0.673;
constexpr double kFp8SingleWarpgroupEfficiency = 0.7;
// Measured on the H200: tiles whose consumer warpgroups own 64 rows each (one sub-block: wgmma, wait, promote with
// nothing of their own in between) ran 20–30% below this model's compute time (128x128 grouped, 128x160 dense), while
// 256x128 tiles (two sub-blocks per warpgroup) matched it. Applied away from the power limit only: at M = 4096 the L2
// power term explains what was left of it once 128x160's K loop stopped choosing scales at run time (see
// kL2PowerSlope).
constexpr double kFp8SingleSubBlockEfficiency = 0.78;
// ... on compute-bound problems, up to this width. Measured on an H100 (random data, per SM and FLOP): 128x192 tiles
// ran as fast as 256x128 ones at M = 4096 on N = 2112 and 7168 (4096x2112x7168: 98.5 µs against the model's 150,
// 1.36x the 128x64 tiles it chose instead); on the H200 too 128x192 was the fastest tile at M = 2048 and 3072 on
// N = 2112 (bench/reports/fp8-tall-tile-width). Not measured where the weights' DRAM reads dominate (MoE decode), so
// there the penalty stays and keeps short tiles for few rows per group.
constexpr int kFp8SingleSubBlockMaxBlockN = 160;
// Power: the H200 runs GEMMs at its 700 W limit (SM clock 1980 → ~1600 MHz during a suite), so bytes moved from L2
// into the SMs cost tensor throughput. Measured: 128x256 tiles went from 748 to 792 TFLOP/s at 4096x4096x7168 when a
// 2-CTA cluster shared B (a sixth less L2 traffic per FLOP), and 128x256 beat 128x160 by more than the smem model
// explains. The efficiency falls linearly with a tile's L2 bytes per FLOP, 1/bm + 1/bn with a shared operand counted
// half, above the least any config reaches (128x256 sharing B): kL2PowerSlope fits the first measurement.
// FP8 follows the same slope (FP8 at M = 4096, per SM and FLOP against 256x128: 128x192 0.95–1.0, 128x128 0.91,
// 256x64 0.77; the factor predicts 0.97, 0.90, 0.79), but its clusters earn no credit: 2x1 clusters sharing B
// measured no faster than 1x1 at M = 4096 (within ±1%).
constexpr double kL2PowerSlope = 25.0;
constexpr double kL2PowerReference = 1.0 / 128 + 1.0 / 512;
// Memory-bound and balanced problems (the M <= 128 DeepSeek shapes) leave the tensor cores idle much of the
// time and do not meet the power limit: the factor applies when the compute floor is this many times the
// memory floor (M=4096 shapes: 8–37x; M=128: below 1).
constexpr double kPowerBoundComputeOverMemory = 4.0;
// FP8 masked problems of at least this many expected rows per group are costed as power-bound ones (L2 factor and
// ceiling, no single-sub-block penalty), although their floors say balanced: measured (H200) their 128-row tiles
// ran faster the wider they were, as the L2 factor predicts (16x256x4096x7168: 128x96 501, 128x128 426, 128x160
// 380, 128x192 359 µs), and 64-row sub-blocks did not fall behind there.
constexpr int kMaskedL2BoundRows = 128;
// A cluster launch and its two cluster-wide barriers: 2x1 configs were 1.3–1.7 µs slower than 1x1 on one-wave
// M=128 shapes (same measurement).
constexpr double kClusterLaunchOverheadUs = 1.5;
// One consumer warpgroup's serial cost per pipeline stage, measured on the H200: BF16 64x2112x7168 with 64x16 tiles
// took 111 ns per 64-wide stage and 172 ns per 128-wide one (CUDA-graph time less a one-K-block run of the same
// kernel), and a build that issued neither loads nor wgmmas still took 44 ns per stage. So ≈ 50 ns of handshake
// (full-barrier wait, group commit and wait, release) per stage, plus ≈ 61 ns per 64-wide K atom: four m64nNk16
// wgmmas at no less than kWgmmaMinCycles each (bench/probes/wgmma_issue_rate.cu: 20–32 cycles for N = 16, 32 cycles
// at N = 64, then N/2: the tensor peak).
constexpr double kStageHandshakeUs = 0.050;
constexpr double kWgmmaMinCycles = 30;
// The load term above is pessimistic for these tiles: a build of that kernel that issued only the loads moved
// its 151 MB in 8.2 µs (hot L2) where the model says 13.45. The issue floor enters the max() on the same scale.
// With this factor the selector takes 128-wide stages where they measured faster (issue floor within ~25% of
// the load estimate: 64x16 and 64x32 tiles, 4–14% with a read-only flush, 0–8% with the default zero-fill one)
// and keeps 64-wide ones where fewer, larger stages measured slower (64x112, 64x192: −2.5 to −3.6%) — a fit to
// seven shapes, not a law. (64x64 tiles measured 3% faster with 128-wide stages on 64x7168x16384 and are not
// taken: no single factor also keeps 64x112.)
constexpr double kIssueFloorScale = 1.3;
// Fixed cost of one cut tile's hand-over (barrier, counter atomic, the fix-up's decision); an estimate.
constexpr double kSplitHandoverUs = 0.3;
// Raster group sizes the persistent scheduler supports (m-blocks walked together along N).
constexpr int kRasterGroups[] = {1, 2, 4, 8, 16};

double mma_efficiency(const GemmConfig& c, const HardwareModel& hw) {
  const double flops_per_wgmma = 2.0 * kWgmmaM * c.block_n * kWgmmaK;
  const double smem_bytes_per_wgmma = (kWgmmaM + c.block_n) * kWgmmaK * 2.0;
  const double needed_bytes_per_cycle =
      smem_bytes_per_wgmma / flops_per_wgmma * hw.flop_per_cycle_bf16 * kTensorEfficiencyCeiling;
  double eff = kTensorEfficiencyCeiling * std::min(1.0, kSmemBytesPerCycle / needed_bytes_per_cycle);
  if (c.num_math_warpgroups == 1) eff *= kSingleWarpgroupEfficiency;
  return eff;
}

// Fraction of the tensor ceiling left after the power the tile's L2→SM traffic takes (see kL2PowerSlope).
double l2_power_factor(const GemmConfig& c, bool multicast_credit) {
  const double bn = c.block_n * (multicast_credit && c.multicast == MulticastSide::kB ? 2.0 : 1.0);
  const double excess = std::max(0.0, 1.0 / c.block_m + 1.0 / bn - kL2PowerReference);
  return std::max(0.5, 1.0 - kL2PowerSlope * excess);
}

}  // namespace

ProblemShape sm90_problem_shape(const GemmDesc& desc) {
  ProblemShape s;
  s.n = desc.n;
  s.k = desc.k;
  switch (desc.type) {
    case GemmType::kNormal:
    case GemmType::kBatchReduced:  // one [M, N, ΣK] problem: desc.k is the sum of the batches' K
      s.m = desc.m;
      break;
    case GemmType::kBatched:
      s.m = desc.m, s.batch = desc.num_groups;
      break;
    case GemmType::kMGroupedContiguous:
      // The prefix-sum layout's hint: the groups' rows are about expected_m each, the rest of M is room.
      s.m = desc.use_psum_layout && desc.expected_m > 0
                ? std::min<std::int64_t>(desc.m, static_cast<std::int64_t>(desc.expected_m) * desc.num_groups)
                : desc.m;
      s.batch = desc.num_groups, s.grouped = true;
      break;
    case GemmType::kMGroupedMasked:
      // Each group is its own [expected_m, N, K] problem with its own B: the batched shape.
      s.m = desc.expected_m > 0 ? desc.expected_m : desc.m, s.batch = desc.num_groups;
      break;
    case GemmType::kKGroupedContiguous:
      s.m = desc.m, s.batch = desc.num_groups;
      break;
  }
  return s;
}

OperandDtypes sm90_operand_dtypes(const GemmDesc& desc) {
  OperandDtypes d;
  d.a = desc.a_dtype;
  d.b = desc.b_dtype;
  d.d = d.c = desc.d_dtype;
  d.with_c = desc.with_c;
  return d;
}

std::int64_t sm90_output_tiles(const ProblemShape& shape, int block_m, int block_n) {
  if (!shape.grouped) return output_tiles(shape, block_m, block_n);
  // Contiguous groups are padded to 128 rows: with block_m <= 128 no tile straddles two groups and the total
  // is exact (the ledger's grouped estimate adds a straddle tile per group boundary).
  ProblemShape flat = shape;
  flat.grouped = false;
  flat.batch = 1;
  std::int64_t tiles = output_tiles(flat, block_m, block_n);
  // FP8's 256-row tiles: a tile whose halves hold two groups runs two passes, i.e. costs one tile more. Where
  // the boundaries fall is known only on the device; each lands mid-tile about half the time. (Many small
  // groups therefore keep 128-row tiles.)
  if (block_m > kContiguousGroupRowAlignment && shape.batch > 1)
    tiles += shape.batch / 2 * ceil_div(shape.n, static_cast<std::int64_t>(block_n));
  return tiles;
}

int choose_raster_group(const ProblemShape& shape, int block_m, int block_n, int num_sms) {
  // A wave of num_sms tiles covers rg m-blocks × num_sms/rg n-blocks; DRAM reads per wave are proportional
  // to rg·bm + (num_sms/rg)·bn, smallest when the two panels are about equally tall.
  const std::int64_t m_blocks = ceil_div(shape.m, block_m);
  int best = 1;
  double best_footprint = 0;
  for (int rg : kRasterGroups) {
    if (rg > 1 && rg > m_blocks) break;
    const double footprint = static_cast<double>(rg) * block_m + static_cast<double>(ceil_div(num_sms, rg)) * block_n;
    if (best == 1 && rg == 1) best_footprint = footprint;
    if (footprint <= best_footprint) best = rg, best_footprint = footprint;
  }
  return best;
}

// A masked (or hinted prefix-sum) problem's expected_m is a mean: the rows of each group spread around it (DeepGEMM's
// tests draw int(expected_m * U(0.7, 1.3)), a router's counts spread alike), and each group's last tile is partly
// padding. Tiles averaged over that spread, so tall tiles pay for the rows they leave empty.
namespace {
std::int64_t masked_tiles(const GemmDesc& desc, int block_m, int block_n) {
  constexpr int kSamples = 64;
  constexpr double kLow = 0.7, kHigh = 1.3;
  double m_blocks = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double rows = desc.expected_m * (kLow + (kHigh - kLow) * (i + 0.5) / kSamples);
    const auto r = std::clamp<std::int64_t>(static_cast<std::int64_t>(rows), 1, desc.m);
    m_blocks += static_cast<double>(ceil_div(r, static_cast<std::int64_t>(block_m)));
  }
  const double tiles = m_blocks / kSamples * desc.num_groups * static_cast<double>(ceil_div(desc.n, block_n));
  return std::max<std::int64_t>(1, std::llround(tiles));
}
}  // namespace

CostBreakdown sm90_cost(const GemmDesc& desc, const GemmConfig& c, const HardwareModel& hw,
                        const ProblemLedger& problem) {
  CostBreakdown r;
  const ProblemShape& shape = problem.shape;
  const OperandDtypes& dtypes = problem.dtypes;
  const double clock_hz = hw.sm_clock_mhz * 1e6;
  const double per_sm_peak = problem.peak_flops / hw.num_sms;

  r.num_sms = c.num_sms;
  const bool hinted = desc.expected_m > 0 && (desc.type == GemmType::kMGroupedMasked || desc.use_psum_layout);
  r.tiles = hinted ? masked_tiles(desc, c.block_m, c.block_n) : sm90_output_tiles(shape, c.block_m, c.block_n);
  // Work units and the K blocks of each (see the schedulers in device/tilegemm/sched).
  const std::int64_t k_blocks = ceil_div(shape.k, c.block_k);
  r.work_units = r.tiles;
  r.unit_k_blocks = static_cast<double>(k_blocks);
  if (c.scheme == GemmScheme::kSplitK) {
    r.work_units = r.tiles * c.split_k;
    r.unit_k_blocks = static_cast<double>(k_blocks) / c.split_k;
  } else if (c.scheme == GemmScheme::kStreamK) {
    r.work_units = std::min<std::int64_t>(c.num_sms, r.tiles * k_blocks);
    r.unit_k_blocks = static_cast<double>(r.tiles * k_blocks) / static_cast<double>(r.work_units);
  }
  const double k_fraction = r.unit_k_blocks / static_cast<double>(k_blocks);  // of a whole tile's K
  const WaveStats waves = wave_stats(r.work_units, c.num_sms);
  r.waves = waves.waves;
  r.last_wave_util = waves.last_wave_utilisation;
  r.flops = problem.flops;
  r.smem_bytes = sm90_smem_bytes(desc, c);
  r.smem_per_stage_bytes = static_cast<int>(smem_bytes_per_stage(dtypes, c.block_m, c.block_n, c.block_k));
  r.acc_regs_per_thread = accumulator_regs_per_thread(c.rows_per_math_warpgroup(), c.block_n, 128);

  // Only a problem far from its memory floor keeps the tensor cores busy long enough to meet the power limit;
  // there L2 traffic costs tensor throughput and (BF16 only, see kL2PowerSlope) multicast pays.
  // FP8: measured for the 1D2D recipe only; 1D1D (fp32 D) promotes with per-column scales and keeps the
  // constants it had.
  const bool fp8 = is_fp8_desc(desc);
  const bool fp8_1d1d = fp8 && desc.d_dtype == DType::kFloat32;
  const bool masked_l2_bound = fp8 && desc.type == GemmType::kMGroupedMasked && desc.expected_m >= kMaskedL2BoundRows;
  const bool l2_power_model =
      !fp8_1d1d && (masked_l2_bound || problem.compute_floor_s > kPowerBoundComputeOverMemory * problem.memory_floor_s);
  const bool multicast_credit = l2_power_model && !fp8;

  // Operand bytes one tile pulls through L2. A 2-CTA cluster loads the shared B tile once for both CTAs.
  // NOTE: measured on the H200, sharing B did not speed up any M=128 shape (one wave of
  // 64-row tiles: 1.3–1.7 µs slower), so away from the power limit the model gives multicast no L2 credit;
  // nor for FP8 (see kL2PowerSlope).
  const double a_bytes = dtype_bytes(dtypes.a, static_cast<double>(c.block_m) * c.block_k) * k_blocks;
  double b_bytes = dtype_bytes(dtypes.b, static_cast<double>(c.block_n) * c.block_k) * k_blocks;
  const double unshared_bytes = a_bytes + b_bytes;
  if (c.multicast == MulticastSide::kB) b_bytes /= 2;
  // A split-K / stream-K work unit loads its K share of that. Multicast halves what the CTA pulls through L2,
  // not what lands in its shared memory: the latency-bound rate (stages in flight) applies to the latter.
  const double tile_load_bytes = (multicast_credit ? a_bytes + b_bytes : unshared_bytes) * k_fraction;
  const double tile_received_bytes = unshared_bytes * k_fraction;
  r.l2_to_sm_bytes = tiled_ab_bytes(shape, dtypes, c.block_m, c.block_n) * ((a_bytes + b_bytes) / unshared_bytes);

  r.mma_efficiency = mma_efficiency(c, hw);
  const double power_factor = l2_power_model ? l2_power_factor(c, multicast_credit) : 1.0;
  r.mma_efficiency *= power_factor;
  const double fp8_ceiling = l2_power_model ? kFp8PowerBoundEfficiencyCeiling : kFp8TensorEfficiencyCeiling;
  if (fp8) {
    r.mma_efficiency *= fp8_ceiling / kTensorEfficiencyCeiling;
    if (c.num_math_warpgroups == 1) r.mma_efficiency *= kFp8SingleWarpgroupEfficiency / kSingleWarpgroupEfficiency;
    const bool compute_bound = problem.compute_floor_s > problem.memory_floor_s;
    if (c.rows_per_math_warpgroup() == 64 && !l2_power_model &&
        (c.block_n <= kFp8SingleSubBlockMaxBlockN || !compute_bound))
      r.mma_efficiency *= kFp8SingleSubBlockEfficiency;
  }
  r.tile_compute_us =
      2.0 * c.block_m * c.block_n * static_cast<double>(shape.k) * k_fraction / (per_sm_peak * r.mma_efficiency) * 1e6;
  // Each consumer warpgroup issues one wgmma per 64-row sub-block and 16-wide K slice, each taking N/2 cycles
  // at the tensor peak but no less than kWgmmaMinCycles. NOTE: BF16 only. An FP8 stage also promotes its
  // partials on the CUDA cores (221 ns per stage measured for 64x16 tiles); that cost is not calibrated yet, and FP8
  // keeps the choices it measured.
  if (!fp8) {
    const int sub_blocks = c.rows_per_math_warpgroup() / kWgmmaM;
    const double wgmma_cycles = std::max(kWgmmaMinCycles, c.block_n / 2.0);
    // An int8 wgmma takes 32 K elements in the cycles a bf16 one takes 16.
    const int slice_k = desc.a_dtype == DType::kInt8 ? 2 * kWgmmaK : kWgmmaK;
    const double stage_wgmma_us =
        sub_blocks * (c.block_k / static_cast<double>(slice_k)) * wgmma_cycles / clock_hz * 1e6;
    r.tile_issue_us = std::ceil(r.unit_k_blocks) * (kStageHandshakeUs + stage_wgmma_us);
  }

  const double in_flight_bytes =
      std::min(static_cast<double>(c.stages), std::ceil(r.unit_k_blocks)) * r.smem_per_stage_bytes;
  const double latency_rate = in_flight_bytes / (kLoadLatencyUs * 1e-6);
  const double hbm_rate = hw.hbm_bytes_per_s() * kHbmEfficiency;
  // The epilogue stores D in column chunks of 128, 64 or 32 bytes (the widest that divides a D row); narrow
  // chunks mean more, smaller TMA stores, counted here as proportionally more bytes to move.
  const int d_elem_bytes = dtype_bits(dtypes.d) / 8;
  const double store_inefficiency = std::sqrt(128.0 / d_chunk_bytes(c.block_n, d_elem_bytes));
  double d_tile_bytes =
      dtype_bytes(dtypes.d, static_cast<double>(c.block_m) * c.block_n) * (dtypes.with_c ? 2 : 1) * store_inefficiency;
  // Cut tiles: every part writes (deterministic) or reduce-adds (atomics) an fp32 tile into L2 and the last
  // one reads the parts back (deterministic: all of them; atomics: the one reduced slot, which it zeroes).
  // Counted as L2 bytes of the work unit; the D store of a cut tile happens once, by its last part.
  const double fp32_tile_bytes = 4.0 * c.block_m * c.block_n;
  double unit_l2_extra_bytes = 0;
  int cut_parts = 1;  // parts of a cut tile
  if (c.scheme == GemmScheme::kSplitK) cut_parts = c.split_k;
  if (c.scheme == GemmScheme::kStreamK)
    cut_parts = static_cast<int>(std::ceil(static_cast<double>(k_blocks) / std::max(1.0, r.unit_k_blocks))) + 1;
  if (c.scheme != GemmScheme::kDataParallel) {
    const double fixup_bytes = desc.deterministic ? fp32_tile_bytes * cut_parts : 2 * fp32_tile_bytes;
    if (c.scheme == GemmScheme::kSplitK) {
      // The fix-up runs after the last part's main loop: on the critical path of a one-wave split.
      unit_l2_extra_bytes = fp32_tile_bytes + fixup_bytes;
      d_tile_bytes /= c.split_k;
    } else {
      // A stream-K CTA cuts at most the tiles at the two ends of its range, and stores D for the tiles it
      // finishes (tiles / CTAs of them on average).
      unit_l2_extra_bytes = 2 * fp32_tile_bytes + fixup_bytes;
      d_tile_bytes *= static_cast<double>(r.tiles) / static_cast<double>(r.work_units);
    }
  }
  auto tile_time_us = [&](std::int64_t active, double* load_us, double* overhead_us) {
    const double l2_share = kL2BytesPerCyclePerSm * hw.num_sms * clock_hz / static_cast<double>(active);
    const double rate = std::min({l2_share, kL2MaxBytesPerCycleOneSm * clock_hz, latency_rate});
    *load_us = std::max(tile_load_bytes / std::min(l2_share, kL2MaxBytesPerCycleOneSm * clock_hz),
                        tile_received_bytes / latency_rate) *
               1e6;
    *overhead_us = kTileFixedOverheadUs + d_tile_bytes / (hbm_rate / static_cast<double>(active)) * 1e6;
    if (c.scheme != GemmScheme::kDataParallel) {
      r.reduction_us = kSplitHandoverUs + unit_l2_extra_bytes / rate * 1e6;
      *overhead_us += r.reduction_us;
    }
    // Loads and MMAs overlap, but not perfectly: a fraction of the shorter one shows (a tuning constant,
    // TILEGEMM_LOAD_OVERLAP_PENALTY, default 0 = perfect overlap).
    return std::max({r.tile_compute_us, *load_us, r.tile_issue_us * kIssueFloorScale}) +
           env().tune_load_overlap_penalty * std::min(r.tile_compute_us, *load_us) + *overhead_us;
  };
  const std::int64_t full_active = std::min<std::int64_t>(r.work_units, c.num_sms);
  const double full_tile_us = tile_time_us(full_active, &r.tile_load_us, &r.tile_overhead_us);
  double last_load_us = 0, last_overhead_us = 0;
  const double last_tile_us =
      tile_time_us(std::max<std::int64_t>(waves.last_wave_units, 1), &last_load_us, &last_overhead_us);
  const bool last_is_partial = waves.last_wave_units < waves.slots && r.waves > 0;
  r.mainloop_us =
      static_cast<double>(r.waves - (last_is_partial ? 1 : 0)) * full_tile_us + (last_is_partial ? last_tile_us : 0.0);

  // DRAM: the wave's A and B panels are read from HBM once per wave and reused through L2.
  const std::int64_t m_blocks = ceil_div(shape.m, c.block_m), n_blocks = ceil_div(shape.n, c.block_n);
  const std::int64_t wave_m_blocks = std::min<std::int64_t>(c.raster_group, m_blocks);
  const std::int64_t wave_n_blocks = std::min<std::int64_t>(ceil_div(c.num_sms, c.raster_group), n_blocks);
  const double wave_ab = tiled_ab_bytes(shape, dtypes, static_cast<int>(wave_m_blocks * c.block_m),
                                        static_cast<int>(wave_n_blocks * c.block_n));
  r.dram_bytes = std::max(wave_ab, problem.bytes.ab()) + problem.bytes.c + problem.bytes.d;
  // The partials stay in L2 while the workspace fits in half of it; beyond that they go through HBM (the
  // ledger's split-K extra write + read).
  if (c.scheme != GemmScheme::kDataParallel) {
    const int grid = static_cast<int>(std::min<std::int64_t>(c.num_sms, r.work_units));
    r.workspace_bytes = static_cast<double>(sm90_split_workspace(desc, c, grid).total_bytes());
    if (r.workspace_bytes > hw.l2_bytes / 2)
      r.dram_bytes += 2.0 * fp32_tile_bytes * static_cast<double>(r.tiles) * (cut_parts - 1);
  }
  r.dram_floor_us = r.dram_bytes / hbm_rate * 1e6;
  r.compute_floor_us =
      problem.flops / (problem.peak_flops * (fp8 ? fp8_ceiling : kTensorEfficiencyCeiling) * power_factor) * 1e6;

  r.bound = "tiles";
  double t = r.mainloop_us;
  if (r.dram_floor_us > t) t = r.dram_floor_us, r.bound = "dram";
  if (r.compute_floor_us > t) t = r.compute_floor_us, r.bound = "compute";
  r.predicted_us = t + kLaunchOverheadUs + (c.cluster_m * c.cluster_n > 1 ? kClusterLaunchOverheadUs : 0.0);
  r.predicted_tflops = problem.flops / (r.predicted_us * 1e-6) / 1e12;
  return r;
}

CostBreakdown estimate_sm90_cost(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw) {
  const GemmDesc run = kernel_problem(desc, config);  // a swap-AB config's block sizes are the swapped problem's
  const ProblemLedger problem = problem_ledger(sm90_problem_shape(run), sm90_operand_dtypes(run), hw);
  return sm90_cost(run, config, hw, problem);
}

}  // namespace tilegemm
