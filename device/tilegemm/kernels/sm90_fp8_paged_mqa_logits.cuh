#pragma once
// DeepSeek-V3.2's paged MQA logits (the lightning indexer's decode step) on SM90:
//   logits[b·next_n + i, j] = Σ_h weights[b·next_n + i, h] · relu(scale[j] · Σ_d q[b, i, h, d] · kv[j, d])
// for every token j < context_lens[b, i] of batch item b, whose KV cache is paged: token j lives in block
// block_table[b, j / 64], a block holding 64 tokens' fp8 values [64][128] and then their fp32 scales [64].
// Columns from context_lens[b, i] up to the end of the item's last block hold -inf; later columns are not written.
//
// The kernel reads the KV cache once per batch item: each KV block is loaded once and serves the item's next_n
// rows. It is bound by that read (8448 bytes per block against 2·64·next_n·H·128 FLOP).
//
// Shape of the work. Units are (item, KV block); the metadata kernel splits them into one run per CTA
// (sm90_paged_mqa_logits_metadata.cuh). One producer warp walks the CTA's run: it reads the item's context
// lengths and its block-table row (32 entries per load, one load ahead), loads each item's Q tile [next_n·H][128]
// and weights into a Q stage, and each block's values and scales into a KV stage of the consumer warpgroups' rings
// in turn (TMA), with a unit record (item, block, row lengths, Q stage) beside it. Each consumer warpgroup computes
// its block as one wgmma chain: A = the block's 64 tokens (M = 64), B = the item's Q rows (N = next_n·H), K = 128
// in four k32 steps. Tokens on M keep the sum over heads inside a quad of lanes: each thread applies relu and the
// weights to its accumulators, the quad adds its partial sums with two shuffles, and the token's scale multiplies
// the result (scales are positive: relu(s·x) = s·relu(x)). Then each lane of the quad stores one (row, token).
//
// Q stages are shared by the warpgroups: one is released when every warpgroup has finished its last block of the
// item; the producer arrives for the warpgroups that get no block of it.
#include "tilegemm/paged_mqa_logits_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/prim/wgmma.cuh"

