#pragma once
// Decodes a packed weight (wq_params.hpp) into W [N, K] of the activations' dtype, K contiguous: the scratch the
// large-M path hands to the dense GEMM, and deep_gemm.weight_quant.dequantize. Each warp decodes one fragment
// block (16 rows x 64 k) with the GEMM's own lane decoder, so both paths see the same weights; int8's channel
// scale and MXFP4's exponent shift, which the GEMM applies to its accumulators, are applied here in fp32 before
// the one rounding to 16 bits.
#include "tilegemm/kernels/wq_decode.cuh"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/wq_params.hpp"

namespace tilegemm {

// Grid: ceil(n_pad / 16 · k_chunks / 4) CTAs of 128 threads. `out` [N][ldo] (ldo elements, even).
template <WeightFormat kFormat, int kGroup, bool kHasZeros, bool kHalf>
TG_DEVICE void sm90_wq_dequant(const WqGemmParams& p, u16* out, long long ldo, int k) {
  using namespace wq;
  constexpr int kGroupK = kFormat == WeightFormat::kMxfp4 ? kMxGroup : kGroup;
  prim::pdl_prologue_done();  // launched with PDL, the previous kernel may still be writing the weight
  const long long block = static_cast<long long>(blockIdx.x) * kDequantWarps + threadIdx.x / 32;
  const int row_blocks = ceil_div(p.n, kRowBlock);
  if (block >= static_cast<long long>(row_blocks) * p.k_chunks) return;
  const int rb = static_cast<int>(block / p.k_chunks), chunk = static_cast<int>(block % p.k_chunks);
  const int lane = static_cast<int>(threadIdx.x % 32), g = lane / 4, t = lane % 4;

  LaneCodes<kFormat, kGroup, kHasZeros, kHalf> w;
  w.load_codes(p.data + block * code_bytes_per_block(kFormat), lane);
  if constexpr (kFormat != WeightFormat::kInt8) {
    // Entries of this row block from the chunk's first group on.
    const long long first = (static_cast<long long>(rb) * p.groups + chunk * kChunkK / kGroupK) * kRowBlock;
    w.load_entries(static_cast<const u8*>(p.scales) + first * scale_entry_bytes(kFormat),
                   p.zeros ? p.zeros + first : nullptr, lane_entry<kGroupK>(0, t, g), p.exp_shift);
  }
  const int row_lo = rb * kRowBlock + g, row_hi = row_lo + 8;
  const float f_lo = row_factor<kFormat>(p.channel_scales, p.exp_shift, row_lo);
  const float f_hi = row_factor<kFormat>(p.channel_scales, p.exp_shift, row_hi);
  const bool scaled = kFormat != WeightFormat::kInt4;  // int4's values are final as decoded

  // Lane (g, t) ends up holding all 16 columns 16t..16t+15 of the chunk for rows g and g + 8: step s, register r
  // give the pair at column 16t + 4s + 2(r / 2) of row g (r even) or g + 8 (r odd). Gathered in column order, a row's
  // 16 values leave as two 16-byte stores (a warp then fills whole 32-byte sectors in two instructions instead of
  // eight of 4 bytes each), where `out`'s address and row stride allow; otherwise pair by pair.
  u32 words[2][8];  // [row_lo, row_hi][column pair]
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    u32 a[4];
    w.step(s, a);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      u32 v = a[r];
      if (scaled) {
        const float f = r % 2 == 0 ? f_lo : f_hi;
        v = prim::pack_x2<kHalf>(prim::half_to_float<kHalf>(v & 0xffffu) * f, prim::half_to_float<kHalf>(v >> 16) * f);
      }
      words[r % 2][2 * s + r / 2] = v;
    }
  }
  const int col0 = chunk * kChunkK + 16 * t;
  const bool vector_stores = ldo % 8 == 0 && reinterpret_cast<unsigned long long>(out) % 16 == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = h == 0 ? row_lo : row_hi;
    if (row >= p.n) continue;
    u16* dst = out + row * ldo + col0;
    if (vector_stores) {
      // K % 8 == 0: each 8-column half is wholly inside the row or wholly past K.
#pragma unroll
      for (int q = 0; q < 2; ++q)
        if (col0 + 8 * q < k)
          *reinterpret_cast<uint4*>(dst + 8 * q) =
              make_uint4(words[h][4 * q], words[h][4 * q + 1], words[h][4 * q + 2], words[h][4 * q + 3]);
    } else {
      // K % 8 == 0 and every column here is even: each pair is inside the row and 4-byte aligned.
#pragma unroll
      for (int c = 0; c < 8; ++c)
        if (col0 + 2 * c < k) *reinterpret_cast<u32*>(dst + 2 * c) = words[h][c];
    }
  }
}

}  // namespace tilegemm
