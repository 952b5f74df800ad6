#pragma once
// The mHC pre-norm GEMM (DeepSeek-V3.2): D = A·Bᵀ in TF32 and sqr_sum = Σ_k A² from the same pass over A.
//   A bf16 [M, K] (K contiguous), B fp32 [N, K] with N ≤ 32 (N % 8 == 0), D fp32 [M, N], sqr_sum fp32 [M].
// N is tiny and K long, so the kernel is bound by reading A once: 2 bytes per element against 2·N FLOP.
//
// Shape of the work. A CTA owns a block of 64 rows (16 at small M) and one K slice (split) of them; its grid is
// row blocks x splits. One producer warp streams [rows x 128] A tiles and [N x 128] B tiles through a ring of
// stages with TMA (128-byte swizzle). Each of the four consumer warps takes a 32-wide K slice of every stage for all
// rows (so no two warps read the same B), converts its A elements to fp32 in registers, adds their squares and feeds
// them to mma.sync m16n8k8 TF32 with B from shared memory. At the end the warps' partial sums meet in shared
// memory. With one split the CTA writes D and sqr_sum; with the caller's splits it writes its slice
// [split][M][N]. Splits the library chose (kReduce) are summed in the kernel, in a fixed order (the same bits on
// every run): the kCluster CTAs of a cluster (consecutive splits of one row block) put their tiles in shared memory
// and CTA r adds share r of the tile's words over the cluster through distributed shared memory; where a row block
// has more splits than one cluster, each CTA writes its share's sum to a workspace and the last of the clusters to
// arrive on that share adds the clusters' sums in cluster order. A cluster of one is the plain last-CTA sum.
//
// K order inside an mma: a dot product does not care in which order the K elements meet, only that A and B
// agree. Lane (g, t) loads the 8 consecutive A elements 8t..8t+7 of its rows (one 16-byte load) and uses
// elements 8t+2s, 8t+2s+1 as the mma's logical columns t, t+4 of K step s; B is read with the same map.
#include "tilegemm/hc_prenorm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/cp_async.cuh"
#include "tilegemm/prim/global_memory.cuh"
#include "tilegemm/prim/mma_sync.cuh"
#include "tilegemm/prim/swizzle.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"

namespace tilegemm {

namespace hc_prenorm {

enum class Barrier : u32 { kConsumers = 1 };  // named barrier over the consumer warps (0 is __syncthreads)

// Four fp32 values rounded to the nearest TF32 (cvt.rna: ties away from zero), as 32-bit patterns.
TG_DEVICE uint4 round_to_tf32(uint4 v) {
  u32* w = reinterpret_cast<u32*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(w[i]) : "f"(__uint_as_float(w[i])));
  return v;
}

}  // namespace hc_prenorm

