#pragma once
// The tail maps of the SM90 GEMMs (GemmParams::tma_a_tail / tma_d_tail): the last block of rows of A or D when the
// rows are not a multiple of the block, loaded or stored through a box of just those rows: A boxes reaching past
// A's last row made whole calls up to twice as slow (bench/results/2026-12-01-s15-decode/).
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

// Encodes D's tail map (rows per consumer warpgroup: d_rows) and, when a_tail, A's (K-major A in block_m-row tiles)
// into `gemm`. Returns A's tail (none when !a_tail).
RowTail encode_tail_maps(GemmParams& gemm, const TensorView& a, bool a_tail, int block_m, int block_k,
                         const TensorView& d, int block_n, int d_rows);

}  // namespace tilegemm::kernels
