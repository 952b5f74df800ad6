#include "kernels/scale_layout.hpp"

#include <cstdint>

namespace tilegemm::kernels {

namespace {

using u64 = std::uint64_t;
constexpr std::int64_t kFloatsPer16Bytes = 4;

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}
bool floats_aligned16(std::int64_t stride) {
  return stride > 0 && stride % kFloatsPer16Bytes == 0;
}
// A stride TMA never steps (one row, one K block) must still be a multiple of 16 bytes.
u64 unused_stride_bytes(std::int64_t inner_floats) {
  return u64(inner_floats * 4 + 15) / 16 * 16;
}

void fill_group_stride(TmaView& t, const TensorView& sf) {
  t.byte_strides[1] = sf.size(0) > 1 ? u64(sf.stride(0)) * 4 : t.byte_strides[0] * t.dims[1];
}

}  // namespace

ScaleLayout per_token_scale_layout(const TensorView& sf) {
  const std::int64_t groups = sf.size(0), rows = sf.size(1), kb = sf.size(2);
  const bool groups_ok = groups <= 1 || floats_aligned16(sf.stride(0));
  if (!aligned16(sf.data) || !groups_ok) return ScaleLayout::kStrided;
  if ((rows <= 1 || sf.stride(1) == 1) && (kb <= 1 || (floats_aligned16(sf.stride(2)) && sf.stride(2) >= rows)))
    return ScaleLayout::kMnMajor;
  if ((kb <= 1 || sf.stride(2) == 1) && (rows <= 1 || (floats_aligned16(sf.stride(1)) && sf.stride(1) >= kb)))
    return ScaleLayout::kRowMajor;
  return ScaleLayout::kStrided;
}

ScaleLayout preferred_sfa_layout(ScaleLayout possible, GemmType type, std::int64_t rows, std::int64_t k) {
  if (possible != ScaleLayout::kRowMajor) return possible;
  const bool tested_type =
      type == GemmType::kNormal || type == GemmType::kBatched || type == GemmType::kMGroupedContiguous;
  // H200, deep_gemm with DeepGEMM's row-major scales, kernel time of the boxes against the copies: K >= 7168 0.69-0.97
  // at every M; K 1536-2048 0.88-0.90 at M = 4096 but 1.08-1.31 at M <= 128; K 512 1.11-2.15 everywhere. (The box is
  // reloaded every stage: short-K tiles, latency-bound, pay for its 16-byte rows.)
  constexpr std::int64_t kLongK = 4096, kMediumK = 1536, kLargeM = 1024;
  const bool faster = k >= kLongK || (k >= kMediumK && rows >= kLargeM);
  return tested_type && faster ? ScaleLayout::kRowMajor : ScaleLayout::kStrided;
}

namespace {
// A 2-D view (inner dimension `inner`: 2 = K blocks, 1 = rows) of 3-D [G, rows, K blocks] fp32 scales, with a
// box of box_inner x box_outer elements of one group.
TmaView scale_view(const TensorView& sf, int inner, std::uint32_t box_inner, std::uint32_t box_outer) {
  const int outer = 3 - inner;
  TmaView t;
  t.base = sf.data;
  t.dtype = sf.dtype;
  t.dims = {u64(sf.size(inner)), u64(sf.size(outer)), u64(sf.size(0))};
  t.byte_strides[0] = sf.size(outer) > 1 ? u64(sf.stride(outer)) * 4 : unused_stride_bytes(sf.size(inner));
  fill_group_stride(t, sf);
  t.box = {box_inner, box_outer, 1};
  t.swizzle_bytes = 0;
  return t;
}
}  // namespace

TmaView mn_major_scale_view(const TensorView& sf, int box_rows) {
  return scale_view(sf, 1, static_cast<std::uint32_t>(box_rows), 1);
}

TmaView row_major_scale_view(const TensorView& sf, int box_rows) {
  return scale_view(sf, 2, kRowMajorScaleBoxBlocks, static_cast<std::uint32_t>(box_rows));
}

ScaleTensor scale_tensor(const TensorView& sf) {
  return {static_cast<const float*>(sf.data), sf.stride(0), sf.stride(1), sf.stride(2), static_cast<int>(sf.size(1))};
}

}  // namespace tilegemm::kernels