// kN: B's rows (8, 16, 24 or 32). kStages: depth of the TMA ring. kReduce: splits summed in the kernel.
// kBlockRows: a CTA's rows of A (16 or 64, HcPrenormConfig::block_m). kCluster: CTAs per cluster (1, 2, 4 or 8; the
// launch's cluster dimension), splits summed through distributed shared memory first.
template <int kN, int kStages, bool kReduce, int kBlockRows, int kCluster>
TG_DEVICE void sm90_tf32_hc_prenorm_gemm(const HcPrenormParams& p) {
  using namespace hc_prenorm;
  static_assert(kN >= 8 && kN <= 32 && kN % 8 == 0, "N must be 8, 16, 24 or 32 (B rows, one mma n-tile per 8)");
  static_assert(kStages >= 2, "the ring needs at least two stages");
  static_assert(kBlockRows == kBlockM || kBlockRows == kSmallBlockM, "a row block is 64 or 16 rows");
  static_assert(kCluster == 1 || (kReduce && kCluster <= kMaxCluster && (kCluster & (kCluster - 1)) == 0),
                "a cluster of 2, 4 or 8 CTAs sums library splits");
  constexpr int kMTiles = kBlockRows / 16;
  constexpr int kNTiles = kN / 8;
  constexpr int kABoxBytes = a_box_bytes(kBlockRows);
  constexpr int kBBoxBytes = kN * kSliceK * 4;
  constexpr int kStageBytes = stage_bytes(kN, kBlockRows);
  constexpr int kPitch = kN + 4;

  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  float* red = reinterpret_cast<float*>(smem + kStages * kStageBytes);  // [warp][rows][kPitch]
  float* red_sq = red + kConsumerWarps * kBlockRows * kPitch;           // [warp][rows]
  auto* barriers = reinterpret_cast<prim::StageBarriers<kStages>*>(red_sq + kConsumerWarps * kBlockRows);
  int* last_flag = reinterpret_cast<int*>(barriers + 1);

  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32));
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row_block = static_cast<int>(blockIdx.x) / p.num_splits;
  const int split = static_cast<int>(blockIdx.x) % p.num_splits;
  const int m0 = row_block * kBlockRows;
  // Balanced K slices: split s takes k blocks [s·kb/S, (s+1)·kb/S).
  const int kb_begin = static_cast<int>(static_cast<long long>(split) * p.k_blocks / p.num_splits);
  const int kb_end = static_cast<int>(static_cast<long long>(split + 1) * p.k_blocks / p.num_splits);

  if (threadIdx.x == 0) {
    barriers->init(kConsumerWarps);
    prim::fence_barrier_init();
    prim::tma_prefetch_descriptor(&p.tma_a);
    prim::tma_prefetch_descriptor(&p.tma_b);
  }
  __syncthreads();
  prim::pdl_prologue_done();

  if (warp == kConsumerWarps) {  // producer: one lane issues every stage's loads
    if (prim::elect_one_sync()) {
      prim::PipelineState<kStages> st;
      for (int kb = kb_begin; kb < kb_end; ++kb, st.advance()) {
        barriers->producer_acquire(st);
        u64* full = &barriers->inputs_arrived[st.index];
        prim::mbarrier_arrive_expect_tx(full, kStageBytes);
        u8* stage = smem + st.index * kStageBytes;
        const int k0 = kb * kBlockK;
#pragma unroll
        for (int h = 0; h < 2; ++h) prim::tma_load_3d(&p.tma_a, full, stage + h * kABoxBytes, k0 + h * kABoxK, m0, 0);
#pragma unroll
        for (int w = 0; w < kConsumerWarps; ++w)
          prim::tma_load_3d(&p.tma_b, full, stage + 2 * kABoxBytes + w * kBBoxBytes, k0 + w * kSliceK, 0, 0);
      }
    }
    if constexpr (kCluster > 1) {  // the consumers' two cluster barriers count every thread that has not exited
      __syncwarp();
      prim::cluster_sync();
      prim::cluster_sync();
    }
    return;
  }

  // Consumers. Lane (g, t): rows 16i + g and 16i + g + 8 of m-tile i, n-tile j's column 8j + g of B.
  const int g = lane / 4, t = lane % 4;
  float acc[kMTiles][kNTiles][4] = {};
  float sq[kMTiles][2] = {};
  prim::PipelineState<kStages> st;
  for (int kb = kb_begin; kb < kb_end; ++kb, st.advance()) {
    barriers->consumer_wait(st);
    const u8* stage = smem + st.index * kStageBytes;
    const u8* a_box = stage + (warp / 2) * kABoxBytes;
    const int a_chunk = (warp % 2) * 4 + t;  // this warp's 32 columns are chunks 0-3 or 4-7 of the A box
    const u8* b_box = stage + 2 * kABoxBytes + warp * kBBoxBytes;
    uint4 a[kMTiles][2];
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
      a[i][0] = prim::lds128(prim::swizzled128(a_box, 16 * i + g, a_chunk));
      a[i][1] = prim::lds128(prim::swizzled128(a_box, 16 * i + g + 8, a_chunk));
    }
    // B's fp32 values rounded to TF32 (to nearest): mma.sync reads a tf32 operand's top 19 bits and drops the rest,
    // which biases every product towards zero; torch's TF32 matmul and DeepGEMM's wgmma round, and DeepGEMM's test
    // holds this kernel to 1e-8 of torch. (A is bf16: exact in TF32.)
    uint4 b[kNTiles][2];
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      b[j][0] = hc_prenorm::round_to_tf32(prim::lds128(prim::swizzled128(b_box, 8 * j + g, 2 * t)));
      b[j][1] = hc_prenorm::round_to_tf32(prim::lds128(prim::swizzled128(b_box, 8 * j + g, 2 * t + 1)));
    }
    __syncwarp();
    if (lane == 0) barriers->consumer_release(st.index);

