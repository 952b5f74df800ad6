// The SM90 BF16 kernel's constraints, in one place. The kernel (device/tilegemm/kernels/sm90_bf16_gemm.cuh)
// is written to exactly these rules; a config that passes here must compile and run there.
#include <fmt/format.h>

#include "heuristics/sm90_tile_rules.hpp"
#include "tilegemm/gemm_params.hpp"  // kOperandSwizzleBytes
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
// A 128B-swizzle atom row holds 64 bf16 of K; a stage holds one or two such atoms (two halve the per-stage
// handshakes, which narrow small-M tiles cannot hide).
constexpr int kBf16AtomK = kOperandSwizzleBytes / 2;
constexpr int kBf16MaxBlockK = 4 * kBf16AtomK;
constexpr int kInt8AtomK = kOperandSwizzleBytes;
constexpr int kMaxAccumulatorRegs = 128;
// Registers a math thread needs besides its accumulators (addresses, loop state, epilogue). NOTE: with
// setmaxnreg the producer warpgroup drops to kProducerRegs so the math warpgroups can hold the rest.
constexpr int kMathNonAccumulatorRegs = 40;
constexpr int kProducerRegs = 40;

}  // namespace

int sm90_bf16_smem_bytes(const GemmDesc& desc, const GemmConfig& c) {
  const long long operand =
      static_cast<long long>(c.stages) * (c.block_m + c.block_n) * c.block_k * (dtype_bits(desc.a_dtype) / 8);
  const long long staging = static_cast<long long>(c.block_m) * c.block_n * (dtype_bits(desc.d_dtype) / 8);
  return static_cast<int>(operand + staging + kSmemReserveBytes);
}

