#pragma once
// The memory-bound kernels around the two grouped GEMMs of an FP8 MoE layer on one GPU (include/tilegemm/moe.hpp):
//
//   route         one CTA: per-expert pair counts in shared memory (each pair's rank from an atomic), then the
//                 experts' segments of the expert-sorted buffer (each starts on a 128-row boundary, the grouped
//                 GEMMs' psum layout) and each pair's row in it. Which rank a pair gets varies between runs; no
//                 result does, since every row is computed on its own and combine sums in k order.
//   dispatch      a token per CTA, a 128-column block per warp: the bf16 row quantised to e4m3 once (per-token 1x128
//                 scales, DeepGEMM's per_token_cast_to_fp8) and stored at each of its pairs' rows.
//   swiglu_quant  a pair's row per CTA: silu(gate) * up in fp32 from GEMM 1's bf16 [gate | up] row, quantised the
//                 same way for GEMM 2 (no bf16 rounding in between).
//   combine       a token per CTA, 8 columns per thread: the weighted sum of its pairs' GEMM 2 rows.
#include "tilegemm/moe_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/sync.cuh"

namespace tilegemm {

namespace moe {

TG_DEVICE float bf16_to_float(u32 bits16) {
  return __uint_as_float(bits16 << 16);
}

TG_DEVICE float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// DeepGEMM's per-token scale of a block with absolute maximum `amax`: max(amax, 1e-4) / 448, with ue8m0 rounded up
// to a power of two (exponent clamped to [1, 254], as its ceil_to_ue8m0).
TG_DEVICE float fp8_scale(float amax, bool ue8m0) {
  const float scale = fmaxf(amax, 1e-4f) / 448.0f;
  if (!ue8m0) return scale;
  const u32 bits = __float_as_uint(scale);
  int exponent = static_cast<int>((bits >> 23) & 0xff) + ((bits & 0x7fffff) != 0 ? 1 : 0);
  exponent = min(max(exponent, 1), 254);
  return __uint_as_float(static_cast<u32>(exponent) << 23);
}

// Four floats times `inv` as four e4m3 bytes (round to nearest even, saturating), the first in the lowest byte.
TG_DEVICE u32 to_e4m3x4(const float (&v)[4], float inv) {
  u16 lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(v[1] * inv), "f"(v[0] * inv));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(v[3] * inv), "f"(v[2] * inv));
  return static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
}

// One warp quantises its 128-column block `block` (4 values per lane) and returns the lane's e4m3 word; the scale
// comes back in `scale`.
TG_DEVICE u32 quantise_block(const float (&v)[4], bool ue8m0, float& scale) {
  const float amax = warp_max(fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3]))));
  scale = fp8_scale(amax, ue8m0);
  return to_e4m3x4(v, 1.0f / scale);
}

TG_DEVICE void store_fp8(const MoeFp8Rows& out, int row, int block, int lane, u32 word, float scale) {
  if (row >= out.rows) return;  // only a row_of not made by route for this buffer points past it
  u8* dst = out.data + static_cast<long long>(row) * out.stride + block * kQuantBlock + lane * 4;
  *reinterpret_cast<u32*>(dst) = word;
  if (lane == 0) out.sf[static_cast<long long>(block) * out.sf_block_stride + row] = scale;
}

// Four bf16 values at `src` (8-byte aligned) as floats.
TG_DEVICE void load_bf16x4(const u16* src, float (&v)[4]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(src);
  v[0] = bf16_to_float(raw.x & 0xffffu), v[1] = bf16_to_float(raw.x >> 16);
  v[2] = bf16_to_float(raw.y & 0xffffu), v[3] = bf16_to_float(raw.y >> 16);
}

}  // namespace moe

TG_DEVICE void sm90_moe_route(const MoeRouteParams& p) {
  __shared__ int count[moe::kMaxExperts];
  __shared__ int start[moe::kMaxExperts];
  prim::pdl_prologue_done();
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int pairs = p.tokens * p.topk;
  for (int e = tid; e < p.experts; e += threads) count[e] = 0;
  __syncthreads();
  const auto expert_of = [&](int i) {
    const long long offset = static_cast<long long>(i / p.topk) * p.idx_stride + i % p.topk;
    const long long id = p.idx_is_int64 ? static_cast<const long long*>(p.topk_idx)[offset]
                                        : static_cast<long long>(static_cast<const int*>(p.topk_idx)[offset]);
    return id >= 0 && id < p.experts ? static_cast<int>(id) : -1;
  };
  // The same thread revisits the same pairs below, so it reads back its own writes of row_of.
  for (int i = tid; i < pairs; i += threads) {
    const int e = expert_of(i);
    p.row_of[i] = e >= 0 ? atomicAdd(&count[e], 1) : -1;
  }
  __syncthreads();
  if (tid < 32) {
    // Warp 0 lays the segments out: each lane sums the aligned sizes of a contiguous chunk of experts, a warp scan
    // gives the chunk's first row, then the lane writes its experts' starts and ends.
    const int chunk = (p.experts + 31) / 32, first = tid * chunk, last = min(first + chunk, p.experts);
    int rows = 0;
    for (int e = first; e < last; ++e)
      rows += (count[e] + moe::kRowAlignment - 1) / moe::kRowAlignment * moe::kRowAlignment;
    int before = rows;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const int other = __shfl_up_sync(0xffffffffu, before, offset);
      if (tid >= offset) before += other;
    }
    int row = before - rows;
    for (int e = first; e < last; ++e) {
      start[e] = row;
      p.group_end[e] = row + count[e];
      row += (count[e] + moe::kRowAlignment - 1) / moe::kRowAlignment * moe::kRowAlignment;
    }
  }
  __syncthreads();
  for (int i = tid; i < pairs; i += threads) {
    const int rank = p.row_of[i];
    if (rank >= 0) p.row_of[i] = start[expert_of(i)] + rank;
  }
}

