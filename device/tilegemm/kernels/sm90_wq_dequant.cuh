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

#pragma unroll
  for (int s = 0; s < 4; ++s) {
    u32 a[4];
    w.step(s, a);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      // Register r: row g (r even) or g + 8, k pair 16t + 4s (r < 2) or 16t + 4s + 2.
      const int row = r % 2 == 0 ? row_lo : row_hi;
      const int col = chunk * kChunkK + 16 * t + 4 * s + 2 * (r / 2);
      if (row >= p.n || col >= k) continue;
      u32 v = a[r];
      if (scaled) {
        const float f = r % 2 == 0 ? f_lo : f_hi;
        v = prim::pack_x2<kHalf>(prim::half_to_float<kHalf>(v & 0xffffu) * f, prim::half_to_float<kHalf>(v >> 16) * f);
      }
      // K % 8 == 0 and col is even: the pair is inside the row and 4-byte aligned.
      *reinterpret_cast<u32*>(out + row * ldo + col) = v;
    }
  }
}

}  // namespace tilegemm
