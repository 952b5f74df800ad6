#pragma once
// The tail maps of the SM90 GEMMs (GemmParams::tma_a_tail / tma_d_tail): the last block of rows of A or D when the
// rows are not a multiple of the block, loaded or stored through a box of just those rows: A boxes reaching past
// A's last row made whole calls up to twice as slow (measured on the H200).
#include <cstdint>

#include "tilegemm/gemm_params.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::kernels {

// The last, partial block of `rows` rows cut into blocks of block_rows: its first row and its row count (0: none).
struct RowTail {
  int row0 = 0;
  int rows = 0;
};
RowTail row_tail(std::int64_t rows, int block_rows);

// Encodes A's tail map (K-major A loaded in block_m-row tiles) into `gemm`, if A has a tail; returns the tail.
RowTail encode_a_tail(GemmParams& gemm, const TensorView& a, int block_m, int block_k);

// Encodes K-major B's tail map (B loaded in block_n-row tiles, each CTA its own) into `gemm`, if B has a tail.
void encode_b_tail(GemmParams& gemm, const TensorView& b, int block_n, int block_k);

// Encodes D's tail map (d_rows rows per consumer warpgroup) into `gemm`, if D has a tail.
void encode_d_tail(GemmParams& gemm, const TensorView& d, int block_n, int d_rows);

}  // namespace tilegemm::kernels
