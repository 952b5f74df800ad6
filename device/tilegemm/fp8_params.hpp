#pragma once
// The parameter block of the SM90 FP8 GEMM kernels (host fills it, device reads it as one __grid_constant__
// argument): the common GEMM block plus the scaling factors. Plain data only.
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

// A scale tensor as the caller laid it out: element (g, r, kb) at data[g * group_stride + r * row_stride +
// kb * k_stride]. The kernels read A's per-token scales through a TMA map when they are MN-major or row-major with
// 16-byte rows (ScaleLayout::kMnMajor, kRowMajor), 1D1D B's when MN-major, else element by element from this view
// (kStrided); 1D2D B's per-block scales always from this view.
struct ScaleTensor {
  const float* data;
  long long group_stride, row_stride, k_stride;
  int rows;  // rows per group (M, N or ceil(N / 128)); reads past the last row are clamped to it
};

struct Fp8GemmParams {
  GemmParams gemm;
  ScaleTensor sfa;  // per token (1x128)
  ScaleTensor sfb;  // 1D2D: per 128x128 block; 1D1D: per token
  // kMnMajor: [G][K blocks][rows] (rows contiguous), a box of BLOCK_M rows of one K block; the tail map's box holds
  // the last partial block's rows, rounded up to 16 bytes (sfa_tail_rows). kRowMajor: [G][rows][K blocks], a box of
  // kRowMajorScaleBoxBlocks K blocks of BLOCK_M rows (rows past the last zero-filled; no tail map).
  TmaDescriptor tma_sfa;
  TmaDescriptor tma_sfa_tail;
  int sfa_tail_rows;
  TmaDescriptor tma_sfb;  // 1D1D with MN-major B scales: box of BLOCK_N rows of one K block
};

// K-grouped GEMMs on DeepGEMM's operand layout (A and B each hold group g's K-major [rows, k_g] block right after
// group g - 1's): one TMA map per group and operand, passed by value after the parameter block, so no call copies the
// operands into one [rows, ΣK] matrix. A kernel takes kMaps groups per launch (4, 8, 16 or kFp8MaxGroupMaps: the
// parameter stays under 4 KB for up to 8, which keeps the launch cheap); the host launches more groups in chunks,
// each with its groups' maps, k_block_base (the chunk's first K block in the scale tensors, whose K-block index runs
// over all groups) and its own grouped_layout and D. Every kMaps has the same offsets, so the host fills the largest
// and a smaller kernel reads its prefix.
inline constexpr int kFp8MaxGroupMaps = 32;
template <int kMaps>
struct Fp8GroupMapsParams {
  Fp8GemmParams base;
  int k_block_base;
  TmaDescriptor maps[2 * kMaps];  // group g's A at 2g, its B at 2g + 1
};
// What the kernel body reads of them (null maps: not a per-group-maps kernel).
struct Fp8GroupMaps {
  const TmaDescriptor* maps = nullptr;
  int k_block_base = 0;
};

// The K blocks one kRowMajor box holds: 16 bytes of a row, TMA's smallest inner box, enough for a stage's one, two
// or four K blocks.
inline constexpr int kRowMajorScaleBoxBlocks = 4;

// Shared-memory bytes of one stage's per-token A scales: a 128-byte aligned column of block_m floats per K block, or
// (kRowMajor) one [block_m][4] box. Host (shared-memory plan) and device (stage layout) both call this.
TG_HOST_DEVICE constexpr int fp8_sfa_stage_bytes(ScaleLayout layout, int block_m, int k_blocks) {
  return layout == ScaleLayout::kRowMajor ? (block_m * 4 * kRowMajorScaleBoxBlocks + 127) / 128 * 128
                                          : k_blocks * ((block_m * 4 + 127) / 128 * 128);
}

// 1D2D: shared-memory bytes of one stage's B block scales: the tile's (at most two) column blocks of each of the
// stage's `k_blocks` 128-wide K blocks, 8 bytes per K block, at least 16. Host (shared-memory plan) and device
// (stage layout) both call this.
TG_HOST_DEVICE constexpr int fp8_1d2d_sfb_stage_bytes(int k_blocks) {
  return k_blocks < 2 ? 16 : 8 * k_blocks;
}

}  // namespace tilegemm
