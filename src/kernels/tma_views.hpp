#pragma once
// The TMA views the SM90 GEMM kernels load and store through, built from [batch, rows, cols] TensorViews.
#include "kernels/tma_descriptor.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::kernels {

// A [B, rows, K] operand: K-major loads [min(block_k, 128 bytes) x block_rows] boxes (a wider block_k is
// loaded one 128-byte K atom at a time), MN-major loads 64-wide column panels of block_k rows. Both with the
// 128-byte swizzle.
TmaView operand_view(const TensorView& v, Major major, int block_rows, int block_k);

// D [B, rows, N] (N contiguous) stored in column chunks of d_chunk_bytes(block_n) with the matching swizzle,
// box_rows rows (one consumer warpgroup's share of the tile) per store.
TmaView output_view(const TensorView& d, int block_n, int box_rows);
// bf16 D [B, M, N] stored by a swap-AB kernel (sm90_swap_ab_epilogue.cuh): boxes of `tokens` rows by 64 columns,
// 128B-swizzled.
TmaView swapped_output_view(const TensorView& d, int tokens);

// [rows, cols] as [1, rows, cols]; 3-D views unchanged.
TensorView as_3d(const TensorView& v);

}  // namespace tilegemm::kernels
