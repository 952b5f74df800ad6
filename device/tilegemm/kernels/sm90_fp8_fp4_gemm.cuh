#pragma once
// FP8 x FP4 GEMM on SM90 (no FP4 tensor core): D[M, N] = A[M, K] · Bᵀ with A e4m3 (1x128 fp32 scales per token) and B
// e2m1 packed two per byte in DeepGEMM's layout (1x32 fp32 scales per row; fp8_fp4_params.hpp). B's codes are decoded
// in registers into e4m3 and multiplied on mma.sync.m16n8k32, so B is read at half a byte per weight.
//
// Computed transposed, as the weight-only kernel: Dᵀ = B · Aᵀ, B's rows on the mma's M (16 per consumer warp, 64 per
// CTA) and the tokens on its N (8 per n-tile, BLOCK_M per CTA). One producer lane streams each 256-k stage with TMA:
// A as two [BLOCK_M][128] boxes and B as one [64][128 bytes] box (both 128-byte swizzle), B's scales as a [64][8]
// box. Each mma step covers one 32-k scale group of B: lane (g, t) takes k 32q + 8t .. 32q + 8t + 7 of step q as the
// mma's columns 4t..4t+3 and 4t+16..4t+19 (one 32-bit word of B per row, 8 contiguous bytes of A per token), so
// the products of a step share B's scale and are scaled as they are summed; A's scale follows every 128 k.
// Splits > 1 write fp32 partial tiles; the last CTA of a tile adds them in split order and writes D. M-grouped masked
// (MoE experts): blockIdx.y is the expert, whose token blocks up to masked_m the CTA walks one after another.
// kMx runs MXFP8 instead: B e4m3 (two [64][128] boxes a stage, read like A, no decode) and A scaled per 32 k too (a
// [BLOCK_M][8] box a stage), so each step's products take the product of the two scales.
#include "tilegemm/fp8_fp4_params.hpp"
#include "tilegemm/kernels/k_group_sum.cuh"
#include "tilegemm/kernels/transposed_tile_store.cuh"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/dequant.cuh"
#include "tilegemm/prim/mma_sync.cuh"
#include "tilegemm/prim/swizzle.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

