// Tile-level ledger: DRAM traffic of a tiling, shared memory, accumulator registers, occupancy, waves,
// split-K overhead.
#include <algorithm>
#include <climits>
#include <cmath>

#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

namespace {

constexpr int kWarpSize = 32;
constexpr double kAccumulatorBytes = 4;  // fp32 accumulation (int32 for integer GEMMs: same width)

void validate_tile(const TileShape& t) {
  TILEGEMM_REQUIRE(t.block_m > 0, "--block-m", "a positive integer", std::to_string(t.block_m));
  TILEGEMM_REQUIRE(t.block_n > 0, "--block-n", "a positive integer", std::to_string(t.block_n));
  TILEGEMM_REQUIRE(t.block_k > 0, "--block-k", "a positive integer", std::to_string(t.block_k));
  TILEGEMM_REQUIRE(t.stages > 0, "--stages", "a positive integer", std::to_string(t.stages));
  TILEGEMM_REQUIRE(t.threads > 0 && t.threads % kWarpSize == 0, "--threads", "a positive multiple of 32",
                   std::to_string(t.threads));
  TILEGEMM_REQUIRE(t.split_k > 0, "--split-k", "a positive integer", std::to_string(t.split_k));
  TILEGEMM_REQUIRE(t.regs_per_thread >= 0, "--regs", "0 (estimate) or a register count",
                   std::to_string(t.regs_per_thread));
}

}  // namespace

WaveStats wave_stats(std::int64_t work_units, std::int64_t slots) {
  TILEGEMM_REQUIRE(slots > 0, "num_sms", "a positive number of concurrent slots", std::to_string(slots));
  WaveStats w;
  w.work_units = work_units;
  w.slots = slots;
  if (work_units <= 0) return w;
  w.waves = ceil_div(work_units, slots);
  w.last_wave_units = work_units - (w.waves - 1) * slots;
  w.last_wave_utilisation = static_cast<double>(w.last_wave_units) / static_cast<double>(slots);
  w.efficiency = static_cast<double>(work_units) / static_cast<double>(w.waves * slots);
  return w;
}

std::int64_t output_tiles(const ProblemShape& shape, int block_m, int block_n) {
  const std::int64_t tiles_n = ceil_div(shape.n, block_n);
  if (shape.grouped) return (ceil_div(shape.m, block_m) + shape.batch - 1) * tiles_n;
  return ceil_div(shape.m, block_m) * tiles_n * shape.batch;
}

int accumulator_regs_per_thread(int block_m, int block_n, int threads) {
  return static_cast<int>(ceil_div(static_cast<std::int64_t>(block_m) * block_n, threads));
}

double smem_bytes_per_stage(const OperandDtypes& dtypes, int block_m, int block_n, int block_k) {
  return dtype_bytes(dtypes.a, static_cast<double>(block_m) * block_k) +
         dtype_bytes(dtypes.b, static_cast<double>(block_k) * block_n) +
         scale_factor_bytes(dtypes.sf_a, block_m, block_k) + scale_factor_bytes(dtypes.sf_b, block_n, block_k);
}

double tiled_ab_bytes(const ProblemShape& shape, const OperandDtypes& dtypes, int block_m, int block_n) {
  // A (and its scales) is streamed once per column of tiles, B once per row of tiles; no L2 reuse assumed.
  const double tiles_n = static_cast<double>(ceil_div(shape.n, block_n));
  const double problems_a = shape.grouped ? 1.0 : static_cast<double>(shape.batch);
  const double a_once = (dtype_bytes(dtypes.a, static_cast<double>(shape.m) * shape.k) +
                         scale_factor_bytes(dtypes.sf_a, shape.m, shape.k)) *
                        problems_a;
  const double b_once_one =
      dtype_bytes(dtypes.b, static_cast<double>(shape.n) * shape.k) + scale_factor_bytes(dtypes.sf_b, shape.n, shape.k);
  // Grouped: one B per group, read once per M tile of that group; their sum is the total M tile count.
  const double b_reads = shape.grouped
                             ? static_cast<double>(ceil_div(shape.m, block_m) + shape.batch - 1)
                             : static_cast<double>(ceil_div(shape.m, block_m)) * static_cast<double>(shape.batch);
  return a_once * tiles_n + b_once_one * b_reads;
}