bool sm90_bf16_config_legal(const GemmDesc& desc, const GemmConfig& c, const HardwareModel& hw, std::string* why) {
  if (desc.type == GemmType::kKGroupedContiguous && desc.d_dtype != DType::kFloat32)
    return reject(why, "K-grouped contiguous GEMMs accumulate weight gradients in fp32: D must be fp32");
  if (desc.a_dtype == DType::kInt8) {
    // A 128-byte atom holds 128 int8 of K; integer wgmma widths are 8..32, then multiples of 16.
    if (c.block_k != kInt8AtomK && c.block_k != 2 * kInt8AtomK)
      return reject(why, [&] {
        return fmt::format("block_k {} is not {} or {} (one or two 128-byte int8 K atoms per stage)", c.block_k,
                           kInt8AtomK, 2 * kInt8AtomK);
      });
    if (c.block_n > 32 && c.block_n % 16 != 0)
      return reject(why, [&] {
        return fmt::format("block_n {}: integer wgmma is 8, 16, 24 or 32 wide, then a multiple of 16", c.block_n);
      });
  } else if (c.block_k != kBf16AtomK && c.block_k != 2 * kBf16AtomK && c.block_k != kBf16MaxBlockK) {
    return reject(why, [&] {
      return fmt::format(
          "block_k {} is not {}, {} or {} (one, two or four 128-byte bf16 K atoms of the 128B "
          "swizzle per stage)",
          c.block_k, kBf16AtomK, 2 * kBf16AtomK, kBf16MaxBlockK);
    });
  }
  if (c.block_k > kBf16AtomK && desc.type == GemmType::kKGroupedContiguous)
    return reject(why, [&] {
      return fmt::format(
          "block_k {}: K-grouped groups are cut into {}-wide K blocks (group K sizes are "
          "multiples of {} only)",
          c.block_k, kBf16AtomK, kBf16AtomK);
    });
  if (desc.type == GemmType::kBatchReduced && c.cluster_m * c.cluster_n > 1)
    return reject(why, "a batch-reduced GEMM runs without clusters (its grid counts one [M, N] problem)");
  if (c.block_k > kBf16AtomK && desc.type == GemmType::kBatchReduced)
    return reject(why, [&] {
      return fmt::format(
          "block_k {}: a batch-reduced GEMM walks each batch's K in {}-wide blocks (per-batch "
          "K is a multiple of {} only)",
          c.block_k, kBf16AtomK, kBf16AtomK);
    });
  const int atom_k = desc.a_dtype == DType::kInt8 ? kInt8AtomK : kBf16AtomK;
  if (c.block_k > atom_k && c.cluster_m * c.cluster_n > 1)
    return reject(why, [&] {
      return fmt::format("block_k {}: 2-CTA B multicast loads one {}-wide K atom per stage", c.block_k, atom_k);
    });
  if (!sm90_tile_shape_fits(desc, c, /*two_pass_contiguous=*/false, why)) return false;

  const int rows_per_wg = c.block_m / c.num_math_warpgroups;
  const int acc_regs = rows_per_wg * c.block_n / 128;
  if (acc_regs > kMaxAccumulatorRegs)
    return reject(why, [&] {
      return fmt::format("{} fp32 accumulator registers per thread ({} rows x block_n {} / 128) > {}", acc_regs,
                         rows_per_wg, c.block_n, kMaxAccumulatorRegs);
    });
  if (hw.max_regs_per_thread > 0 && acc_regs + kMathNonAccumulatorRegs > hw.max_regs_per_thread)
    return reject(why, [&] {
      return fmt::format("{} registers per math thread > {} allowed", acc_regs + kMathNonAccumulatorRegs,
                         hw.max_regs_per_thread);
    });
  const int regs_per_cta = 128 * c.num_math_warpgroups * (acc_regs + kMathNonAccumulatorRegs) + 128 * kProducerRegs;
  if (hw.regs_per_sm > 0 && regs_per_cta > hw.regs_per_sm)
    return reject(why, [&] { return fmt::format("{} registers per CTA > {} per SM", regs_per_cta, hw.regs_per_sm); });
  if (hw.max_threads_per_sm > 0 && c.num_threads() > hw.max_threads_per_sm)
    return reject(why, [&] { return fmt::format("{} threads > {} per SM", c.num_threads(), hw.max_threads_per_sm); });

  if (desc.major_a == Major::kMNMajor && c.block_m % 64 != 0)
    return reject(why, [&] {
      return fmt::format(
          "MN-major A needs block_m % 64 == 0 (128B swizzle atoms are 64 bf16 wide), "
          "block_m is {}",
          c.block_m);
    });
  if (desc.major_b == Major::kMNMajor && c.block_n % 64 != 0)
    return reject(why, [&] {
      return fmt::format(
          "MN-major B needs block_n % 64 == 0 (128B swizzle atoms are 64 bf16 wide), "
          "block_n is {}",
          c.block_n);
    });
  if (c.swizzle_a_bytes != kOperandSwizzleBytes || c.swizzle_b_bytes != kOperandSwizzleBytes)
    return reject(why, [&] {
      return fmt::format("operand swizzle {}/{} bytes, the kernel uses {}B for A and B", c.swizzle_a_bytes,
                         c.swizzle_b_bytes, kOperandSwizzleBytes);
    });
  if (c.swap_ab != desc.d_transposed)
    return reject(why, c.swap_ab ? "swap_ab runs the swapped problem (swapped_problem), not this desc"
                                 : "a swapped problem (d_transposed) runs only with swap_ab");
  if (c.swap_ab && c.scheme != GemmScheme::kDataParallel)  // NOTE: its fix-up path is untested: not offered
    return reject(why, "swap_ab runs data-parallel only");
  // Swapped, D is staged as [block_n tokens][64 columns] chunks: 128-byte rows with the 128B swizzle.
  const int d_row_bytes = c.swap_ab ? 128 : c.block_n * dtype_bits(desc.d_dtype) / 8;
  if (c.swap_ab && c.swizzle_d_bytes != 128)
    return reject(why, [&] {
      return fmt::format("swap_ab stores D in 128-byte rows with the 128B swizzle, not {}", c.swizzle_d_bytes);
    });
  if (c.swizzle_d_bytes != 0 &&
      (c.swizzle_d_bytes % 32 != 0 || c.swizzle_d_bytes > 128 || d_row_bytes % c.swizzle_d_bytes != 0))
    return reject(why, [&] {
      return fmt::format("D swizzle {} bytes does not divide the {}-byte D tile row", c.swizzle_d_bytes, d_row_bytes);
    });

  const int smem = sm90_bf16_smem_bytes(desc, c);
  const std::string smem_detail =
      why && !sm90_smem_fits(smem, hw)
          ? fmt::format("{} stages x {} B + {} B D staging + {}", c.stages,
                        (c.block_m + c.block_n) * c.block_k * (dtype_bits(desc.a_dtype) / 8),
                        c.block_m * c.block_n * dtype_bits(desc.d_dtype) / 8, kSmemReserveBytes)
          : "";
  if (!sm90_resource_fits(c, smem, smem_detail, hw, why)) return false;
  // Split-K / stream-K (device/tilegemm/sched/split_scheduler.cuh) cut dense and batched problems only.
  // NOTE: ptxas (CUDA 13.0) spills a few bytes in the deterministic stream-K fix-up of 256x128 / 2 warpgroup
  // tiles (128 accumulators per thread plus the 64-bit slot arithmetic of the ordered sum).
  const bool stream_k_det_spills = acc_regs >= kMaxAccumulatorRegs && c.num_math_warpgroups == 2;
  // NOTE: int8's scaling (row and column scales, shuffles) beside 128 accumulators and a fix-up spills too.
  if (desc.a_dtype == DType::kInt8 && acc_regs >= kMaxAccumulatorRegs && c.scheme != GemmScheme::kDataParallel)
    return reject(why, "int8 tiles of 128 accumulators per thread run data-parallel only (the fix-up spills)");
  if (!sm90_scheme_fits(desc, c, stream_k_det_spills, why)) return false;

  if (!sm90_cluster_fits(desc, c, hw, why)) return false;
  if (why) why->clear();
  return true;
}

}  // namespace tilegemm