TG_DEVICE void sm90_moe_dispatch(const MoeDispatchParams& p) {
  prim::pdl_prologue_done();
  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32)), lane = static_cast<int>(threadIdx.x % 32);
  constexpr int kWarps = moe::kThreads / 32;
  const int blocks = p.hidden / moe::kQuantBlock;
  for (int t = static_cast<int>(blockIdx.x); t < p.tokens; t += static_cast<int>(gridDim.x)) {
    const int my_row = lane < p.topk ? __ldg(p.row_of + static_cast<long long>(t) * p.topk + lane) : -1;
    const u16* x = p.x + static_cast<long long>(t) * p.x_stride;
    for (int b = warp; b < blocks; b += kWarps) {
      float v[4];
      moe::load_bf16x4(x + b * moe::kQuantBlock + lane * 4, v);
      float scale;
      const u32 word = moe::quantise_block(v, p.ue8m0 != 0, scale);
      for (int k = 0; k < p.topk; ++k) {
        const int row = __shfl_sync(0xffffffffu, my_row, k);
        if (row >= 0) moe::store_fp8(p.out, row, b, lane, word, scale);
      }
    }
  }
}

TG_DEVICE void sm90_moe_swiglu_quant(const MoeSwigluParams& p) {
  prim::pdl_prologue_done();
  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32)), lane = static_cast<int>(threadIdx.x % 32);
  constexpr int kWarps = moe::kThreads / 32;
  const int blocks = p.inter / moe::kQuantBlock;
  for (int i = static_cast<int>(blockIdx.x); i < p.pairs; i += static_cast<int>(gridDim.x)) {
    const int row = __ldg(p.row_of + i);
    if (row < 0 || row >= p.out.rows) continue;
    const u16* h = p.h + static_cast<long long>(row) * p.h_stride;
    for (int b = warp; b < blocks; b += kWarps) {
      float gate[4], up[4], v[4];
      moe::load_bf16x4(h + b * moe::kQuantBlock + lane * 4, gate);
      moe::load_bf16x4(h + p.inter + b * moe::kQuantBlock + lane * 4, up);
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = gate[j] / (1.0f + __expf(-gate[j])) * up[j];
      float scale;
      const u32 word = moe::quantise_block(v, p.ue8m0 != 0, scale);
      moe::store_fp8(p.out, row, b, lane, word, scale);
    }
  }
}

TG_DEVICE void sm90_moe_combine(const MoeCombineParams& p) {
  prim::pdl_prologue_done();
  const int tid = static_cast<int>(threadIdx.x);
  const int chunks = p.hidden / 8;  // 8 bf16 = 16 bytes per thread and step
  for (int t = static_cast<int>(blockIdx.x); t < p.tokens; t += static_cast<int>(gridDim.x)) {
    const int* rows = p.row_of + static_cast<long long>(t) * p.topk;
    const float* weights = p.weights + static_cast<long long>(t) * p.weights_stride;
    for (int c = tid; c < chunks; c += moe::kThreads) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int k = 0; k < p.topk; ++k) {
        const int row = __ldg(rows + k);
        if (row < 0 || row >= p.rows) continue;
        const float w = __ldg(weights + k);
        const uint4 raw = *reinterpret_cast<const uint4*>(p.y2 + static_cast<long long>(row) * p.y2_stride + c * 8);
        const u32 words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[2 * j] += w * moe::bf16_to_float(words[j] & 0xffffu);
          acc[2 * j + 1] += w * moe::bf16_to_float(words[j] >> 16);
        }
      }
      *reinterpret_cast<uint4*>(p.y + static_cast<long long>(t) * p.y_stride + c * 8) =
          make_uint4(prim::pack_bf16x2(acc[0], acc[1]), prim::pack_bf16x2(acc[2], acc[3]),
                     prim::pack_bf16x2(acc[4], acc[5]), prim::pack_bf16x2(acc[6], acc[7]));
    }
  }
}

}  // namespace tilegemm