// kBlockM: tokens per CTA (8..64). kStages: ring depth. kKGroups: sets of consumer warps taking turns at the ring's
// slots (k_group_sum.cuh). kOut: D's dtype (bf16 or fp32). kReduce: K split over CTAs
// (dense only). kMasked: M-grouped masked over experts. kMx: MXFP8 (B e4m3, 1x32 scales on both operands).
template <int kBlockM, int kStages, int kKGroups, DType kOut, bool kReduce, bool kMasked = false, bool kMx = false>
TG_DEVICE void sm90_fp8_fp4_gemm(const Fp8Fp4GemmParams& p) {
  using namespace fp8_fp4;
  static_assert(kBlockM % 8 == 0 && kBlockM >= 8 && kBlockM <= kMaxBlockM, "BLOCK_M is 8..64 tokens, whole n-tiles");
  static_assert(kStages >= 2, "the ring needs at least two stages");
  static_assert(kKGroups == 1 || kKGroups == 2 || kKGroups == 4, "1, 2 or 4 sets of consumer warps");
  // A slot shared by two sets would let one wait on a fill two phases ahead, which a parity wait reads as done.
  static_assert(kStages % kKGroups == 0, "each ring slot serves one set of consumer warps");
  static_assert(kOut == DType::kBFloat16 || kOut == DType::kFloat32, "D is bf16 or fp32");
  static_assert(!(kReduce && kMasked), "splits are summed in the kernel for dense GEMMs only");
  constexpr int kNTiles = kBlockM / 8;
  constexpr int kABox = a_box_bytes(kBlockM);
  constexpr int kBOffset = b_offset(kBlockM), kSfbOffset = sfb_offset(kBlockM, kMx);
  constexpr int kSfaOffset = sfa_offset(kBlockM, kMx), kStageBytes = stage_bytes(kBlockM, kMx);
  // Boxes land whole (out of bounds: zeros).
  constexpr u32 kStageTx = 2 * kABox + kBlockN * b_row_bytes(kMx) + kBlockN * kGroupsPerStage * 4 +
                           (kMx ? kBlockM * kGroupsPerStage * 4 : 0);
  constexpr u32 kConsumerBarrier = 1;  // named barrier over set 0's consumer warps (0 is __syncthreads)
  constexpr u32 kKGroupBarrier = 2;    // named barrier over every consumer warp (the sets' sum)
  constexpr int kComputeWarps = kConsumerWarps * kKGroups;
  using SetSum = KGroupSum<kConsumerWarps, kKGroups, kNTiles>;
  // e2m1x8_to_e4m3x8 decodes B at 2^-6 of its value; A's scale carries the 2^6 back (MXFP8's B is not decoded).
  constexpr float kDecodeScale = kMx ? 1.0f : 64.0f;

  extern __shared__ u8 smem_raw[];
  // Aligned by an offset (not an integer round trip) so the compiler still knows these are shared-memory loads.
  u8* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  auto* barriers = reinterpret_cast<prim::StageBarriers<kStages>*>(smem + kStages * kStageBytes);
  int* last_flag = reinterpret_cast<int*>(barriers + 1);
  float* set_scratch = reinterpret_cast<float*>(reinterpret_cast<u8*>(last_flag) + 16);

  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32));
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int tile = static_cast<int>(blockIdx.x) / p.num_splits;
  const int split = static_cast<int>(blockIdx.x) % p.num_splits;
  const int n0 = (tile / p.m_blocks) * kBlockN;
  // Balanced K slices in whole stages: split s takes stages [s·S/splits, (s+1)·S/splits).
  const int total_stages = ceil_div(p.k, kStageK);
  const int stage_begin = split * total_stages / p.num_splits;
  const int stage_end = (split + 1) * total_stages / p.num_splits;

  if (threadIdx.x == 0) {
    barriers->init(kConsumerWarps);
    prim::fence_barrier_init();
    prim::tma_prefetch_descriptor(&p.tma_a);
    prim::tma_prefetch_descriptor(&p.tma_b);
    prim::tma_prefetch_descriptor(&p.tma_sfb);
    if constexpr (kMx) prim::tma_prefetch_descriptor(&p.tma_sfa);
  }
  __syncthreads();
  // NOTE: after the dependency wait: masked_m may come from the previous kernel.
  prim::pdl_prologue_done();

  // The CTA's expert and token blocks: m0 from m_first while below m_end (one block unless masked).
  const int expert = kMasked ? static_cast<int>(blockIdx.y) : 0;
  const int m_first = kMasked ? 0 : (tile % p.m_blocks) * kBlockM;
  const int m_end = kMasked ? min(p.m, p.masked_m[expert]) : p.m;
  const int m_last = kMasked ? m_end : m_first + 1;  // dense: exactly the one block at m_first
  const float* sfa_e = p.sfa + expert * p.sfa_expert_stride;

  if (warp == kComputeWarps) {  // producer: one lane issues every stage's copies
    if (prim::elect_one_sync()) {
      prim::PipelineState<kStages> st;
      for (int m0 = m_first; m0 < m_last; m0 += kBlockM) {
        for (int ks = stage_begin; ks < stage_end; ++ks, st.advance()) {
          const int k0 = ks * kStageK;
          barriers->producer_acquire(st);
          u64* full = &barriers->inputs_arrived[st.index];
          prim::mbarrier_arrive_expect_tx(full, kStageTx);
          u8* stage = smem + st.index * kStageBytes;
          prim::tma_load_3d(&p.tma_a, full, stage, k0, m0, expert);
          prim::tma_load_3d(&p.tma_a, full, stage + kABox, k0 + kScaleBlockK, m0, expert);
          if constexpr (kMx) {
            prim::tma_load_3d(&p.tma_b, full, stage + kBOffset, k0, n0, expert);
            prim::tma_load_3d(&p.tma_b, full, stage + kBOffset + kBlockN * 128, k0 + 128, n0, expert);
            prim::tma_load_3d(&p.tma_sfa, full, stage + kSfaOffset, k0 / kScaleGroupK, m0, expert);
          } else {
            prim::tma_load_3d(&p.tma_b, full, stage + kBOffset, k0 / 2, n0, expert);
          }
          prim::tma_load_3d(&p.tma_sfb, full, stage + kSfbOffset, k0 / kScaleGroupK, n0, expert);
        }
      }
    }
    return;
  }

  // Consumers: warp `rbw` of set `set`. Lane (g, t): B rows r_lo = 16·rbw + g and r_lo + 8 of the CTA's 64; token 8j +
  // g of n-tile j as the mma's B, and tokens 8j + 2t, 8j + 2t + 1 of its accumulators.
  const int g = lane / 4, t = lane % 4;
  const int set = warp / kConsumerWarps, rbw = warp % kConsumerWarps;
  const int r_lo = rbw * kRowBlock + g, r_hi = r_lo + 8;
  prim::PipelineState<kStages> st;
  for (int m0 = m_first; m0 < m_last; m0 += kBlockM) {
    float acc[kNTiles][4] = {};
    // A's scale rows of tokens 8j + 2t + e (null past the rows: their D is not stored, their scale reads as 0).
    const float* sfa_rows[kNTiles][2];
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int m = m0 + 8 * j + 2 * t + e;
        sfa_rows[j][e] = !kMx && m < m_end ? sfa_e + m * p.sfa_stride_m : nullptr;
      }
    for (int ks = stage_begin; ks < stage_end; ++ks, st.advance()) {
      if (!SetSum::owns(st.index, set)) continue;  // another set's stage
      barriers->consumer_wait(st);
      const u8* stage = smem + st.index * kStageBytes;
      const u8* b_box = stage + kBOffset;
      const float* sfb = reinterpret_cast<const float*>(stage + kSfbOffset);  // [64 rows][8 groups]
      const float* sfa = reinterpret_cast<const float*>(stage + kSfaOffset);  // MXFP8: [BLOCK_M tokens][8 groups]
#pragma unroll
      for (int h = 0; h < kStageK / kScaleBlockK; ++h) {  // the stage's 128-k blocks (A's scale blocks)
        const int kb = ks * (kStageK / kScaleBlockK) + h;
        if (kb * kScaleBlockK >= p.k) break;
        const u8* a_box = stage + h * kABox;
        float block[kNTiles][4] = {};
#pragma unroll
        for (int step = 0; step < kScaleBlockK / kScaleGroupK; ++step) {
          const int q = h * (kScaleBlockK / kScaleGroupK) + step;  // B's scale group within the stage
          u32 a[4];  // rows g, g + 8 at the mma's k 4t..4t+3, then rows g, g + 8 at k 4t+16..
          if constexpr (kMx) {
            // B e4m3: bytes 32·step + 8t .. + 7 of rows r_lo and r_hi in box h, as A's tokens below.
            const u8* box = b_box + h * kBlockN * 128;
            const uint2 v_lo =
                *reinterpret_cast<const uint2*>(prim::swizzled128(box, r_lo, 2 * step + t / 2) + 8 * (t % 2));
            const uint2 v_hi =
                *reinterpret_cast<const uint2*>(prim::swizzled128(box, r_hi, 2 * step + t / 2) + 8 * (t % 2));
            a[0] = v_lo.x, a[2] = v_lo.y, a[1] = v_hi.x, a[3] = v_hi.y;
          } else {
            // B FP4: bytes 16q + 4t of rows r_lo and r_hi (16-byte chunk q, word t).
            const u32 w_lo = *reinterpret_cast<const u32*>(prim::swizzled128(b_box, r_lo, q) + 4 * t);
            const u32 w_hi = *reinterpret_cast<const u32*>(prim::swizzled128(b_box, r_hi, q) + 4 * t);
            prim::e2m1x8_to_e4m3x8(w_lo, a[0], a[2]);
            prim::e2m1x8_to_e4m3x8(w_hi, a[1], a[3]);
          }
          const float s_lo = sfb[r_lo * kGroupsPerStage + q], s_hi = sfb[r_hi * kGroupsPerStage + q];
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) {
            // A: bytes 32·step + 8t .. + 7 of token 8j + g (16-byte chunk 2·step + t / 2, half t % 2).
            const uint2 v =
                *reinterpret_cast<const uint2*>(prim::swizzled128(a_box, 8 * j + g, 2 * step + t / 2) + 8 * (t % 2));
            const u32 b[2] = {v.x, v.y};
            float part[4] = {0.f, 0.f, 0.f, 0.f};
            prim::mma_m16n8k32_e4m3(part, a, b);
            if constexpr (kMx) {  // A's scales of tokens 8j + 2t, 8j + 2t + 1 for this group too
              const float a0 = sfa[(8 * j + 2 * t) * kGroupsPerStage + q];
              const float a1 = sfa[(8 * j + 2 * t + 1) * kGroupsPerStage + q];
              block[j][0] = fmaf(s_lo * a0, part[0], block[j][0]), block[j][1] = fmaf(s_lo * a1, part[1], block[j][1]);
              block[j][2] = fmaf(s_hi * a0, part[2], block[j][2]), block[j][3] = fmaf(s_hi * a1, part[3], block[j][3]);
            } else {
              block[j][0] = fmaf(s_lo, part[0], block[j][0]), block[j][1] = fmaf(s_lo, part[1], block[j][1]);
              block[j][2] = fmaf(s_hi, part[2], block[j][2]), block[j][3] = fmaf(s_hi, part[3], block[j][3]);
            }
          }
        }
        // FP4 B: A's scales of tokens 8j + 2t and 8j + 2t + 1 for this block (MXFP8: applied per step above).
#pragma unroll
        for (int j = 0; j < kNTiles; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float sa = 1.f;
            if constexpr (!kMx) sa = sfa_rows[j][e] ? __ldg(sfa_rows[j][e] + kb * p.sfa_stride_k) * kDecodeScale : 0.f;
            acc[j][e] = fmaf(sa, block[j][e], acc[j][e]);
            acc[j][2 + e] = fmaf(sa, block[j][2 + e], acc[j][2 + e]);
          }
      }
      __syncwarp();
      if (lane == 0) barriers->consumer_release(st.index);
    }

    if (!SetSum::sum(acc, set_scratch, set, rbw, lane, kKGroupBarrier)) continue;  // set 0 stores the tile
    void* d = static_cast<char*>(p.d) + expert * p.d_expert_bytes;
    const TransposedTileStore<kBlockM, kConsumerWarps, kOut> out{d, p.ldd, m0, m_end, n0, p.n, rbw, lane};
    if constexpr (!kReduce)
      out.store(acc);
    else
      out.reduce(acc, true, p.partials, p.counters, tile, split, p.num_splits, last_flag, kConsumerBarrier);
  }
}

}  // namespace tilegemm
