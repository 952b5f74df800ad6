#pragma once
// The parameter block of the SM90 FP8 GEMM kernels (host fills it, device reads it as one __grid_constant__
// argument): the common GEMM block plus the scaling factors. Plain data only.
#include "tilegemm/gemm_params.hpp"

namespace tilegemm {

// A per-token or per-block scale tensor as the caller laid it out: element (g, r, kb) at
// data[g * group_stride + r * row_stride + kb * k_stride], any strides (the producer's scale warp copies it with
// 4-byte cp.async, so row-major [rows, K/128] as DeepGEMM's quantisers return it and MN-major both read directly).
struct ScaleTensor {
  const float* data;
  long long group_stride, row_stride, k_stride;
  int rows;  // rows per group (M, N or ceil(N / 128)); reads past the last row are clamped to it
};

struct Fp8GemmParams {
  GemmParams gemm;
  ScaleTensor sfa;  // per token (1x128)
  ScaleTensor sfb;  // 1D2D: per 128x128 block; 1D1D: per token
};

// 1D2D: shared-memory bytes of one stage's B block scales: the tile's (at most two) column blocks of each of the
// stage's `k_blocks` 128-wide K blocks, 8 bytes per K block, at least 16. Host (shared-memory plan) and device
// (stage layout) both call this.
TG_HOST_DEVICE constexpr int fp8_1d2d_sfb_stage_bytes(int k_blocks) { return k_blocks < 2 ? 16 : 8 * k_blocks; }

}  // namespace tilegemm
