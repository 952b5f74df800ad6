#include "kernels/tail_maps.hpp"

#include "kernels/tma_descriptor.hpp"
#include "kernels/tma_views.hpp"

namespace tilegemm::kernels {

RowTail row_tail(std::int64_t rows, int block_rows) {
  const auto rest = static_cast<int>(rows % block_rows);
  if (rest == 0) return {};
  return {static_cast<int>(rows - rest), rest};
}

namespace {
// A K-major operand's tail map (loaded in block_rows-row tiles) into `map`, `row0` and `rows`, if it has a tail.
RowTail encode_operand_tail(const TensorView& v, int block_rows, int block_k, const char* name, TmaDescriptor& map,
                            int& row0, int& rows) {
  const RowTail tail = row_tail(v.size(1), block_rows);
  if (tail.rows > 0) {
    map = encode_tma(operand_view(v, Major::kKMajor, tail.rows, block_k), name);
    row0 = tail.row0, rows = tail.rows;
  }
  return tail;
}
}  // namespace

RowTail encode_a_tail(GemmParams& gemm, const TensorView& a, int block_m, int block_k) {
  return encode_operand_tail(a, block_m, block_k, "a", gemm.tma_a_tail, gemm.a_tail_row0, gemm.a_tail_rows);
}

void encode_b_tail(GemmParams& gemm, const TensorView& b, int block_n, int block_k) {
  encode_operand_tail(b, block_n, block_k, "b", gemm.tma_b_tail, gemm.b_tail_row0, gemm.b_tail_rows);
}

void encode_d_tail(GemmParams& gemm, const TensorView& d, int block_n, int d_rows) {
  const RowTail tail = row_tail(d.size(1), d_rows);
  if (tail.rows == 0) return;
  gemm.tma_d_tail = encode_tma(output_view(d, block_n, tail.rows), "d");
  gemm.d_tail_row0 = tail.row0, gemm.d_tail_rows = tail.rows;
}

}  // namespace tilegemm::kernels
