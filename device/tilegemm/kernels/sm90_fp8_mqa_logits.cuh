#pragma once
// DeepSeek-V3.2's lightning indexer, prefill (DeepGEMM's fp8_mqa_logits on SM90):
//   logits[i, j] = Σ_h weights[i, h] · relu(kv_scale[j] · Σ_d q[i, h, d] · kv[j, d])   for ks[i] <= j < ke[i]
// q e4m3 [seq_len, H, D] (H 32 or 64, D 32, 64 or 128), kv e4m3 [seq_len_kv, D] with one fp32 scale per token,
// weights fp32 [seq_len, H], logits fp32 or bf16. Only each row's window is written (compressed: shifted to start at
// column 0); the clean-logits kernel (sm90_clean_logits.cuh) writes -inf around it.
//
// Shape of the work. A CTA block is block_q = 128 / H queries × all their heads: 128 rows of q, the N of one
// wgmma.m64n128k32 (e4m3, fp32 accumulators). A KV stage is 256 tokens; each of four consumer warpgroups multiplies
// its 64 of them (the wgmma's M) by the whole q block, K = D. Putting the tokens on M and the heads on N is what makes
// the head reduction cheap: a thread's accumulators hold two tokens × H/4 heads of every query, so relu, weight and sum
// run in registers and four lanes finish each sum with three or six shuffles (a reduce-scatter: each lane ends with
// its own outputs). kv_scale factors out of the relu, so it multiplies the sum: scales must be >= 0, as
// DeepGEMM's kernel also assumes (its casts give amax / 448).
//
// The CTA is persistent over q blocks (blockIdx.x, + gridDim.x, ...). Warp 0 of warpgroup 0 is the producer: per q
// block it reads the rows' windows, skips the block if every window is empty, loads the Q tile (TMA) and the
// weights (cp.async, any row stride) into a Q stage with the block's QBlockInfo, then streams the KV blocks that meet
// some row's window (TMA, tile + scales) through the KV ring, each with its KvBlockInfo. The consumers carry no
// schedule: they take Q stages until one says there is none left, and KV stages until one is marked last.
#include "tilegemm/mqa_logits_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/cp_async.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/prim/wgmma.cuh"

