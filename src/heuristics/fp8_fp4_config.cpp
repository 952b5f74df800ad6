// The FP8 x FP4 GEMM's config: tokens per CTA, the ring depth shared memory allows, and K splits that fill the SMs
// when the output has fewer 64-row tiles than there are SMs (small M is bound by reading B: every SM should stream).
#include <algorithm>

#include <fmt/format.h>

#include "core/config_filter.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/fp8_fp4_params.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {
namespace {
// Stages past this many add no read-ahead a memory-bound stream needs (8 x 16 KB of B per CTA in flight).
constexpr int kFp8Fp4MaxStages = 8;
}  // namespace

Fp8Fp4GemmConfig select_fp8_fp4_gemm_config(int m, int n, int k, const HardwareModel& hw, int num_sms, int experts,
                                            bool mx) {
  TILEGEMM_REQUIRE(m > 0 && n > 0 && k > 0 && k % fp8_fp4::kScaleBlockK == 0, "k",
                   "positive sizes with K a multiple of 128", fmt::format("m {}, n {}, k {}", m, n, k));
  // TILEGEMM_CONFIG_FILTER (tests, tuning) may pin block_m, stages, split_k and k_groups.
  const SmallMPins pin = small_m_pins(env_config_filter());
  Fp8Fp4GemmConfig c;
  c.mx = mx;
  c.block_m = pin.block_m ? pin.block_m : m >= fp8_fp4::kMaxBlockM ? fp8_fp4::kMaxBlockM : (m + 7) / 8 * 8;
  // Four sets of consumer warps where they were measured (dense, FP4 B, small token blocks: heuristics.hpp).
  c.k_groups = pin.k_groups ? pin.k_groups : experts == 0 && !mx && c.block_m <= kSmallMKGroupsMaxBlockM ? 4 : 1;
  TILEGEMM_REQUIRE(c.block_m % 8 == 0 && c.block_m >= 8 && c.block_m <= fp8_fp4::kMaxBlockM &&
                       (c.k_groups == 1 || c.k_groups == 2 || c.k_groups == 4),
                   "TILEGEMM_CONFIG_FILTER", "block_m a multiple of 8 up to 64 and k_groups 1, 2 or 4",
                   fmt::format("block_m={} k_groups={}", c.block_m, c.k_groups));
  c.stages = pin.stages ? pin.stages : kFp8Fp4MaxStages;
  while (!pin.stages && c.stages > std::max(2, c.k_groups) &&
         fp8_fp4::smem_bytes(c.block_m, c.stages, mx, c.k_groups) > hw.smem_per_block_bytes)
    c.stages -= c.k_groups;
  c.smem_bytes = fp8_fp4::smem_bytes(c.block_m, c.stages, mx, c.k_groups);
  TILEGEMM_REQUIRE(c.stages >= 2 && c.stages % c.k_groups == 0, "TILEGEMM_CONFIG_FILTER",
                   "stages >= 2, a multiple of k_groups", fmt::format("stages={} k_groups={}", c.stages, c.k_groups));
  TILEGEMM_REQUIRE(c.smem_bytes <= hw.smem_per_block_bytes, "hw", "room for two pipeline stages in shared memory",
                   fmt::format("{} bytes per block ({} needed)", hw.smem_per_block_bytes, c.smem_bytes));
  c.experts = std::max(experts, 0);
  const int n_blocks = (n + fp8_fp4::kBlockN - 1) / fp8_fp4::kBlockN;
  if (c.experts > 0) {  // one CTA per (row block, expert), walking the expert's token blocks
    c.grid = n_blocks;
    return c;
  }
  const int tiles = n_blocks * ((m + c.block_m - 1) / c.block_m);
  const int stages_of_k = (k + fp8_fp4::kStageK - 1) / fp8_fp4::kStageK;
  // At least two stages per split, so each CTA still overlaps a load with its math.
  c.num_splits = pin.split_k ? pin.split_k : std::clamp(num_sms / std::max(tiles, 1), 1, std::max(1, stages_of_k / 2));
  TILEGEMM_REQUIRE(c.num_splits <= stages_of_k, "TILEGEMM_CONFIG_FILTER", "split_k up to one per 256 k",
                   fmt::format("split_k={} for K = {}", c.num_splits, k));
  c.grid = tiles * c.num_splits;
  return c;
}

std::string format_fp8_fp4_gemm_config(int m, int n, int k, const Fp8Fp4GemmConfig& c) {
  const std::string grid = c.experts > 0 ? fmt::format("{}x{}", c.grid, c.experts) : fmt::format("{}", c.grid);
  return fmt::format("{}_gemm m={} n={} k={}{} -> block_m={} stages={} splits={} k_groups={} grid={} smem={}",
                     c.mx ? "mxfp8" : "fp8_fp4", m, n, k, c.experts > 0 ? fmt::format(" experts={}", c.experts) : "",
                     c.block_m, c.stages, c.num_splits, c.k_groups, grid, c.smem_bytes);
}

}  // namespace tilegemm
