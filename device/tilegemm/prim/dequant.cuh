#pragma once
// Register-level decoding of packed weight codes into pairs of 16-bit floats (bf16 or fp16), the A registers of an
// mma.sync.m16n8k16 (layout: wq_params.hpp). Every decode is exact: the only rounding is the scale multiply.
// kHalf selects fp16 (true) or bf16 (false) arithmetic; u32 values hold two 16-bit floats, the lower one low.
// e2m1x8_to_e4m3x8 decodes FP4 into e4m3 instead, for mma.sync.m16n8k32 (sm90_fp8_fp4_gemm.cuh).
#include "tilegemm/prim/common.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm::prim {

// lop3.b32 d, a, b, c, 0xEA;  d = (a & b) | c in one instruction.                                sm_50
TG_DEVICE u32 and_or(u32 a, u32 b, u32 c) {
  u32 d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// sub.rn.{bf16x2,f16x2} d, a, b;                                                        bf16x2: sm_90, f16x2: sm_53
template <bool kHalf>
TG_DEVICE u32 sub_x2(u32 a, u32 b) {
  u32 d;
  if constexpr (kHalf)
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else
    asm("sub.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// mul.rn.{bf16x2,f16x2} d, a, b;                                                        bf16x2: sm_90, f16x2: sm_53
template <bool kHalf>
TG_DEVICE u32 mul_x2(u32 a, u32 b) {
  u32 d;
  if constexpr (kHalf)
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// cvt.rn.{bf16x2,f16x2}.f32 d, hi, lo;  two floats into one pair (exact for the small integers packed here).
template <bool kHalf>
TG_DEVICE u32 pack_x2(float lo, float hi) {
  u32 d;
  if constexpr (kHalf)
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// A 16-bit float's value (bits in the low half) as fp32: exact.
template <bool kHalf>
TG_DEVICE float half_to_float(u32 bits) {
  if constexpr (kHalf) {
    float f;
    asm("{ .reg .b16 h; cvt.u16.u32 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "r"(bits));
    return f;
  } else {
    return __uint_as_float(bits << 16);
  }
}

// One fp32 as the 16-bit float of kHalf (round to nearest even), in the low half.
template <bool kHalf>
TG_DEVICE u16 float_to_half(float v) {
  u16 h;
  if constexpr (kHalf)
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  else
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}

// D's element `index` = v in D's dtype (fp32, or bf16 / fp16 rounded to nearest even).
template <DType kOut>
TG_DEVICE void store_as(void* d, long long index, float v) {
  if constexpr (kOut == DType::kFloat32)
    static_cast<float*>(d)[index] = v;
  else
    static_cast<u16*>(d)[index] = float_to_half<kOut == DType::kFloat16>(v);
}

// The 16-bit float whose value is 2^e for the exponent's magnitude range of integers below: OR-ing a 4-bit code q
// into its mantissa gives magic + q exactly (bf16 128 = 0x4300 has a mantissa unit of 1, as fp16 1024 = 0x6400).
template <bool kHalf>
constexpr u32 kInt4Magic = kHalf ? 0x6400u : 0x4300u;

// A 16-bit float of value magic + z for a zero point z in 0..15, in both halves (subtracted from magic + q).
template <bool kHalf>
TG_DEVICE u32 int4_zero_x2(u32 z) {
  const u32 h = kInt4Magic<kHalf> | z;
  return h | (h << 16);
}

// The four A registers of step words `q` (nibbles j and j + 4 into register j) of 4-bit integer codes minus their
// zero points: z_lo for registers 0 and 2 (row g), z_hi for 1 and 3 (row g + 8), each from int4_zero_x2.
template <bool kHalf>
TG_DEVICE void decode_int4(u32 q, u32 z_lo, u32 z_hi, u32 (&a)[4]) {
  constexpr u32 kMagic2 = kInt4Magic<kHalf> | (kInt4Magic<kHalf> << 16);
  a[0] = sub_x2<kHalf>(and_or(q, 0x000f000fu, kMagic2), z_lo);
  a[1] = sub_x2<kHalf>(and_or(q >> 4, 0x000f000fu, kMagic2), z_hi);
  a[2] = sub_x2<kHalf>(and_or(q >> 8, 0x000f000fu, kMagic2), z_lo);
  a[3] = sub_x2<kHalf>(and_or(q >> 12, 0x000f000fu, kMagic2), z_hi);
}

// The four A registers (bf16) of step word `q` of e2m1 codes, each value times 2^-126: the code's sign goes to bit
// 15 and its exponent and mantissa bits to bf16 bits 8..6, the two lowest exponent bits and the top mantissa bit,
// which reads as e2m1 scaled by 2^-126 (subnormal codes land on bf16 subnormals). The scale multiply restores it.
TG_DEVICE u32 e2m1_top_nibbles_bf16x2(u32 q) {
  return (q & 0x80008000u) | ((q >> 6) & 0x01c001c0u);
}
TG_DEVICE void decode_e2m1(u32 q, u32 (&a)[4]) {
  a[3] = e2m1_top_nibbles_bf16x2(q);
  a[2] = e2m1_top_nibbles_bf16x2(q << 4);
  a[1] = e2m1_top_nibbles_bf16x2(q << 8);
  a[0] = e2m1_top_nibbles_bf16x2(q << 12);
}

// The bf16 multiplier 2^(e - 1 - shift) for a UE8M0 exponent e: 2^(e - 127) times the 2^126 decode_e2m1 left out,
// divided by the weight's exponent shift (applied back to the accumulator). An exponent that would need a subnormal
// multiplier (e <= shift - 126, only with a shift) gives 0: its weights are 2^-250 of the largest ones'. Returned in
// both halves; two instructions, as it runs for two rows of every chunk.
TG_DEVICE u32 mx_multiplier_bf16x2(u32 e, int shift) {
  const int field = max(static_cast<int>(e) + 126 - shift, 0);  // biased bf16 exponent of the multiplier
  return static_cast<u32>(field) * 0x00800080u;                 // (field << 7) in both halves
}

// lop3.b32 d, a, b, c, 0x6A;  d = (a & b) ^ c in one instruction.                                sm_50
TG_DEVICE u32 and_xor(u32 a, u32 b, u32 c) {
  u32 d;
  asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// One A register from bytes lo and hi (0..3) of `w`, unsigned codes b, each as the value b - 128, exactly.
//   fp16: 0x64·· is 1024 + b (a 10-bit mantissa holds any byte); minus 1024 + 128.
//   bf16: a 7-bit mantissa holds b & 127 under 128 (0x43··); minus 128 when b >= 128, 256 when not: bf16 128 and 256
//   differ in bit 7 only, which is b's top bit flipped.
template <bool kHalf>
TG_DEVICE u32 int8_pair(u32 w, u32 selector) {
  if constexpr (kHalf) return sub_x2<true>(__byte_perm(w, 0x64646464u, selector), 0x64806480u);
  const u32 x = __byte_perm(w, 0u, selector);  // the two bytes in the halves' low bytes
  return sub_x2<false>(and_or(x, 0x007f007fu, 0x43004300u), and_xor(x, 0x00800080u, 0x43804380u));
}

// The four A registers of int8 step words w0 (registers 0, 1) and w1 (registers 2, 3), bytes 0/1 into the low and
// high half of the first register, 2/3 of the second.
template <bool kHalf>
TG_DEVICE void decode_int8(u32 w0, u32 w1, u32 (&a)[4]) {
  // byte_perm selectors: bytes 0 and 1 (or 2 and 3) of w into bytes 0 and 2, byte 4 (the filler) into 1 and 3.
  constexpr u32 kLow = 0x4140u, kHigh = 0x4342u;
  a[0] = int8_pair<kHalf>(w0, kLow);
  a[1] = int8_pair<kHalf>(w0, kHigh);
  a[2] = int8_pair<kHalf>(w1, kLow);
  a[3] = int8_pair<kHalf>(w1, kHigh);
}

// Eight e2m1 codes in k order (DeepGEMM's FP4 packing: byte i holds k 2i in its low nibble, 2i + 1 in its high one) as
// eight e4m3 bytes in k order, the first four in `lo`, the rest in `hi`, each 2^-6 times its code's value. Exact: with
// the code's two exponent bits as e4m3's low exponent bits and its mantissa bit as e4m3's top mantissa bit, exponent
// field e encodes 2^(e - 7), and e2m1's subnormal 0.5 (e = 0) lands on e4m3's subnormal 2^-7 = 0.5 · 2^-6.
TG_DEVICE void e2m1x8_to_e4m3x8(u32 w, u32& lo, u32& hi) {
  // Code i in the low nibble of byte i (high nibbles: other codes, masked below): even codes from w, odd from w >> 4.
  const u32 w4 = w >> 4;
  const u32 n_lo = __byte_perm(w, w4, 0x5140u), n_hi = __byte_perm(w, w4, 0x7362u);
  // Per byte: magnitude bits 2..0 to e4m3 bits 4..2, the sign (bit 3) to bit 7.
  lo = ((n_lo << 2) & 0x1c1c1c1cu) | ((n_lo << 4) & 0x80808080u);
  hi = ((n_hi << 2) & 0x1c1c1c1cu) | ((n_hi << 4) & 0x80808080u);
}

}  // namespace tilegemm::prim