namespace tilegemm {

namespace mqa_logits {

// Register budgets (setmaxnreg). __launch_bounds__(640, 1) leaves each thread 96; the producer warpgroup gives
// its surplus to the consumers' 64 accumulators and 32 weights. NOTE: the budgets must not exceed what the launch
// allocated: an increase the pool cannot grant waits forever.
constexpr u32 kLaunchRegisters = 65536 / kThreads / 8 * 8;
constexpr u32 kProducerRegisters = 32;
constexpr u32 kConsumerRegisters = 112;
static_assert(128 * kProducerRegisters + kMathWarpgroups * 128 * kConsumerRegisters <= kThreads * kLaunchRegisters,
              "register budgets exceed what the launch bounds allocate");

constexpr int kIntMax = 0x7fffffff;

// redux.sync.{min,max}.s32 d, a, membermask;  the warp's minimum / maximum.                          sm_80
TG_DEVICE int warp_min(int v) {
  int r;
  asm volatile("redux.sync.min.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}
TG_DEVICE int warp_max(int v) {
  int r;
  asm volatile("redux.sync.max.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// cvt.rn.bf16.f32 d, a;  round to nearest even (-inf stays -inf).                                     sm_80
TG_DEVICE u16 bf16_bits(float x) {
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}

template <bool kBf16>
TG_DEVICE void store_logit(void* row, int column, float v) {
  if constexpr (kBf16)
    static_cast<u16*>(row)[column] = bf16_bits(v);
  else
    static_cast<float*>(row)[column] = v;
}

// wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {d}, desc-a, desc-b, 0, 1, 1;                         sm_90a
// The first K step of a block: scale-d = 0 overwrites the accumulators, so they are outputs only and the compiler may
// use their registers for other values between one block's epilogue and the next block's wgmma (prim's wrappers
// read and write them: with 32 weights beside them, some variants spilled).
TG_DEVICE void wgmma_m64n128k32_e4m3_overwrite(u64 desc_a, u64 desc_b, float* d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1;\n}\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]), "=f"(d[8]),
        "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]), "=f"(d[16]),
        "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]), "=f"(d[24]),
        "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]), "=f"(d[32]),
        "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]), "=f"(d[40]),
        "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]), "=f"(d[48]),
        "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]), "=f"(d[56]),
        "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(0));
}

// A row's window [lo, hi) clamped to [0, seq_len_kv) (and, compressed, to the row's width), and the column of token
// j being j - shift. A row past seq_len has an empty window.
struct RowWindow {
  int lo = 0, hi = 0, shift = 0;
};

template <bool kCompressed>
TG_DEVICE RowWindow row_window(const MqaLogitsParams& p, int q) {
  RowWindow w;
  if (q >= p.seq_len) return w;
  const int ks = __ldg(p.ks + q), ke = __ldg(p.ke + q);
  w.lo = min(max(ks, 0), p.seq_len_kv);
  long long end = min(ke, p.seq_len_kv);
  if constexpr (kCompressed) end = min(end, static_cast<long long>(ks) + p.max_seqlen_k);
  w.hi = static_cast<int>(max(end, static_cast<long long>(w.lo)));
  w.shift = kCompressed ? ks : 0;
  return w;
}

// Sums N values across the four lanes of a quad (lane % 4 = t) and leaves each lane a quarter of the sums:
// v[0 .. N/4) of lane t = the quad's sums of its values [t·N/4, (t+1)·N/4). Two exchange steps of N/2 and N/4 shuffles.
template <int N>
TG_DEVICE void quad_reduce_scatter(float (&v)[N], int t) {
  static_assert(N % 4 == 0, "four lanes share the sums");
  constexpr int kHalf = N / 2, kQuarter = N / 4;
  const bool upper = (t & 2) != 0, odd = (t & 1) != 0;
  float u[kHalf];
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {
    const float send = upper ? v[i] : v[kHalf + i];
    const float keep = upper ? v[kHalf + i] : v[i];
    u[i] = keep + __shfl_xor_sync(0xffffffffu, send, 2);
  }
#pragma unroll
  for (int i = 0; i < kQuarter; ++i) {
    const float send = odd ? u[i] : u[kQuarter + i];
    const float keep = odd ? u[kQuarter + i] : u[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, 1);
  }
}

// The CTA's shared memory, named by its symbol rather than held as a pointer: the compiler then sees shared-space
// addresses wherever a role function uses them (32-bit addresses, shared loads).
template <int kHeadDim, int kQStages, int kKvStages>
struct Buffers {
  static constexpr SmemPlan kPlan = smem_plan(kHeadDim, kQStages, kKvStages);
  TG_DEVICE static u8* base() {
    extern __shared__ __align__(1024) u8 mqa_logits_smem[];
    return mqa_logits_smem;
  }
  // Q tile [128 q rows][D] and KV tile [256 tokens][D], swizzled; weights [block_q][H]; KV scales [256].
  TG_DEVICE static u8* q(int s) { return base() + kPlan.q + s * q_stage_bytes(kHeadDim); }
  TG_DEVICE static u8* kv(int s) { return base() + kPlan.kv + s * kv_stage_bytes(kHeadDim); }
  TG_DEVICE static float* weights(int s) {
    return reinterpret_cast<float*>(base() + kPlan.weights + s * kWeightsStageBytes);
  }
  TG_DEVICE static float* scales(int s) {
    return reinterpret_cast<float*>(base() + kPlan.scales + s * kScalesStageBytes);
  }
  TG_DEVICE static QBlockInfo* q_info(int s) { return reinterpret_cast<QBlockInfo*>(base() + kPlan.q_info) + s; }
  TG_DEVICE static KvBlockInfo* kv_info(int s) { return reinterpret_cast<KvBlockInfo*>(base() + kPlan.kv_info) + s; }
  TG_DEVICE static prim::StageBarriers<kQStages>* q_barriers() {
    return reinterpret_cast<prim::StageBarriers<kQStages>*>(base() + kPlan.q_barriers);
  }
  TG_DEVICE static prim::StageBarriers<kKvStages>* kv_barriers() {
    return reinterpret_cast<prim::StageBarriers<kKvStages>*>(base() + kPlan.kv_barriers);
  }
};

// The wgmma swizzle of a K-major tile with D-byte rows (one TMA box row per token or q row).
template <int kHeadDim>
constexpr prim::SmemSwizzle kTileSwizzle = kHeadDim == 128  ? prim::SmemSwizzle::k128B
                                           : kHeadDim == 64 ? prim::SmemSwizzle::k64B
                                                            : prim::SmemSwizzle::k32B;

// The producer warp (all 32 lanes: lane i < block_q reads row i's window, every lane copies four weights; lane 0
// issues the TMA loads).
template <int kHeads, int kHeadDim, bool kCompressed, int kQStages, int kKvStages>
TG_DEVICE void produce(const MqaLogitsParams& p, const Buffers<kHeadDim, kQStages, kKvStages>& smem) {
  constexpr int kBlockQ = block_q(kHeads);
  constexpr u32 kQBytes = q_stage_bytes(kHeadDim), kKvBytes = kv_stage_bytes(kHeadDim) + kScalesStageBytes;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int num_q_blocks = ceil_div(p.seq_len, kBlockQ);
  prim::PipelineState<kQStages> qs;
  prim::PipelineState<kKvStages> kvs;
  for (int qb = static_cast<int>(blockIdx.x);; qb += static_cast<int>(gridDim.x)) {
    const bool done = qb >= num_q_blocks;
    const int q0 = qb * kBlockQ;
    RowWindow w;
    if (!done && lane < kBlockQ) w = row_window<kCompressed>(p, q0 + lane);
    // NOTE: only non-empty windows count: an empty one's hi could otherwise make a last block that no row needs,
    // which the loop below would skip, and the consumers would never see a last stage.
    const bool nonempty = w.lo < w.hi;
    const int kv_lo = warp_min(nonempty ? w.lo : kIntMax);
    const int kv_hi = warp_max(nonempty ? w.hi : 0);
    if (!done && kv_hi <= kv_lo) continue;  // every window empty: nothing to compute or load
    const int kv_begin = kv_lo / kKvStartAlign * kKvStartAlign;
    const int kv_blocks = done ? 0 : ceil_div(kv_hi - kv_begin, kBlockKv);

    // The Q stage: the block's info, its Q tile and weights; past the last block, an info with q0 = -1 that ends the
    // consumers' loop. Full barrier: lane 0's arrival (with the TMA bytes) and every lane's cp.async arrival.
    smem.q_barriers()->producer_acquire(qs);
    QBlockInfo* info = smem.q_info(qs.index);
    if (lane == 0) info->q0 = done ? -1 : q0;
    if (lane < kBlockQ) info->lo[lane] = w.lo, info->hi[lane] = w.hi, info->shift[lane] = w.shift;
    // NOTE: lane 0's arrival releases the other lanes' info writes too (ordered before it by the warp barrier).
    __syncwarp();
    u64* q_full = &smem.q_barriers()->inputs_arrived[qs.index];
    if (!done) {
      if (lane == 0) {
        prim::mbarrier_arrive_expect_tx(q_full, kQBytes);
        prim::tma_load_3d(&p.tma_q, q_full, smem.q(qs.index), 0, q0 * kHeads, 0);
      }
      // Rows past seq_len copy the last row's weights: their sums are never stored.
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int e = lane * 4 + u, row = min(q0 + e / kHeads, p.seq_len - 1);
        prim::cp_async_4(smem.weights(qs.index) + e, p.weights + row * p.weights_stride + e % kHeads);
      }
    } else if (lane == 0) {
      prim::mbarrier_arrive(q_full);
    }
    prim::cp_async_mbarrier_arrive_noinc(q_full);
    qs.advance();
    if (done) return;

    // The KV blocks that meet some row's window (the first and the last always do).
    for (int k = 0; k < kv_blocks; ++k) {
      const int kv0 = kv_begin + k * kBlockKv;
      if (!__any_sync(0xffffffffu, max(w.lo, kv0) < min(w.hi, kv0 + kBlockKv))) continue;
      smem.kv_barriers()->producer_acquire(kvs);
      if (lane == 0) {
        *smem.kv_info(kvs.index) = KvBlockInfo{kv0, k == kv_blocks - 1};
        u64* kv_full = &smem.kv_barriers()->inputs_arrived[kvs.index];
        prim::mbarrier_arrive_expect_tx(kv_full, kKvBytes);
        prim::tma_load_3d(&p.tma_kv, kv_full, smem.kv(kvs.index), 0, kv0, 0);
        prim::tma_load_3d(&p.tma_kv_scales, kv_full, smem.scales(kvs.index), kv0, 0, 0);
      }
      __syncwarp();
      kvs.advance();
    }
  }
}

// One consumer warpgroup: its 64 tokens of every KV stage against the whole q block.
template <int kHeads, int kHeadDim, bool kCompressed, bool kBf16, int kQStages, int kKvStages>
TG_DEVICE void consume(const MqaLogitsParams& p, const Buffers<kHeadDim, kQStages, kKvStages>& smem, int math_wg) {
  constexpr int kBlockQ = block_q(kHeads);
  constexpr int kGroups = kHeads / 8;  // 8-column accumulator groups per query
  constexpr int kSums = 2 * kBlockQ;   // per thread: two tokens × the block's queries
  constexpr int kMine = kSums / 4;     // sums a lane keeps after the quad's reduce-scatter
  constexpr prim::SmemSwizzle kSwizzle = kTileSwizzle<kHeadDim>;
  constexpr u32 kSbo = 8 * kHeadDim;  // bytes between 8-row core-matrix groups
  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32 % 4));
  const int lane = static_cast<int>(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  // After the reduce-scatter lane t holds sums [t·kMine, (t+1)·kMine): query t (H = 32: both tokens) or query t / 2,
  // token t % 2 (H = 64).
  const int my_q = t * kMine / 2;
  const int token = math_wg * 64 + warp * 16 + g;  // and token + 8: this thread's accumulator rows in the stage

  prim::PipelineState<kQStages> qs;
  prim::PipelineState<kKvStages> kvs;
  static_assert(kBlockQH == 128, "the overwriting first K step is an m64n128k32");
  float acc[kBlockQH / 2];
  float wr[kBlockQ][kHeads / 4];  // the weights of this thread's accumulator columns
  while (true) {
    smem.q_barriers()->consumer_wait(qs);
    const QBlockInfo* info = smem.q_info(qs.index);
    const int q0 = info->q0;
    if (q0 < 0) return;
    const int lo = info->lo[my_q], hi = info->hi[my_q];
    // Token j of this thread's query goes to row[j]: the row, moved back by the compressed shift. Rows past seq_len
    // have empty windows and are never stored through.
    void* row = static_cast<u8*>(p.logits) +
                ((q0 + my_q) * p.logits_stride - info->shift[my_q]) * static_cast<long long>(kBf16 ? 2 : 4);
#pragma unroll
    for (int qi = 0; qi < kBlockQ; ++qi)
#pragma unroll
      for (int jj = 0; jj < kGroups; ++jj) {
        const float2 w2 = *reinterpret_cast<const float2*>(smem.weights(qs.index) + qi * kHeads + 8 * jj + 2 * t);
        wr[qi][2 * jj] = w2.x, wr[qi][2 * jj + 1] = w2.y;
      }
    const u64 b_desc = prim::make_smem_desc(smem_addr(smem.q(qs.index)), 0, kSbo, kSwizzle);

    bool last = false;
    do {
      u64 a_desc = prim::make_smem_desc(smem_addr(smem.kv(kvs.index)) + math_wg * 64 * kHeadDim, 0, kSbo, kSwizzle);
      prim::compute_before_next_asm(a_desc);
      smem.kv_barriers()->consumer_wait(kvs);

      // [64 tokens × D] · [128 q rows × D]ᵀ → acc: row g (+8) of this warp's 16, columns 8j + 2t (+1).
      prim::wgmma_fence();
      wgmma_m64n128k32_e4m3_overwrite(a_desc, b_desc, acc);
#pragma unroll
      for (int k = 1; k < kHeadDim / 32; ++k)
        prim::wgmma_e4m3<kBlockQH>(prim::advance_smem_desc(a_desc, 32 * k), prim::advance_smem_desc(b_desc, 32 * k),
                                   acc, 1u);
      prim::wgmma_commit();
      prim::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kBlockQH / 2; ++i) prim::wgmma_fence_operand(acc[i]);

      // Per query and token: Σ over this thread's heads of relu(score) · weight.
      float sums[kSums];
#pragma unroll
      for (int qi = 0; qi < kBlockQ; ++qi)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          float s = 0.0f;
#pragma unroll
          for (int jj = 0; jj < kGroups; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              s = fmaf(fmaxf(acc[4 * (qi * kGroups + jj) + 2 * r + e], 0.0f), wr[qi][2 * jj + e], s);
          sums[2 * qi + r] = s;
        }

      // The stage's info and scales are read only now, so that they are not live beside the accumulators and the
      // weights; the ring is deep enough that releasing the stage after the sums costs the producer nothing.
      const KvBlockInfo kv_info = *smem.kv_info(kvs.index);
      last = kv_info.last != 0;
      const float scale0 = smem.scales(kvs.index)[token], scale1 = smem.scales(kvs.index)[token + 8];
      // NOTE: the warp barrier orders every lane's reads of the stage before lane 0's releases. The Q stage goes
      // back with its last KV block: its info and weights were read when the q block started.
      __syncwarp();
      if (lane == 0) {
        smem.kv_barriers()->consumer_release(kvs.index);
        if (last) smem.q_barriers()->consumer_release(qs.index);
      }
      kvs.advance();

      // The quad's sums, a quarter per lane, scaled and stored where they fall in the row's window.
      quad_reduce_scatter(sums, t);
#pragma unroll
      for (int i = 0; i < kMine; ++i) {
        const int r = kMine == 2 ? i : t % 2;  // which of the thread's two tokens
        const int j = kv_info.kv0 + token + 8 * r;
        if (j >= lo && j < hi) store_logit<kBf16>(row, j, sums[i] * (r == 0 ? scale0 : scale1));
      }
    } while (!last);
    qs.advance();
  }
}

}  // namespace mqa_logits

