#include "kernels/tma_views.hpp"

#include <algorithm>

#include "tilegemm/gemm_params.hpp"  // d_chunk_bytes, kOperandSwizzleBytes

namespace tilegemm::kernels {

namespace {
std::uint64_t as_u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}
int elem_bytes(DType t) {
  return dtype_bits(t) / 8;
}

// TMA wants a valid stride even for an extent-1 batch dimension.
void fill_batch_stride(TmaView& t, const TensorView& v) {
  const auto e = as_u64(elem_bytes(v.dtype));
  t.byte_strides[1] = v.size(0) > 1 ? as_u64(v.stride(0)) * e : 0;
  if (t.byte_strides[1] == 0) t.byte_strides[1] = t.byte_strides[0] * t.dims[1];
}
}  // namespace

TensorView as_3d(const TensorView& v) {
  if (v.ndim == 3) return v;
  return TensorView::batched(v.data, v.dtype, 1, v.shape[0], v.shape[1], v.shape[0] * v.strides[0], v.strides[0],
                             v.strides[1]);
}

TmaView operand_view(const TensorView& v, Major major, int block_rows, int block_k) {
  TmaView t;
  t.base = v.data;
  t.dtype = v.dtype;
  const auto e = as_u64(elem_bytes(v.dtype));
  if (major == Major::kKMajor) {
    t.dims = {as_u64(v.size(2)), as_u64(v.size(1)), as_u64(v.size(0))};
    // A single row is never stepped along: its stride may be anything, TMA still wants a multiple of 16 bytes.
    t.byte_strides[0] = v.size(1) > 1 ? as_u64(v.stride(1)) * e : (as_u64(v.size(2)) * e + 15) / 16 * 16;
    // A swizzled box is at most one swizzle atom wide: wider K tiles are loaded as several boxes (one per atom).
    const auto box_k = std::min<std::uint64_t>(as_u64(block_k), kOperandSwizzleBytes / e);
    t.box = {static_cast<std::uint32_t>(box_k), static_cast<std::uint32_t>(block_rows), 1};
  } else {
    t.dims = {as_u64(v.size(1)), as_u64(v.size(2)), as_u64(v.size(0))};
    t.byte_strides[0] = as_u64(v.stride(2)) * e;
    t.box = {64, static_cast<std::uint32_t>(block_k), 1};
  }
  fill_batch_stride(t, v);
  t.swizzle_bytes = kOperandSwizzleBytes;
  return t;
}

TmaView output_view(const TensorView& d, int block_n, int box_rows) {
  const int e = elem_bytes(d.dtype);
  const int chunk_bytes = d_chunk_bytes(block_n, e);
  TmaView t;
  t.base = d.data;
  t.dtype = d.dtype;
  t.dims = {as_u64(d.size(2)), as_u64(d.size(1)), as_u64(d.size(0))};
  t.byte_strides[0] = as_u64(d.stride(1)) * as_u64(e);
  fill_batch_stride(t, d);
  t.box = {static_cast<std::uint32_t>(chunk_bytes / e), static_cast<std::uint32_t>(box_rows), 1};
  t.swizzle_bytes = d_chunk_swizzle_bytes(chunk_bytes);
  return t;
}

TmaView swapped_output_view(const TensorView& d, int tokens) {
  // Chunks of 64 bf16 columns: one 128-byte row with the 128B swizzle, as output_view makes them.
  return output_view(d, 64, tokens);
}

}  // namespace tilegemm::kernels
