#pragma once
// The problem (GemmDesc, hardware-free) and the chosen kernel configuration (GemmConfig).
// Heuristics map one to the other; the kernel families turn a (desc, config) pair into a KernelSpec.
#include <string>

#include "tilegemm/dtype.hpp"
#include "tilegemm/gemm_params.hpp"  // GemmScheme (shared with the kernels)

namespace tilegemm {

// DeepGEMM's fp8_gemm_nt_skip_head_mid: the GEMM's N columns are heads of left + right columns, and D's heads are
// left + mid + right wide; GEMM column n = head·(left + right) + r lands in D column head·(left + mid + right) + r
// (r < left) or + r + mid (r >= left). D's mid columns are never written. All zero: a plain D.
struct HeadSplits {
  int left = 0, mid = 0, right = 0;
  bool any() const { return left != 0 || mid != 0 || right != 0; }
  bool operator==(const HeadSplits&) const = default;
};

struct GemmDesc {
  GemmType type = GemmType::kNormal;
  int m = 0, n = 0, k = 0;
  int num_groups = 1;  // batch count, or group count for grouped types
  int expected_m = 0;  // masked grouped: the caller's hint of rows per group (0 = use m)
  DType a_dtype = DType::kBFloat16;
  DType b_dtype = DType::kBFloat16;
  DType d_dtype = DType::kBFloat16;
  Major major_a = Major::kKMajor;
  Major major_b = Major::kKMajor;
  bool with_c = false;           // D = C + A·B (C in D's dtype, fp32 D may be accumulated in place)
  bool use_psum_layout = false;  // M-grouped contiguous: grouped_layout holds each group's end row
  // Split-K / stream-K must sum cut tiles in a fixed order (bit-identical results run to run) instead of
  // fp32 atomics in L2. Set from tilegemm::set_deterministic / DG_DETERMINISTIC by the API.
  bool deterministic = false;
  // FP8: how the kernel reads A's per-token scales (and whether 1D1D B's need element-wise copies), from their
  // strides and alignment (kernels::per_token_scale_layout): a variant of the kernel, same shared memory.
  ScaleLayout sfa_layout = ScaleLayout::kMnMajor;
  bool sfb_strided = false;
  // FP8 K-grouped: 0, or A and B are DeepGEMM's 1-D layout (each group's K-major block after the previous one's),
  // read through one TMA map per group, this many groups per launch (4, 8, 16 or 32: a kernel variant, same shared
  // memory; kernels::sm90_fp8_group_maps_per_launch).
  int k_group_maps = 0;
  // FP8 1D2D dense: D's columns remapped per head (fp8_gemm_1d2d_skip_head_mid); a kernel variant.
  HeadSplits head_splits;
  // Set only by swapped_problem (heuristics.hpp): this is a BF16 GEMM with A and B exchanged, so D is stored
  // transposed to it — D's rows are this desc's n columns, each m wide.
  bool d_transposed = false;
};

// FP8 descs run the block-scaled SM90 FP8 family: 1D2D (per-block B scales) with bf16 D, 1D1D (per-token B
// scales) with fp32 D — the output dtype names the recipe, as in DeepGEMM's SM90 API.
inline bool is_fp8_desc(const GemmDesc& desc) {
  return desc.a_dtype == DType::kFloat8E4M3;
}

enum class MulticastSide : int { kNone = 0, kB = 2 };  // which operand a 2-CTA cluster shares

struct GemmConfig {
  int block_m = 128, block_n = 128, block_k = 64;
  int stages = 4;
  int num_math_warpgroups = 2;       // consumer warpgroups; plus one producer warpgroup
  int cluster_m = 1, cluster_n = 1;  // 2x1 clusters pair m-blocks; no kernel pairs n-blocks (cluster_n is 1)
  MulticastSide multicast = MulticastSide::kNone;
  int swizzle_a_bytes = 128, swizzle_b_bytes = 128, swizzle_d_bytes = 128;  // 0 = no swizzle
  int num_sms = 0;                                                          // persistent grid size
  int raster_group = 8;                                                     // tiles grouped along M (or N) for L2 reuse
  int split_k = 1;                                // split-K: K slices per tile (1 for the other schemes)
  GemmScheme scheme = GemmScheme::kDataParallel;  // how work is cut across CTAs (gemm_params.hpp)
  int smem_bytes = 0;                             // dynamic shared memory the kernel needs
  // The kernel runs swapped_problem(desc): Dᵀ = B·Aᵀ, the weights' rows on the 64-row wgmma side (ragged M); the
  // block sizes above are that problem's (block_m along the original N).
  bool swap_ab = false;
  int num_threads() const { return 128 * (num_math_warpgroups + 1); }
  int rows_per_math_warpgroup() const { return block_m / num_math_warpgroups; }  // each owns its rows of the tile
};

std::string to_string(const GemmDesc& desc);
std::string to_string(const GemmConfig& config);
// "data-parallel", "split-K" or "stream-K".
const char* scheme_name(GemmScheme scheme);

}  // namespace tilegemm