// kHeads: 32 or 64. kHeadDim: 32, 64 or 128. kCompressed: row i's window shifted to column 0 (width max_seqlen_k).
// kBf16: bf16 logits (else fp32). kQStages / kKvStages: depth of the two rings.
template <int kHeads, int kHeadDim, bool kCompressed, bool kBf16, int kQStages, int kKvStages>
TG_DEVICE void sm90_fp8_mqa_logits(const MqaLogitsParams& p) {
  using namespace mqa_logits;
  static_assert(kHeads == 32 || kHeads == 64, "H must be 32 or 64 (block_q · H = 128 = the wgmma's N)");
  static_assert(kHeadDim == 32 || kHeadDim == 64 || kHeadDim == 128, "D must be 32, 64 or 128 (one swizzle row)");
  static_assert(kQStages >= 2 && kKvStages >= 2, "each ring needs at least two stages");
  using Smem = Buffers<kHeadDim, kQStages, kKvStages>;

  const Smem smem;
  const int warpgroup = static_cast<int>(warp_uniform(threadIdx.x / 128));

  if (threadIdx.x == 0) {
    // Q full: lane 0's arrival and 32 cp.async arrivals; every ring's empty barrier: one arrival per consumer warp.
    smem.q_barriers()->init(kMathWarps, 33);
    smem.kv_barriers()->init(kMathWarps, 1);
    prim::fence_barrier_init();
    prim::tma_prefetch_descriptor(&p.tma_q);
    prim::tma_prefetch_descriptor(&p.tma_kv);
    prim::tma_prefetch_descriptor(&p.tma_kv_scales);
  }
  __syncthreads();
  prim::pdl_prologue_done();

  if (warpgroup == 0) {
    prim::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x / 32 == 0) produce<kHeads, kHeadDim, kCompressed, kQStages, kKvStages>(p, smem);
  } else {
    prim::setmaxnreg_inc<kConsumerRegisters>();
    consume<kHeads, kHeadDim, kCompressed, kBf16, kQStages, kKvStages>(p, smem, warpgroup - 1);
  }
}

}  // namespace tilegemm
