#pragma once
// The parameter block of the SM90 FP8 GEMM kernels (host fills it, device reads it as one __grid_constant__
// argument): the common GEMM block plus the scaling factors. Plain data only.
#include "tilegemm/gemm_params.hpp"

namespace tilegemm {

struct Fp8GemmParams {
  GemmParams gemm;
  // Per-token scales of A as a TMA view [batch][K blocks][rows] (rows contiguous): one box of BLOCK_M floats per
  // stage. 1D1D: B's per-token scales likewise (box of BLOCK_N floats); unused in 1D2D.
  TmaDescriptor tma_sfa;
  TmaDescriptor tma_sfb;
  TmaDescriptor tma_sfa_tail;  // A's scales for the tail block (GemmParams::a_tail_rows): sfa_tail_rows floats
  int sfa_tail_rows;           // a_tail_rows rounded up to 16 bytes
  // 1D2D: B's per-block scales, element (g, n / 128, kb) at sfb[g * sfb_group_stride + (n / 128) * sfb_row_stride + kb].
  const float* sfb;
  long long sfb_group_stride;
  int sfb_row_stride;
  int sfb_rows;  // ceil(N / 128)
};

// 1D2D: shared-memory bytes of one stage's B block scales: the tile's (at most two) column blocks of each of the
// stage's `k_blocks` 128-wide K blocks, 8 bytes per K block, at least 16. Host (shared-memory plan) and device
// (stage layout) both call this.
TG_HOST_DEVICE constexpr int fp8_1d2d_sfb_stage_bytes(int k_blocks) { return k_blocks < 2 ? 16 : 8 * k_blocks; }

}  // namespace tilegemm
