#pragma once
// FP8 x FP4 GEMM on SM90 (kernels/sm90_fp8_fp4_gemm.cuh): D[M, N] = A[M, K] · Bᵀ with A e4m3 and 1x128 fp32 scales
// per token, B FP4 e2m1 packed two per byte (DeepGEMM's layout: [N, K / 2] int8, k 2i in the low nibble of byte i)
// and 1x32 fp32 scales per row (DeepGEMM's recipe (1, 32); UE8M0-valued or not). The same kernel runs MXFP8 (`mx`):
// B e4m3 [N, K] and both operands scaled per 32 k. Shared by the host launch and the kernel. Plain data only.
#include "tilegemm/gemm_params.hpp"  // TmaDescriptor, TG_HOST_DEVICE
#include "tilegemm/k_groups.hpp"

namespace tilegemm {

namespace fp8_fp4 {

constexpr int kRowBlock = 16;  // B rows per consumer warp (an mma's M)
constexpr int kConsumerWarps = 4;
constexpr int kBlockN = kConsumerWarps * kRowBlock;  // B rows per CTA
constexpr int kStageK = 256;                         // k per pipeline stage: 128 bytes of FP4 B per row
constexpr int kScaleGroupK = 32;                     // B's scale group (one mma.m16n8k32 step)
constexpr int kScaleBlockK = 128;                    // A's scale block
constexpr int kGroupsPerStage = kStageK / kScaleGroupK;
constexpr int kMaxBlockM = 64;

// One stage: A as two [BLOCK_M][128] e4m3 boxes, B as one [64][128 bytes] box of FP4 codes (MXFP8: two of e4m3; all
// 128-byte swizzle), B's scales as a [64][8] fp32 box (MXFP8: then A's as a [BLOCK_M][8] one); 1024-aligned as the
// swizzle needs.
TG_HOST_DEVICE constexpr int a_box_bytes(int block_m) {
  return block_m * 128;
}
TG_HOST_DEVICE constexpr int b_row_bytes(bool mx) {
  return mx ? kStageK : kStageK / 2;
}
TG_HOST_DEVICE constexpr int b_offset(int block_m) {
  return 2 * a_box_bytes(block_m);
}
TG_HOST_DEVICE constexpr int sfb_offset(int block_m, bool mx) {
  return b_offset(block_m) + kBlockN * b_row_bytes(mx);
}
TG_HOST_DEVICE constexpr int sfa_offset(int block_m, bool mx) {
  return sfb_offset(block_m, mx) + kBlockN * kGroupsPerStage * 4;
}
TG_HOST_DEVICE constexpr int stage_bytes(int block_m, bool mx) {
  return (sfa_offset(block_m, mx) + (mx ? block_m * kGroupsPerStage * 4 : 0) + 1023) / 1024 * 1024;
}
// K groups (tilegemm/k_groups.hpp): 1, 2 or 4 sets of consumer warps take turns at the stages.
TG_HOST_DEVICE constexpr int threads(int k_groups) {
  return k_group_threads(kConsumerWarps, k_groups);
}
// 1 KB of slack aligns the base up to 1024 bytes; then the stage barriers, the last-CTA flag and the sets' scratch.
TG_HOST_DEVICE constexpr int smem_bytes(int block_m, int stages, bool mx, int k_groups = 1) {
  return 1024 + stages * stage_bytes(block_m, mx) + stages * 16 + 16 +
         k_group_scratch_bytes(kConsumerWarps, block_m, k_groups);
}

}  // namespace fp8_fp4

struct Fp8Fp4GemmParams {
  TmaDescriptor tma_a;    // A [M][K] e4m3: boxes of [BLOCK_M][128 k], 128-byte swizzle
  TmaDescriptor tma_b;    // B [N][K / 2] bytes (MXFP8: [N][K] e4m3): boxes of [64 rows][128 bytes], 128-byte swizzle
  TmaDescriptor tma_sfb;  // B's scales [N][K / 32] fp32: boxes of [64 rows][8], no swizzle
  TmaDescriptor tma_sfa;  // MXFP8: A's scales [M][K / 32] fp32: boxes of [BLOCK_M][8], no swizzle
  const float* sfa;       // FP4 B: A's scales, token m and K block kb at sfa[m * sfa_stride_m + kb * sfa_stride_k]
  long long sfa_stride_m, sfa_stride_k;
  void* d;  // D [M][N], N contiguous, row stride ldd elements
  long long ldd;
  int m, n, k;
  int num_splits;  // K slices per (row block, token block), whole stages each
  int m_blocks;    // ceil(M / BLOCK_M)
  // Splits summed in the kernel (num_splits > 1): partial tiles [tile][split][64][BLOCK_M] fp32 and one counter per
  // tile (left at zero), as the weight-only kernel does.
  float* partials;
  int* counters;
  // M-grouped masked over experts (blockIdx.y the expert): A [E][m][K], B [E][N][K / 2] and B's scales through 3-D
  // maps; A's scales this many elements and D this many bytes apart per expert; masked_m int32 [E] the valid rows.
  long long sfa_expert_stride = 0;
  long long d_expert_bytes = 0;
  const int* masked_m = nullptr;
};

}  // namespace tilegemm
