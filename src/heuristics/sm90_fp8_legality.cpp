// The SM90 FP8 kernel's constraints, in one place. The kernel (device/tilegemm/kernels/sm90_fp8_gemm.cuh) is
// written to exactly these rules; a config that passes here must compile and run there.
#include <numeric>

#include <fmt/format.h>

#include "heuristics/sm90_tile_rules.hpp"
#include "tilegemm/fp8_params.hpp"  // fp8_1d2d_sfb_stage_bytes, fp8_sfa_stage_bytes
#include "tilegemm/fp8_quant.hpp"   // kFp8ScaleBlock
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
// The math threads hold the scaled result (rows/64 × block_n/2 fp32) plus one K block of raw wgmma partials
// (block_n/2); beyond 192 of the 232 registers setmaxnreg gives them, addresses and scales spill.
constexpr int kMaxResultAndPartialRegs = 192;

int align128(int bytes) {
  return (bytes + 127) / 128 * 128;
}

// 1D2D: a tile may straddle at most two 128-wide scale blocks of B (block_n <= 128, or 144, 160, 192, 256).
bool fits_two_scale_blocks(int block_n) {
  return block_n <= kFp8ScaleBlock || block_n - kFp8ScaleBlock == std::gcd(block_n, kFp8ScaleBlock);
}
}  // namespace

int sm90_fp8_head_split_max_block_n(const HeadSplits& heads) {
  for (int block_n = 256; block_n >= 16; block_n -= 8)
    if (heads.left % block_n == 0 && heads.right % block_n == 0 && fits_two_scale_blocks(block_n)) return block_n;
  return 0;
}

int sm90_fp8_smem_bytes(const GemmDesc& desc, const GemmConfig& c) {
  const bool per_token_b = desc.d_dtype == DType::kFloat32;  // 1D1D
  // Scales per stage: A per token of each K block; B per token (1D1D) or the tile's block scales (1D2D).
  const int k_blocks = c.block_k / kFp8ScaleBlock;
  const long long per_stage = static_cast<long long>(c.block_m + c.block_n) * c.block_k +
                              fp8_sfa_stage_bytes(desc.sfa_layout, c.block_m, k_blocks) +
                              (per_token_b ? align128(c.block_n * 4) : fp8_1d2d_sfb_stage_bytes(k_blocks));
  const long long staging = static_cast<long long>(c.block_m) * c.block_n * (dtype_bits(desc.d_dtype) / 8);
  return static_cast<int>(c.stages * per_stage + staging + kSmemReserveBytes);
}

bool sm90_fp8_config_legal(const GemmDesc& desc, const GemmConfig& c, const HardwareModel& hw, std::string* why) {
  const bool per_token_b = desc.d_dtype == DType::kFloat32;
  if (c.swap_ab) return reject(why, "swap_ab runs plain BF16 GEMMs only (the FP8 kernel has no swapped epilogue)");
  if (desc.with_c && !per_token_b)
    return reject(why, "the 1D2D recipe (bf16 D) has no C input; accumulation needs the 1D1D recipe with fp32 D");
  if (desc.type == GemmType::kKGroupedContiguous && !per_token_b)
    return reject(why, "K-grouped FP8 GEMMs use the 1D1D recipe: D must be fp32");
  // One stage holds one, two or four 128-wide K blocks (kFp8ScaleBlock): 128 e4m3 bytes per tile row each (one
  // 128B-swizzle atom row), and exactly one block of scales each.
  if (c.block_k != kFp8ScaleBlock && c.block_k != 2 * kFp8ScaleBlock && c.block_k != 4 * kFp8ScaleBlock)
    return reject(why, [&] {
      return fmt::format("block_k {} not 128, 256 or 512 (one, two or four 128-wide scale blocks per stage)",
                         c.block_k);
    });
  if (c.block_k > kFp8ScaleBlock) {
    const bool type_ok =
        desc.type == GemmType::kNormal || desc.type == GemmType::kBatched || desc.type == GemmType::kMGroupedMasked;
    if (per_token_b || !type_ok || c.cluster_m * c.cluster_n > 1)
      return reject(why, [&] {
        return fmt::format(
            "block_k {} (several K blocks per stage) runs the 1D2D recipe (bf16 D) of dense, "
            "batched and masked problems without a cluster",
            c.block_k);
      });
  }
  // 1D2D: 256-row contiguous tiles straddling two groups run in two passes (sched::Tile::two_passes).
  if (!sm90_tile_shape_fits(desc, c, !per_token_b, why)) return false;
  if (!per_token_b && !fits_two_scale_blocks(c.block_n))
    return reject(why, [&] {
      return fmt::format(
          "block_n {}: a 1D2D tile may straddle at most two 128-wide scale blocks of B "
          "(block_n <= 128 or one of 144, 160, 192, 256)",
          c.block_n);
    });
  // Skip-head-mid remaps a tile's first column only: its columns must stay inside one part of a head.
  const HeadSplits& heads = desc.head_splits;
  if (heads.any() && (heads.left % c.block_n != 0 || heads.right % c.block_n != 0))
    return reject(why, [&] {
      return fmt::format(
          "block_n {} does not divide head_splits left {} and right {} (a tile must lie in one part "
          "of a head)",
          c.block_n, heads.left, heads.right);
    });
  const int sub_blocks = c.rows_per_math_warpgroup() / 64;
  const int regs = (sub_blocks + 1) * c.block_n / 2;
  if (regs > kMaxResultAndPartialRegs)
    return reject(why, [&] {
      return fmt::format("{} fp32 result + partial registers per thread (({} + 1) x block_n {} / 2) > {}", regs,
                         sub_blocks, c.block_n, kMaxResultAndPartialRegs);
    });
  const int smem = sm90_fp8_smem_bytes(desc, c);
  const std::string smem_detail = why && !sm90_smem_fits(smem, hw) ? fmt::format("{} stages", c.stages) : "";
  if (!sm90_resource_fits(c, smem, smem_detail, hw, why)) return false;
  // NOTE: at the 192-register budget (256x128, 128x192) the fix-up's ordered sum has no room left; an estimate
  // from the BF16 family's measured spill at its own limit, not seen on FP8.
  if (!sm90_scheme_fits(desc, c, regs >= kMaxResultAndPartialRegs, why)) return false;
  if (!sm90_cluster_fits(desc, c, hw, why)) return false;
  if (why) why->clear();
  return true;
}

int sm90_smem_bytes(const GemmDesc& desc, const GemmConfig& config) {
  return is_fp8_desc(desc) ? sm90_fp8_smem_bytes(desc, config) : sm90_bf16_smem_bytes(desc, config);
}

bool sm90_config_legal(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw, std::string* why) {
  return is_fp8_desc(desc) ? sm90_fp8_config_legal(desc, config, hw, why)
                           : sm90_bf16_config_legal(desc, config, hw, why);
}

}  // namespace tilegemm
