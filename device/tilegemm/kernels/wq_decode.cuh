#pragma once
// One lane's share of a fragment block of packed weight codes (wq_params.hpp): its 16-byte code word(s) and group
// entries in, four steps of mma.sync A registers (16-bit floats) out. Shared by the fused GEMM, which reads the
// block from shared memory, and the dequantise kernel, which reads it from global memory, so both decode alike.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/dequant.cuh"
#include "tilegemm/prim/swizzle.cuh"
#include "tilegemm/wq_params.hpp"

namespace tilegemm::wq {

// kScale: multiply each decoded int4 weight by its group scale (false: the caller scales the products).
template <WeightFormat kFormat, int kGroup, bool kHasZeros, bool kHalf, bool kScale = true>
struct LaneCodes {
  static constexpr bool kInt4 = kFormat == WeightFormat::kInt4, kInt8 = kFormat == WeightFormat::kInt8;
  static constexpr int kWords = kInt8 ? 2 : 1;  // 16-byte words per lane and fragment block
  static constexpr int kGroupK = kFormat == WeightFormat::kMxfp4 ? kMxGroup : kGroup;

  uint4 q[kWords];
  u32 mul_lo = 0, mul_hi = 0;    // rows g, g + 8: int4 scale / MXFP4 multiplier, in both halves
  u32 zero_lo = 0, zero_hi = 0;  // rows g, g + 8: int4 magic + zero point, in both halves

  // The lane's code words of the fragment block at `block` (shared or global memory, 16-byte aligned).
  TG_DEVICE void load_codes(const u8* block, int lane) {
#pragma unroll
    for (int w = 0; w < kWords; ++w) q[w] = *reinterpret_cast<const uint4*>(block + (w * kLanes + lane) * 16);
  }

  // The group entries of rows g and g + 8: `entry` indexes row g's value in `scales` / `zeros` (row g + 8 is 8
  // entries on), as laid out [group][16 rows].
  TG_DEVICE void load_entries(const u8* scales, const u8* zeros, int entry, int exp_shift) {
    if constexpr (kInt4) {
      const u32 s_lo = reinterpret_cast<const u16*>(scales)[entry];
      const u32 s_hi = reinterpret_cast<const u16*>(scales)[entry + 8];
      mul_lo = s_lo | (s_lo << 16), mul_hi = s_hi | (s_hi << 16);
      zero_lo = prim::int4_zero_x2<kHalf>(kHasZeros ? zeros[entry] : 8u);
      zero_hi = prim::int4_zero_x2<kHalf>(kHasZeros ? zeros[entry + 8] : 8u);
    } else if constexpr (!kInt8) {
      mul_lo = prim::mx_multiplier_bf16x2(scales[entry], exp_shift);
      mul_hi = prim::mx_multiplier_bf16x2(scales[entry + 8], exp_shift);
    }
  }

  // A registers of step s (0..3): register j holds rows g (j even) / g + 8 (j odd) at the step's k pair.
  TG_DEVICE void step(int s, u32 (&a)[4]) const {
    if constexpr (kInt8) {
      const uint4& plane = q[s / 2];
      prim::decode_int8<kHalf>(prim::word_of(plane, 2 * (s % 2)), prim::word_of(plane, 2 * (s % 2) + 1), a);
      return;
    } else {
      if constexpr (kInt4)
        prim::decode_int4<kHalf>(prim::word_of(q[0], s), zero_lo, zero_hi, a);
      else
        prim::decode_e2m1(prim::word_of(q[0], s), a);
      if constexpr (kScale || !kInt4) {
        a[0] = prim::mul_x2<kHalf>(a[0], mul_lo), a[1] = prim::mul_x2<kHalf>(a[1], mul_hi);
        a[2] = prim::mul_x2<kHalf>(a[2], mul_lo), a[3] = prim::mul_x2<kHalf>(a[3], mul_hi);
      }
    }
  }

  // int4 scales as fp32 (rows g, g + 8), for callers that scale the products.
  TG_DEVICE float scale_lo() const {
    return prim::half_to_float<kHalf>(mul_lo & 0xffffu);
  }
  TG_DEVICE float scale_hi() const {
    return prim::half_to_float<kHalf>(mul_hi & 0xffffu);
  }
};

// Index of row g's entry for the 16 k of lane t in chunk c of a run of groups starting at a chunk boundary.
template <int kGroupK>
TG_DEVICE int lane_entry(int c, int t, int g) {
  return ((c * kChunkK + 16 * t) / kGroupK) * kRowBlock + g;
}

// The factor a row's accumulator (or decoded value) still needs: int8's channel scale, MXFP4's 2^exp_shift.
template <WeightFormat kFormat>
TG_DEVICE float row_factor(const float* channel_scales, int exp_shift, int row) {
  if constexpr (kFormat == WeightFormat::kInt8) return channel_scales[row];
  if constexpr (kFormat == WeightFormat::kMxfp4) return __int_as_float((127 + exp_shift) << 23);
  return 1.f;
}

}  // namespace tilegemm::wq