OccupancyEstimate blocks_per_sm(const HardwareModel& hw, int threads, int regs_per_thread, double smem_bytes) {
  TILEGEMM_REQUIRE(threads > 0, "--threads", "a positive integer", std::to_string(threads));
  OccupancyEstimate o;
  const int gran = std::max(1, hw.reg_alloc_granularity);
  o.regs_per_thread = static_cast<int>(ceil_div(std::max(regs_per_thread, 1), gran) * gran);
  const int warps_per_block = static_cast<int>(ceil_div(threads, kWarpSize));

  // -1 = this hardware model has no such limit (e.g. no register file model for Ascend).
  o.by_registers = -1;
  if (hw.regs_per_sm > 0) {
    if (hw.max_regs_per_thread > 0 && regs_per_thread > hw.max_regs_per_thread) {
      o.by_registers = 0;
    } else {
      const int warps = hw.regs_per_sm / (o.regs_per_thread * kWarpSize);
      o.by_registers = warps / warps_per_block;
    }
  }
  o.by_smem = -1;
  if (hw.smem_per_sm_bytes > 0 && smem_bytes > 0) {
    const double per_block = smem_bytes + hw.smem_reserved_per_block_bytes;
    o.by_smem = smem_bytes > hw.smem_per_block_bytes ? 0 : static_cast<int>(hw.smem_per_sm_bytes / per_block);
  }
  o.by_threads = hw.max_threads_per_sm > 0 ? hw.max_threads_per_sm / threads : -1;
  o.by_hw_limit = hw.max_blocks_per_sm > 0 ? hw.max_blocks_per_sm : -1;

  o.blocks_per_sm = INT_MAX;
  const std::pair<int, const char*> limits[] = {{o.by_registers, "registers"},
                                                {o.by_smem, "shared memory"},
                                                {o.by_threads, "threads"},
                                                {o.by_hw_limit, "block limit"}};
  for (const auto& [value, name] : limits)
    if (value >= 0 && value < o.blocks_per_sm) o.blocks_per_sm = value, o.limiter = name;
  if (o.blocks_per_sm == INT_MAX) o.blocks_per_sm = 1, o.limiter = "none modelled";
  return o;
}

TileLedger tile_ledger(const ProblemShape& shape, const OperandDtypes& dtypes, const TileShape& tile,
                       const HardwareModel& hw) {
  validate_tile(tile);
  const ProblemLedger p = problem_ledger(shape, dtypes, hw);  // validates the shape
  const std::int64_t k_iters = ceil_div(shape.k, tile.block_k);
  TILEGEMM_REQUIRE(tile.split_k <= k_iters, "--split-k",
                   fmt::format("at most ceil(K / block_k) = {} (every slice needs one K step)", k_iters),
                   std::to_string(tile.split_k));
  TILEGEMM_REQUIRE(hw.num_sms > 0, "--num-sms", "a positive SM count", std::to_string(hw.num_sms));

  TileLedger t;
  t.tile = tile;
  t.ab_bytes = tiled_ab_bytes(shape, dtypes, tile.block_m, tile.block_n);
  t.output_bytes = p.bytes.c + p.bytes.d;
  t.naive_ab_bytes = p.naive_ab_bytes;

  // Split-K with a workspace: every slice writes an fp32 [M, N] partial and the reduction reads them all
  // back before writing D once (already in output_bytes). Seed 000 §4.1: bandwidth traded for parallelism.
  if (tile.split_k > 1) {
    const double problems = shape.grouped ? 1.0 : static_cast<double>(shape.batch);
    const double partials = static_cast<double>(tile.split_k) * shape.m * shape.n * kAccumulatorBytes * problems;
    t.splitk_extra_write_bytes = partials;
    t.splitk_extra_read_bytes = partials;
  }
  t.dram_bytes = t.ab_bytes + t.output_bytes + p.bytes.extra + t.splitk_extra_write_bytes + t.splitk_extra_read_bytes;
  t.traffic_over_minimum = t.dram_bytes / p.min_bytes;

  t.smem_per_stage = smem_bytes_per_stage(dtypes, tile.block_m, tile.block_n, tile.block_k);
  t.smem_total = t.smem_per_stage * tile.stages;
  t.smem_limit = hw.smem_per_block_bytes;
  t.smem_fits = hw.smem_per_block_bytes <= 0 || t.smem_total <= hw.smem_per_block_bytes;

  t.accum_regs_per_thread = accumulator_regs_per_thread(tile.block_m, tile.block_n, tile.threads);
  const int regs = tile.regs_per_thread > 0 ? tile.regs_per_thread : t.accum_regs_per_thread + kTileRegOverhead;
  t.regs_per_thread = regs;
  t.regs_limit = hw.max_regs_per_thread;
  t.regs_fit = hw.max_regs_per_thread <= 0 || regs <= hw.max_regs_per_thread;
  t.occupancy = blocks_per_sm(hw, tile.threads, regs, t.smem_total);

  t.tiles_m = shape.grouped ? ceil_div(shape.m, tile.block_m) + shape.batch - 1 : ceil_div(shape.m, tile.block_m);
  t.tiles_n = ceil_div(shape.n, tile.block_n);
  t.tiles = output_tiles(shape, tile.block_m, tile.block_n);
  // One resident tile per SM: the persistent schedule tilegemm's kernels use (occupancy.blocks_per_sm says
  // how many could co-reside if launched as a plain grid).
  t.waves = wave_stats(t.tiles * tile.split_k, hw.num_sms);
  return t;
}

std::string TileLedger::why_not_fit() const {
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  if (!smem_fits)
    add(fmt::format("shared memory {} B ({} stages x {} B) exceeds the {} B per-block limit", smem_total, tile.stages,
                    smem_per_stage, smem_limit));
  if (!regs_fit)
    add(tile.regs_per_thread > 0
            ? fmt::format("{} registers per thread exceed the limit of {}", regs_per_thread, regs_limit)
            : fmt::format("{} fp32 accumulators per thread (+{} overhead = {}) exceed the limit of {} registers",
                          accum_regs_per_thread, kTileRegOverhead, regs_per_thread, regs_limit));
  if (smem_fits && regs_fit && occupancy.blocks_per_sm <= 0)
    add(fmt::format("no block fits on an SM (limited by {})", occupancy.limiter));
  return why;
}

}  // namespace tilegemm