namespace tilegemm {

namespace paged_mqa {

// What the producer tells a consumer warpgroup about the KV stage beside it. b < 0: no more work.
struct alignas(16) UnitRecord {
  int b;            // batch item
  int k;            // KV block of the item (tokens 64k ..)
  int context[2];   // the item's rows' context lengths
  int q_stage;      // the Q stage holding the item's Q and weights,
  int q_phase;      // and the phase it was filled in
  int last_for_wg;  // no later block of this item comes to this warpgroup: release the Q stage after it
  int pad;
};
static_assert(sizeof(UnitRecord) == kRecordBytes, "the record's size is part of the shared-memory budget");

TG_DEVICE float negative_infinity() {
  return __int_as_float(0xff800000);
}

}  // namespace paged_mqa

// kNextN: query rows per item (1, 2). kHeads: 32 or 64. kWarpgroups: consumer warpgroups (blocks computed at
// once). kStages: KV stages per warpgroup. kQStages: Q stages. kBf16: bf16 logits (else fp32).
template <int kNextN, int kHeads, int kWarpgroups, int kStages, int kQStages, bool kBf16>
TG_DEVICE void sm90_fp8_paged_mqa_logits(const PagedMqaLogitsParams& p) {
  using namespace paged_mqa;
  static_assert(kNextN >= 1 && kNextN <= kMaxNextN, "next_n is 1 or 2");
  static_assert(kHeads == 32 || kHeads == 64, "32 or 64 heads");
  static_assert(kWarpgroups >= 1 && kWarpgroups <= 4, "1 to 4 consumer warpgroups");
  static_assert(kStages >= 2 && kQStages >= 2, "rings of at least two stages");
  constexpr int kN = kNextN * kHeads;  // wgmma N: the item's Q rows
  constexpr int kQBytes = q_tile_bytes(kNextN, kHeads);
  constexpr int kWeightBytes = weights_bytes(kNextN, kHeads);
  constexpr int kKvStages = kWarpgroups * kStages;
  constexpr int kConsumerWarps = 4 * kWarpgroups;
  constexpr int kHeadGroups = kHeads / 8;  // 8-column accumulator groups per row
  static_assert(kQBytes % 1024 == 0 && kWeightBytes % 128 == 0, "TMA destinations keep their alignment");

  // clang-format off
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  u8* q_tiles = smem;                                           // [kQStages][kN][128]     128-byte swizzle
  u8* kv_tiles = q_tiles + kQStages * kQBytes;                  // [kKvStages][64][128]    128-byte swizzle
  float* scales = reinterpret_cast<float*>(kv_tiles + kKvStages * kKvBytes);  // [kKvStages][64]
  float* weights = scales + kKvStages * kBlockKv;               // [kQStages][kNextN][kHeads]
  auto* records = reinterpret_cast<UnitRecord*>(weights + kQStages * kNextN * kHeads);  // [kKvStages]
  auto* q_bars = reinterpret_cast<prim::StageBarriers<kQStages>*>(records + kKvStages);
  auto* kv_bars = reinterpret_cast<prim::StageBarriers<kStages>*>(q_bars + 1);         // [kWarpgroups]
  // clang-format on

  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32));
  const int lane = static_cast<int>(threadIdx.x % 32);

  if (threadIdx.x == 0) {
    // A Q stage is released by every warp of every consumer warpgroup (the producer stands in for warpgroups
    // without a block of the item); a KV stage by the four warps of its warpgroup.
    q_bars->init(kConsumerWarps);
    for (int w = 0; w < kWarpgroups; ++w) kv_bars[w].init(4);
    prim::fence_barrier_init();
    prim::tma_prefetch_descriptor(&p.tma_q);
    prim::tma_prefetch_descriptor(&p.tma_kv);
    prim::tma_prefetch_descriptor(&p.tma_kv_scales);
    prim::tma_prefetch_descriptor(&p.tma_weights);
  }
  __syncthreads();
  prim::pdl_prologue_done();

  if (warp == kConsumerWarps) {
    // Producer. Every lane walks the schedule (the loads are spread over the lanes); lane 0 issues the copies.
    const int first_b = __ldg(p.schedule + 2 * blockIdx.x), first_k = __ldg(p.schedule + 2 * blockIdx.x + 1);
    const int last_b = __ldg(p.schedule + 2 * blockIdx.x + 2), last_k = __ldg(p.schedule + 2 * blockIdx.x + 3);
    // Lanes < next_n: the item's rows' context lengths.
    const auto load_context = [&](int b) {
      return b >= 0 && b < p.batch && lane < kNextN ? __ldg(p.context_lens + static_cast<long long>(b) * kNextN + lane)
                                                    : 0;
    };
    // Lane l: block-table entry k + l of item b (-1, read by TMA as zeros, past the table's row).
    const auto load_ids = [&](int b, int k) {
      return b >= 0 && b < p.batch && k + lane < p.table_cols
                 ? __ldg(p.block_table + b * p.block_table_stride + k + lane)
                 : -1;
    };

    // Clamped, so a schedule made for other context lengths still ends (and reads nothing out of range).
    const auto clamp_item = [&](int x) { return x < 0 ? 0 : x > p.batch ? p.batch : x; };
    const int end_b = clamp_item(last_b), end_k = last_k;
    int b = clamp_item(first_b), k = first_k < 0 ? 0 : first_k;
    int context = load_context(b), next_context = load_context(b + 1);
    int ids = load_ids(b, k);
    prim::PipelineState<kStages> st;  // the round of the KV rings; unit u goes to warpgroup u % kWarpgroups
    int wg = 0;
    prim::PipelineState<kQStages> q_st;
    while (b < end_b || (b == end_b && k < end_k)) {
      const int context0 = __shfl_sync(0xffffffffu, context, 0);
      const int context1 = kNextN > 1 ? __shfl_sync(0xffffffffu, context, 1) : context0;
      const int blocks = kv_blocks(context0 > context1 ? context0 : context1);
      const int k_end = b == end_b ? (end_k < blocks ? end_k : blocks) : blocks;
      if (k < k_end) {
        // The item's Q rows and weights. Warpgroups that get none of its blocks here release the stage at once.
        q_bars->producer_acquire(q_st);
        const int users = k_end - k < kWarpgroups ? k_end - k : kWarpgroups;
        if (lane == 0) {
          u64* full = &q_bars->inputs_arrived[q_st.index];
          prim::mbarrier_arrive_expect_tx(full, kQBytes + kWeightBytes);
          prim::tma_load_3d(&p.tma_q, full, q_tiles + q_st.index * kQBytes, 0, b * kN, 0);
          prim::tma_load_3d(&p.tma_weights, full, weights + q_st.index * kNextN * kHeads, 0, b * kNextN, 0);
          for (int i = 0; i < 4 * (kWarpgroups - users); ++i) q_bars->consumer_release(q_st.index);
        }
        while (k < k_end) {
          const int count = k_end - k < 32 ? k_end - k : 32;
          // The next 32 entries (of this item, else of the next one) load while these blocks are issued.
          const bool more = k + 32 < k_end;
          const int next_ids = load_ids(more ? b : b + 1, more ? k + 32 : 0);
          for (int i = 0; i < count; ++i) {
            const int id = __shfl_sync(0xffffffffu, ids, i);
            prim::StageBarriers<kStages>& ring = kv_bars[wg];
            ring.producer_acquire(st);
            if (lane == 0) {
              const int slot = wg * kStages + static_cast<int>(st.index);
              records[slot] = UnitRecord{b,
                                         k + i,
                                         {context0, context1},
                                         static_cast<int>(q_st.index),
                                         static_cast<int>(q_st.phase),
                                         k + i + kWarpgroups >= k_end,
                                         0};
              u64* full = &ring.inputs_arrived[st.index];
              prim::mbarrier_arrive_expect_tx(full, kKvBytes + kScaleBytes);
              prim::tma_load_3d(&p.tma_kv, full, kv_tiles + slot * kKvBytes, 0, 0, id);
              prim::tma_load_3d(&p.tma_kv_scales, full, scales + slot * kBlockKv, 0, id, 0);
            }
            __syncwarp();
            if (++wg == kWarpgroups) wg = 0, st.advance();
          }
          ids = next_ids;
          k += count;
        }
        q_st.advance();
      } else {
        ids = load_ids(b + 1, 0);  // nothing of item b here: the entries loaded for it go unused
      }
      ++b, k = 0;
      context = next_context;
      next_context = load_context(b + 1);
    }
    // One end record per ring: the next kWarpgroups units land in every ring once.
    for (int i = 0; i < kWarpgroups; ++i) {
      prim::StageBarriers<kStages>& ring = kv_bars[wg];
      ring.producer_acquire(st);
      if (lane == 0) {
        records[wg * kStages + static_cast<int>(st.index)].b = -1;
        prim::mbarrier_arrive(&ring.inputs_arrived[st.index]);
      }
      __syncwarp();
      if (++wg == kWarpgroups) wg = 0, st.advance();
    }
    return;
  }

  // Consumers. Warp w4 = warp % 4 of warpgroup wg holds tokens 16·w4 + g and 16·w4 + g + 8 of each block, and the
  // accumulator columns 8j + 2t, 8j + 2t + 1 (column = row i · kHeads + head) for lane (g, t).
  const int wg = warp / 4, w4 = warp % 4, g = lane / 4, t = lane % 4;
  prim::StageBarriers<kStages>& ring = kv_bars[wg];
  prim::PipelineState<kStages> st;
  for (;;) {
    ring.consumer_wait(st);
    const int slot = wg * kStages + static_cast<int>(st.index);
    const UnitRecord r = records[slot];
    if (static_cast<int>(warp_uniform(static_cast<u32>(r.b))) < 0) break;
    prim::PipelineState<kQStages> q_st;
    q_st.index = static_cast<u32>(r.q_stage), q_st.phase = static_cast<u32>(r.q_phase);
    q_bars->consumer_wait(q_st);

    // S[token][row·kHeads + head] = Σ_d kv[token][d] · q[row][head][d], fp32 accumulators.
    float acc[kN / 2];
    const u64 desc_kv = prim::make_smem_desc(smem_addr(kv_tiles + slot * kKvBytes), 0, 1024, prim::SmemSwizzle::k128B);
    const u64 desc_q =
        prim::make_smem_desc(smem_addr(q_tiles + r.q_stage * kQBytes), 0, 1024, prim::SmemSwizzle::k128B);
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) prim::wgmma_fence_operand(acc[i]);
    prim::wgmma_fence();
