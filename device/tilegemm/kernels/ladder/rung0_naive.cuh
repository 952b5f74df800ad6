#pragma once
// Rung 0: the definition. One thread per output element walks all of K, reading its A row and its B row
// from global memory and doing fp32 FMAs on the CUDA cores. Nothing is reused on chip (beyond what L1/L2
// happen to catch), so the kernel asks the memory system for 2·K elements per output element, 2·M·N·K in
// all — a thousand times the minimum traffic for 4096³. The loads are 16 bytes (8 bf16 along K) so the
// instruction count, not the definition, is what makes it slow.
#include "tilegemm/kernels/ladder/ladder_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"

namespace tilegemm::ladder {

constexpr int kNaiveBlock = 16;  // 16x16 threads, one output element each

// The two bf16 of a u32 as floats (bf16 is the top half of an fp32).
TG_DEVICE float bf16_lo(u32 x) {
  return __uint_as_float(x << 16);
}
TG_DEVICE float bf16_hi(u32 x) {
  return __uint_as_float(x & 0xffff0000u);
}

TG_DEVICE float dot8(uint4 a, uint4 b, float acc) {
  const u32 av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    acc = fmaf(bf16_lo(av[i]), bf16_lo(bv[i]), acc);
    acc = fmaf(bf16_hi(av[i]), bf16_hi(bv[i]), acc);
  }
  return acc;
}

// grid (ceil(N/16), ceil(M/16)), block 256 threads.
TG_DEVICE void rung0_naive(const LadderParams& p) {
  const int col = blockIdx.x * kNaiveBlock + threadIdx.x % kNaiveBlock;
  const int row = blockIdx.y * kNaiveBlock + threadIdx.x / kNaiveBlock;
  if (row >= p.m || col >= p.n) return;
  const auto* a = static_cast<const u16*>(p.a) + row * p.lda;
  const auto* b = static_cast<const u16*>(p.b) + col * p.ldb;
  float acc = 0.0f;
  for (int k = 0; k < p.k; k += 8)
    acc = dot8(*reinterpret_cast<const uint4*>(a + k), *reinterpret_cast<const uint4*>(b + k), acc);
  static_cast<u16*>(p.d)[row * p.ldd + col] = static_cast<u16>(prim::pack_bf16x2(acc, 0.0f) & 0xffffu);
}

}  // namespace tilegemm::ladder