#pragma unroll
    for (int s = 0; s < 4; ++s) {
      u32 bf[kNTiles][2];
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) {
        const uint4& q = b[j][s / 2];
        bf[j][0] = s % 2 == 0 ? q.x : q.z;
        bf[j][1] = s % 2 == 0 ? q.y : q.w;
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        // Word s of each row holds its elements 8t+2s (low half) and 8t+2s+1 (high half); a bf16 is the top
        // half of the fp32 with the same value.
        const u32 w0 = s == 0 ? a[i][0].x : s == 1 ? a[i][0].y : s == 2 ? a[i][0].z : a[i][0].w;
        const u32 w1 = s == 0 ? a[i][1].x : s == 1 ? a[i][1].y : s == 2 ? a[i][1].z : a[i][1].w;
        const u32 frag[4] = {w0 << 16, w1 << 16, w0 & 0xffff0000u, w1 & 0xffff0000u};
        const float x0 = __uint_as_float(frag[0]), x1 = __uint_as_float(frag[1]);
        const float x2 = __uint_as_float(frag[2]), x3 = __uint_as_float(frag[3]);
        sq[i][0] = fmaf(x0, x0, fmaf(x2, x2, sq[i][0]));
        sq[i][1] = fmaf(x1, x1, fmaf(x3, x3, sq[i][1]));
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) prim::mma_m16n8k8_tf32(acc[i][j], frag, bf[j]);
      }
    }
  }

  // The warps' partial sums into shared memory: accumulators as they lie, squares summed over the quad first.
  float* mine = red + warp * kBlockRows * kPitch;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      *reinterpret_cast<float2*>(&mine[(16 * i + g) * kPitch + 8 * j + 2 * t]) =
          make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(&mine[(16 * i + g + 8) * kPitch + 8 * j + 2 * t]) =
          make_float2(acc[i][j][2], acc[i][j][3]);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float v = sq[i][h];
      v += __shfl_xor_sync(0xffffffffu, v, 1);
      v += __shfl_xor_sync(0xffffffffu, v, 2);
      if (t == 0) red_sq[warp * kBlockRows + 16 * i + g + 8 * h] = v;
    }
  }
  constexpr u32 kConsumerThreads = kConsumerWarps * 32;
  prim::named_barrier_sync(static_cast<u32>(Barrier::kConsumers), kConsumerThreads);

  // Element e of the CTA's tile: row e / (N + 1), column e % (N + 1), column N being sqr_sum.
  constexpr int kTileElems = kBlockRows * (kN + 1);
  const auto tile_value = [&](int e) {
    const int row = e / (kN + 1), col = e % (kN + 1);
    float v = 0;
#pragma unroll
    for (int w = 0; w < kConsumerWarps; ++w)
      v += col < kN ? red[(w * kBlockRows + row) * kPitch + col] : red_sq[w * kBlockRows + row];
    return v;
  };
  const auto store = [&](int e, float v, int slice) {
    const int row = m0 + e / (kN + 1), col = e % (kN + 1);
    if (row >= p.m) return;
    if (col < kN)
      p.d[slice * p.d_split_stride + static_cast<long long>(row) * p.ldd + col] = v;
    else
      p.sqr_sum[slice * p.sqr_split_stride + row] = v;
  };

  if constexpr (!kReduce) {
    // One split, or the caller's splits: this CTA's slice of D (slice 0 when there is one).
    for (int e = static_cast<int>(threadIdx.x); e < kTileElems; e += kConsumerThreads) store(e, tile_value(e), split);
  } else {
    // Tiles are [rows][N + 1] floats moved as float4 words; only the words of the row block's rows of A (all of them
    // but in the last block) are summed. CTA `rank` of its cluster owns words [share_begin, share_end).
    const int words = (min(kBlockRows, p.m - m0) * (kN + 1) + 3) / 4;
    constexpr int kWords = kTileElems / 4, kWordsPerThread = (kWords + kConsumerThreads - 1) / kConsumerThreads;
    const int tid = static_cast<int>(threadIdx.x);
    const int rank = split % kCluster, cluster = split / kCluster, clusters = p.num_splits / kCluster;
    const int share_begin = rank * words / kCluster, share_end = (rank + 1) * words / kCluster;
    const int share = share_end - share_begin;
    float4 sum[kWordsPerThread] = {};  // this thread's words of the share: share_begin + tid + w·threads
    const auto store_share = [&] {
#pragma unroll
      for (int w = 0; w < kWordsPerThread; ++w) {
        const int q = share_begin + tid + w * kConsumerThreads;
        if (q >= share_end) continue;
        store(4 * q, sum[w].x, 0), store(4 * q + 1, sum[w].y, 0), store(4 * q + 2, sum[w].z, 0);
        store(4 * q + 3, sum[w].w, 0);
      }
    };
    if constexpr (kCluster == 1) {
#pragma unroll
      for (int w = 0; w < kWordsPerThread; ++w) {
        const int q = tid + w * kConsumerThreads;
        if (q < words)
          sum[w] = make_float4(tile_value(4 * q), tile_value(4 * q + 1), tile_value(4 * q + 2), tile_value(4 * q + 3));
      }
    } else {
      // The tile into the stage ring (every stage consumed), visible to the cluster at the barrier; then this CTA's
      // share summed over the cluster's tiles in rank order, every remote load issued before the first add. The
      // second barrier keeps each CTA's shared memory alive until the whole cluster has read it.
      auto* tile = reinterpret_cast<float4*>(smem);
      static_assert(kStages * kStageBytes >= kWords * 16, "a tile fits the stage ring");
      for (int q = tid; q < words; q += kConsumerThreads)
        tile[q] = make_float4(tile_value(4 * q), tile_value(4 * q + 1), tile_value(4 * q + 2), tile_value(4 * q + 3));
      prim::cluster_sync();
#pragma unroll
      for (int w = 0; w < kWordsPerThread; ++w) {
        const int q = share_begin + tid + w * kConsumerThreads;
        if (q >= share_end) continue;
        float4 x[kCluster];
#pragma unroll
        for (int r = 0; r < kCluster; ++r) x[r] = prim::ld_shared_cluster_f4(tile + q, static_cast<u32>(r));
#pragma unroll
        for (int r = 0; r < kCluster; ++r) prim::accumulate(sum[w], x[r]);
      }
      prim::cluster_sync();
      if (clusters == 1) {
        store_share();
        return;
      }
    }
    // Several clusters: this CTA's share of its cluster's sum goes to the workspace ([row blocks][clusters][words],
    // a short last block packing its sums), and the last cluster to arrive on the share adds them in cluster order.
    // It copies as many as the stage ring (idle now) holds with cp.async, one L2 round trip whatever their count, and
    // sums from shared memory. Every cluster wrote its share before counting its arrival: nothing stale is read. A
    // share can be empty (a tile of fewer words than the cluster has CTAs): the same rank is empty in every cluster,
    // so its counter is never touched.
    if (share == 0) return;
    float4* first = reinterpret_cast<float4*>(p.partials) + static_cast<long long>(row_block) * clusters * kWords;
#pragma unroll
    for (int w = 0; w < kWordsPerThread; ++w) {
      const int q = tid + w * kConsumerThreads;
      if (q < share) first[static_cast<long long>(cluster) * words + share_begin + q] = sum[w];
    }
    int* counter = &p.counters[row_block * kCluster + rank];
    if (!prim::last_split_arrived(counter, clusters, last_flag, static_cast<u32>(Barrier::kConsumers),
                                  kConsumerThreads))
      return;
    auto* landed = reinterpret_cast<float4*>(smem);
    constexpr int kLandingWords = kStages * kStageBytes / 16;
    static_assert(kLandingWords >= kWords, "a partial tile fits the stage ring");
    const int per_round = kLandingWords / share;
#pragma unroll
    for (int w = 0; w < kWordsPerThread; ++w) sum[w] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int c0 = 0; c0 < clusters; c0 += per_round) {
      const int count = min(per_round, clusters - c0) * share;
      for (int i = tid; i < count; i += kConsumerThreads)
        prim::cp_async_16(landed + i, first + static_cast<long long>(c0 + i / share) * words + share_begin + i % share,
                          true);
      prim::cp_async_commit();
      prim::cp_async_wait<0>();
      prim::named_barrier_sync(static_cast<u32>(Barrier::kConsumers), kConsumerThreads);
#pragma unroll
      for (int w = 0; w < kWordsPerThread; ++w) {
        const int q = tid + w * kConsumerThreads;
        if (q < share)
          for (int c = 0; c < count / share; ++c) prim::accumulate(sum[w], landed[c * share + q]);
      }
      prim::named_barrier_sync(static_cast<u32>(Barrier::kConsumers), kConsumerThreads);  // before the next round
    }
    store_share();
    // The next launch on this stream finds the counter at zero again: no memset per call.
    if (threadIdx.x == 0) prim::st_relaxed_gpu(counter, 0);
  }
}

}  // namespace tilegemm