#pragma unroll
    for (int s = 0; s < kHeadDim / kMmaK; ++s)
      prim::wgmma_e4m3<kN>(prim::advance_smem_desc(desc_kv, s * kMmaK), prim::advance_smem_desc(desc_q, s * kMmaK), acc,
                           s > 0 ? 1u : 0u);
    prim::wgmma_commit();
    const float* block_scales = scales + slot * kBlockKv;
    const float scale0 = block_scales[16 * w4 + g], scale1 = block_scales[16 * w4 + g + 8];
    prim::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) prim::wgmma_fence_operand(acc[i]);
    __syncwarp();
    if (lane == 0) ring.consumer_release(st.index);

    // Per row: Σ_h w[h]·relu(S) over this thread's columns (four partial sums), then over the quad's lanes.
    const float* w_rows = weights + r.q_stage * kNextN * kHeads;
    float out[kNextN][2];
#pragma unroll
    for (int i = 0; i < kNextN; ++i) {
      float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int jj = 0; jj < kHeadGroups; ++jj) {
        const int j = i * kHeadGroups + jj;
        const float2 w = *reinterpret_cast<const float2*>(w_rows + i * kHeads + 8 * jj + 2 * t);
        part[0] = fmaf(fmaxf(acc[4 * j + 0], 0.f), w.x, part[0]);
        part[1] = fmaf(fmaxf(acc[4 * j + 1], 0.f), w.y, part[1]);
        part[2] = fmaf(fmaxf(acc[4 * j + 2], 0.f), w.x, part[2]);
        part[3] = fmaf(fmaxf(acc[4 * j + 3], 0.f), w.y, part[3]);
      }
      float v0 = part[0] + part[1], v1 = part[2] + part[3];  // tokens g and g + 8
      v0 += __shfl_xor_sync(0xffffffffu, v0, 1);
      v1 += __shfl_xor_sync(0xffffffffu, v1, 1);
      v0 += __shfl_xor_sync(0xffffffffu, v0, 2);
      v1 += __shfl_xor_sync(0xffffffffu, v1, 2);
      out[i][0] = v0 * scale0;
      out[i][1] = v1 * scale1;
    }
    if (r.last_for_wg) {
      __syncwarp();  // every lane has read the weights
      if (lane == 0) q_bars->consumer_release(q_st.index);
    }

    // Lane t of the quad stores row t / 2, token g + 8·(t % 2); past the row's context: -inf.
    if (t < 2 * kNextN) {
      const int row = t / 2, half = t % 2;
      float v = out[0][0];
      if (half == 1) v = out[0][1];
      if constexpr (kNextN > 1) {
        if (row == 1) v = half == 0 ? out[1][0] : out[1][1];
      }
      const int token = r.k * kBlockKv + 16 * w4 + g + 8 * half;
      const int context = row == 0 ? r.context[0] : r.context[1];
      if (token < p.n_cols) {
        if (token >= context) v = negative_infinity();
        const long long offset = (static_cast<long long>(r.b) * kNextN + row) * p.ld_logits + token;
        if constexpr (kBf16)
          static_cast<u16*>(p.logits)[offset] = static_cast<u16>(prim::pack_bf16x2(v, 0.f));
        else
          static_cast<float*>(p.logits)[offset] = v;
      }
    }
    st.advance();
  }
}

}  // namespace tilegemm
