#include "kernels/tail_maps.hpp"

#include "kernels/tma_descriptor.hpp"
#include "kernels/tma_views.hpp"

namespace tilegemm::kernels {

RowTail row_tail(std::int64_t rows, int block_rows) {
  const auto rest = static_cast<int>(rows % block_rows);
  if (rest == 0) return {};
  return {static_cast<int>(rows - rest), rest};
}

RowTail encode_a_tail(GemmParams& gemm, const TensorView& a, int block_m, int block_k) {
  const RowTail tail = row_tail(a.size(1), block_m);
  if (tail.rows > 0) {
    gemm.tma_a_tail = encode_tma(operand_view(a, Major::kKMajor, tail.rows, block_k), "a");
    gemm.a_tail_row0 = tail.row0, gemm.a_tail_rows = tail.rows;
  }
  return tail;
}

void encode_b_tail(GemmParams& gemm, const TensorView& b, int block_n, int block_k) {
  const RowTail tail = row_tail(b.size(1), block_n);
  if (tail.rows == 0) return;
  gemm.tma_b_tail = encode_tma(operand_view(b, Major::kKMajor, tail.rows, block_k), "b");
  gemm.b_tail_row0 = tail.row0, gemm.b_tail_rows = tail.rows;
}

void encode_d_tail(GemmParams& gemm, const TensorView& d, int block_n, int d_rows) {
  const RowTail tail = row_tail(d.size(1), d_rows);
  if (tail.rows == 0) return;
  gemm.tma_d_tail = encode_tma(output_view(d, block_n, tail.rows), "d");
  gemm.d_tail_row0 = tail.row0, gemm.d_tail_rows = tail.rows;
}

}  // namespace tilegemm::kernels
