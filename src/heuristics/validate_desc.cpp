// Problem-level checks: what no GemmConfig could fix. TMA requires every row stride to be a multiple of
// 16 bytes, so the contiguous dimension of each tensor must hold a multiple of 16 bytes of elements.
#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
constexpr int kTmaStrideAlignmentBytes = 16;

void require_positive(int value, const char* name) {
  TILEGEMM_REQUIRE(value > 0, name, "a positive size", std::to_string(value));
}

// The contiguous extent `value` (elements of `t`) must give a 16-byte aligned row stride.
void require_tma_aligned(int value, DType t, const char* name, const char* what) {
  const int elems = kTmaStrideAlignmentBytes * 8 / dtype_bits(t);
  TILEGEMM_REQUIRE(value % elems == 0, name,
                   fmt::format("a multiple of {} (16-byte TMA row stride of {})", elems, what), std::to_string(value));
}
}  // namespace

void validate_desc(const GemmDesc& desc) {
  require_positive(desc.m, "m");
  require_positive(desc.n, "n");
  require_positive(desc.k, "k");
  require_positive(desc.num_groups, "num_groups");
  TILEGEMM_REQUIRE(
      desc.a_dtype == DType::kBFloat16 || desc.a_dtype == DType::kFloat8E4M3 || desc.a_dtype == DType::kInt8, "a_dtype",
      "bf16, e4m3 or int8 (the SM90 BF16 and FP8 kernel families)", std::string(dtype_name(desc.a_dtype)));
  TILEGEMM_REQUIRE(desc.b_dtype == desc.a_dtype, "b_dtype",
                   fmt::format("{} (the dtype of A)", dtype_name(desc.a_dtype)), std::string(dtype_name(desc.b_dtype)));
  TILEGEMM_REQUIRE(desc.d_dtype == DType::kBFloat16 || desc.d_dtype == DType::kFloat32, "d_dtype", "bf16 or fp32",
                   std::string(dtype_name(desc.d_dtype)));
  if (desc.a_dtype == DType::kInt8) {
    // int8 x int8 runs the BF16 kernel with s8 wgmma (K-major only) and a per-token, per-channel scaled bf16 D.
    TILEGEMM_REQUIRE(desc.type == GemmType::kNormal, "type", "a plain GEMM for int8 x int8", to_string(desc));
    TILEGEMM_REQUIRE(desc.major_a == Major::kKMajor && desc.major_b == Major::kKMajor, "major_a",
                     "K-major A and B (SM90 integer wgmma reads K-major only)", "an MN-major operand");
    TILEGEMM_REQUIRE(desc.d_dtype == DType::kBFloat16 && !desc.with_c, "d_dtype", "bf16 D without C for int8 x int8",
                     to_string(desc));
  }
  if (is_fp8_desc(desc)) {
    // wgmma reads fp8 operands from shared memory only K-major.
    TILEGEMM_REQUIRE(desc.major_a == Major::kKMajor, "major_a", "K-major (SM90 FP8 wgmma reads fp8 K-major only)",
                     "MN-major");
    TILEGEMM_REQUIRE(desc.major_b == Major::kKMajor, "major_b", "K-major (SM90 FP8 wgmma reads fp8 K-major only)",
                     "MN-major");
  }

  switch (desc.type) {
    case GemmType::kNormal:
      TILEGEMM_REQUIRE(desc.num_groups == 1, "num_groups", "1 for a normal GEMM", std::to_string(desc.num_groups));
      break;
    case GemmType::kMGroupedContiguous:
      TILEGEMM_REQUIRE(desc.m % kContiguousGroupRowAlignment == 0, "m",
                       fmt::format("a multiple of {} (each contiguous group is padded to {} rows)",
                                   kContiguousGroupRowAlignment, kContiguousGroupRowAlignment),
                       std::to_string(desc.m));
      break;
    case GemmType::kMGroupedMasked:
      TILEGEMM_REQUIRE(desc.expected_m >= 0 && desc.expected_m <= desc.m, "expected_m",
                       fmt::format("0 (= m) or a row count in [1, m={}]", desc.m), std::to_string(desc.expected_m));
      break;
    case GemmType::kBatched:
    case GemmType::kKGroupedContiguous:
      break;
    case GemmType::kBatchReduced:
      // desc.k is the sum over the num_groups batches of their K, each a whole number of 64-wide K blocks.
      TILEGEMM_REQUIRE(desc.a_dtype == DType::kBFloat16, "a_dtype", "bf16 (batch-reduced GEMMs run on the BF16 kernel)",
                       std::string(dtype_name(desc.a_dtype)));
      TILEGEMM_REQUIRE(desc.major_a == Major::kKMajor && desc.major_b == Major::kKMajor, "major_a",
                       "K-major A and B for a batch-reduced GEMM", "an MN-major operand");
      TILEGEMM_REQUIRE(desc.k % desc.num_groups == 0 && (desc.k / desc.num_groups) % 64 == 0, "k",
                       fmt::format("num_groups={} batches of a multiple of 64 each", desc.num_groups),
                       std::to_string(desc.k));
      break;
  }
  const bool psum = desc.type == GemmType::kMGroupedContiguous && desc.use_psum_layout;
  if (psum)
    TILEGEMM_REQUIRE(desc.expected_m >= 0 && desc.expected_m <= desc.m, "expected_m",
                     fmt::format("0 (no hint) or rows per group in [1, m={}]", desc.m),
                     std::to_string(desc.expected_m));
  else if (desc.type != GemmType::kMGroupedMasked)
    TILEGEMM_REQUIRE(desc.expected_m == 0, "expected_m", "0 (only masked and prefix-sum grouped GEMMs take a hint)",
                     std::to_string(desc.expected_m));

  if (desc.major_a == Major::kKMajor || desc.major_b == Major::kKMajor)
    require_tma_aligned(desc.k, desc.a_dtype, "k", "K-major A/B");
  if (desc.major_a == Major::kMNMajor) require_tma_aligned(desc.m, desc.a_dtype, "m", "MN-major A");
  if (desc.major_b == Major::kMNMajor) require_tma_aligned(desc.n, desc.b_dtype, "n", "MN-major B");
  if (desc.d_transposed) {
    // A swapped BF16 problem (swapped_problem): D's rows are this desc's columns, m elements wide.
    GemmDesc unswapped = desc;
    unswapped.d_transposed = false;
    TILEGEMM_REQUIRE(sm90_swap_ab_runs(unswapped), "d_transposed", "a plain BF16 GEMM with bf16 D and no C (swap AB)",
                     to_string(desc));
    require_tma_aligned(desc.m, desc.d_dtype, "n", "bf16 D (N-contiguous; the swapped problem's m)");
  } else {
    require_tma_aligned(desc.n, desc.d_dtype, "n",
                        desc.d_dtype == DType::kFloat32 ? "fp32 D (N-contiguous)" : "bf16 D (N-contiguous)");
  }
  if (desc.head_splits.any()) {
    TILEGEMM_REQUIRE(
        is_fp8_desc(desc) && desc.type == GemmType::kNormal && desc.d_dtype == DType::kBFloat16 && !desc.with_c,
        "head_splits", "a dense FP8 1D2D GEMM (bf16 D, no C) to remap D's columns of", to_string(desc));
    validate_head_splits(desc.head_splits, desc.n);
  }
}

void validate_head_splits(const HeadSplits& heads, std::int64_t n) {
  const std::string value = fmt::format("({}, {}, {})", heads.left, heads.mid, heads.right);
  const std::int64_t head = std::int64_t{heads.left} + heads.right;
  TILEGEMM_REQUIRE(heads.left >= 0 && heads.mid >= 0 && heads.right >= 0 && head > 0, "head_splits",
                   "(left, mid, right), each >= 0, with left + right > 0", value);
  TILEGEMM_REQUIRE(n % head == 0, "head_splits", fmt::format("left + right dividing N = {} (b's rows)", n), value);
  TILEGEMM_REQUIRE(sm90_fp8_head_split_max_block_n(heads) > 0, "head_splits",
                   "left and right that share a tile width of the FP8 kernel (a multiple of 8 in [16, 256] dividing "
                   "both: multiples of 16 always do)",
                   value);
}

}  // namespace tilegemm
