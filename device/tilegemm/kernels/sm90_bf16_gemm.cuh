#pragma once
// SM90 BF16 GEMM: D (+)= A · Bᵀ with bf16 operands and fp32 accumulation. The same kernel runs int8 x int8
// (Cfg::kInt8): s32 accumulation, and D = scale_a[m] · scale_b[n] · Σ a·b, the scales applied once per tile
// after the main loop.
//
//   warpgroup 0            : producer — one elected thread issues TMA loads of A and B into a ring of
//                            kStages shared-memory stages (128-byte swizzle).
//   warpgroups 1..kMathWGs : consumers — wgmma 64xBLOCK_Nx16 from shared memory into fp32 registers; each
//                            owns BLOCK_M / kMathWGs rows of the tile. Epilogue: registers → swizzled shared
//                            memory (stmatrix for bf16) → TMA store, or TMA reduce-add when accumulating.
//   swap AB (Cfg::kSwapAB) : the host passes B as A and A as B (ragged M: the weights' rows fill the 64-row wgmma
//                            side, the tokens the free N side), and sm90_swap_ab_epilogue.cuh writes the tile
//                            transposed, so D keeps its own layout.
//   persistent grid        : CTAs walk the tile sequence of sched::TileScheduler, or with split-K / stream-K
//                            (Cfg::kScheme) the work units of sched::SplitTileScheduler: tiles with a K
//                            sub-range whose fp32 partials are summed by sched::SplitFixup before the
//                            ordinary epilogue (by whichever part of the tile finishes last).
//
// The generated source defines a `Config` with the named constants below and an extern "C" entry point
// that calls sm90_bf16_gemm<Config>(params).
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/kernels/sm90_cluster_pair.cuh"
#include "tilegemm/kernels/sm90_epilogue.cuh"
#include "tilegemm/kernels/sm90_persistent.cuh"
#include "tilegemm/kernels/sm90_producer.cuh"
#include "tilegemm/kernels/sm90_swap_ab_epilogue.cuh"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/prim/wgmma.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"
#include "tilegemm/sched/split_fixup.cuh"
#include "tilegemm/sched/split_scheduler.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

// Shared-memory plan of one CTA, from the config alone (the host computes the same numbers).
template <class Cfg>
struct Sm90Bf16Smem {
  static constexpr int kElemBytes = Cfg::kInt8 ? 1 : 2;
  static constexpr int kABytes = Cfg::BLOCK_M * Cfg::BLOCK_K * kElemBytes;  // [BLOCK_M, BLOCK_K] per stage
  static constexpr int kBBytes = Cfg::BLOCK_N * Cfg::BLOCK_K * kElemBytes;  // [BLOCK_N, BLOCK_K] per stage
  static constexpr int kDElemBytes = Cfg::kDIsFloat ? 4 : 2;
  static constexpr int kDBytes = Cfg::BLOCK_M * Cfg::BLOCK_N * kDElemBytes;
  static constexpr int kAOffset = 0;
  static constexpr int kBOffset = kAOffset + Cfg::kStages * kABytes;
  static constexpr int kDOffset = kBOffset + Cfg::kStages * kBBytes;
  static constexpr int kBarrierOffset = kDOffset + kDBytes;
  static constexpr int kTotal = kBarrierOffset + 2 * Cfg::kStages * 8;
  // NOTE: every 128B-swizzled buffer must start on a 1024-byte boundary.
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0 && kDBytes % 1024 == 0,
                "tile buffers must be multiples of 1024 bytes (BLOCK_M and BLOCK_N multiples of 8)");
};

// The 128B swizzle atom is 64 bf16 (128 int8) wide: a K-major bf16 tile row of BLOCK_K = 128 is two atoms.
constexpr int kBf16SwizzleAtomK = kOperandSwizzleBytes / 2;

// Loads one [BLOCK_ROWS, BLOCK_K] operand tile. K-major: one box of 128-byte K rows per K atom (kAtomK
// elements), the atoms one after the other ([BLOCK_K / kAtomK][BLOCK_ROWS][kAtomK]). MN-major (bf16 only):
// 64-element-wide column panels of BLOCK_K rows ([BLOCK_ROWS / 64][BLOCK_K][64]).
template <bool kMNMajor, int BLOCK_ROWS, int BLOCK_K, int kAtomK = kBf16SwizzleAtomK>
TG_DEVICE void load_operand_tile(const TmaDescriptor* desc, u64* bar, u8* smem, int row0, int k0, int batch) {
  if constexpr (kMNMajor) {
#pragma unroll
    for (int p = 0; p < BLOCK_ROWS / 64; ++p)
      prim::tma_load_3d(desc, bar, smem + p * BLOCK_K * 128, row0 + 64 * p, k0, batch);
  } else {
#pragma unroll
    for (int atom = 0; atom < BLOCK_K / kAtomK; ++atom)
      prim::tma_load_3d(desc, bar, smem + atom * BLOCK_ROWS * 128, k0 + atom * kAtomK, row0, batch);
  }
}

// int8 x int8: the exact s32 sums of one warpgroup's rows, scaled into fp32 by the row's and the column's scale
// (rows and columns past the problem read no scale and give 0). Accumulator layout as in sm90_epilogue.cuh: lane l
// of warp w holds, per 64-row sub-block and 8-wide column group j, rows 16w + l/4 (+8) and columns 8j + 2(l%4) (+1).
template <int kSubM, int BLOCK_N>
TG_DEVICE void scale_int_accumulators(const int (&sums)[kSubM][BLOCK_N / 2], float (&out)[kSubM][BLOCK_N / 2],
                                      const GemmParams& params, int row0, int col0, int thread_in_wg) {
  const int lane = thread_in_wg % 32, warp = thread_in_wg / 32;
  // Each lane loads one column scale per 32 columns and the others take it by shuffle: a 256-wide tile's 64 column
  // scales per thread would not fit beside its 128 accumulators.
  constexpr int kColRounds = (BLOCK_N + 31) / 32;
  float col_scales[kColRounds];
#pragma unroll
  for (int r = 0; r < kColRounds; ++r) {
    const int col = col0 + 32 * r + lane;
    col_scales[r] = col < params.n ? __ldg(params.scale_b + col) : 0.0f;
  }
  float row_scale[kSubM][2];
#pragma unroll
  for (int s = 0; s < kSubM; ++s)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + s * 64 + 16 * warp + lane / 4 + 8 * half;
      row_scale[s][half] = row < params.m ? __ldg(params.scale_a + row) : 0.0f;
    }
#pragma unroll
  for (int j = 0; j < BLOCK_N / 8; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // Column 8j + 2(lane % 4) + e of the tile: held by lane (8j + ...) % 32 in round j / 4.
      const float col_scale = __shfl_sync(0xffffffffu, col_scales[j / 4], 8 * (j % 4) + 2 * (lane % 4) + e);
#pragma unroll
      for (int s = 0; s < kSubM; ++s)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int i = 4 * j + 2 * half + e;
          out[s][i] = static_cast<float>(sums[s][i]) * (row_scale[s][half] * col_scale);
        }
    }
}

template <class Cfg>
TG_DEVICE void sm90_bf16_gemm(const GemmParams& params) {
  constexpr int BLOCK_M = Cfg::BLOCK_M, BLOCK_N = Cfg::BLOCK_N, BLOCK_K = Cfg::BLOCK_K;
  constexpr int kStages = Cfg::kStages;
  constexpr int kMathWGs = Cfg::kNumMathWarpgroups;
  // int8: one 128B swizzle atom holds 128 K elements and one wgmma takes 32 of them (bf16: 64 and 16).
  constexpr bool kInt8 = Cfg::kInt8;
  constexpr int kAtomK = kInt8 ? 2 * kBf16SwizzleAtomK : kBf16SwizzleAtomK;
  constexpr int kSliceK = kInt8 ? 32 : 16;
  using Acc = select_t<kInt8, int, float>;
  // Committed wgmma groups (one per K block) a consumer keeps in flight before releasing the oldest stage.
  // The host passes 1: 2 and 4 were measured slower on the H200 (a held stage is prefetch the producer
  // loses). NOTE: the ring must stay deeper than this or the producer starves.
  constexpr int kInFlight = Cfg::kMmaGroupsInFlight;
  static_assert(kInFlight >= 1 && kInFlight <= 4 && kInFlight < kStages, "1..4 wgmma groups in flight, < kStages");
  constexpr int kRowsPerWG = BLOCK_M / kMathWGs;  // rows of the tile one consumer warpgroup owns
  constexpr int kSubM = kRowsPerWG / 64;          // 64-row wgmma sub-blocks per warpgroup
  constexpr bool kAMNMajor = Cfg::kMajorA == Major::kMNMajor;
  constexpr bool kBMNMajor = Cfg::kMajorB == Major::kMNMajor;
  // D is staged as column chunks of swizzled rows, one TMA store per chunk (sm90_epilogue.cuh), or with the
  // operands exchanged as Dᵀ's chunks of 64 columns (sm90_swap_ab_epilogue.cuh).
  constexpr bool kSwapAB = Cfg::kSwapAB;
  static_assert(!kSwapAB || (!Cfg::kDIsFloat && !kInt8 && Cfg::kGemmType == GemmType::kNormal),
                "swap AB: plain BF16 GEMMs with bf16 D");
  using Epilogue =
      select_t<kSwapAB, Sm90SwapAbEpilogue<kRowsPerWG, BLOCK_N>, Sm90Epilogue<kRowsPerWG, BLOCK_N, Cfg::kDIsFloat>>;
  static_assert(Epilogue::kStagingBytes * kMathWGs == Sm90Bf16Smem<Cfg>::kDBytes, "the staging the host sized");
  using Smem = Sm90Bf16Smem<Cfg>;
  // 2-CTA cluster along M: each CTA loads half of the shared B tile and multicasts it to both (unless the
  // scheduler says the two m-blocks use different B tiles: sched::Tile::share_b).
  constexpr int kClusterM = Cfg::kClusterM;
  constexpr bool kMulticastB = kClusterM == 2;
  using Pair = Sm90ClusterPair<kMulticastB>;
  static_assert(kClusterM == 1 || (kMulticastB && !kBMNMajor && BLOCK_N % 16 == 0),
                "B multicast needs a K-major B split into two halves of whole 8-row swizzle atoms");
  // Split-K / stream-K: work units are tiles with a K sub-range; cut tiles meet in the fp32 workspace.
  static_assert(Cfg::kGemmType != GemmType::kMGroupedContiguous || BLOCK_M <= kContiguousGroupRowAlignment,
                "contiguous groups are aligned to 128 rows: a BF16 tile must not straddle two (no two-pass tiles)");
  using Schedulers = sched::SchedulerFor<Cfg, BLOCK_M, BLOCK_N, BLOCK_K>;
  constexpr bool kSplit = Schedulers::kSplit;
  using Scheduler = typename Schedulers::type;
  using Fixup = sched::SplitFixup<kSubM, BLOCK_N, kMathWGs, Cfg::kDeterministic>;

  // One, two or four 128B swizzle atoms along K per stage (four run but are not offered): two halve the stage
  // handshakes per K (each costs ~50 ns of consumer issue time that narrow tiles cannot hide, measured on the H200).
  static_assert(BLOCK_K == kAtomK || BLOCK_K == 2 * kAtomK || BLOCK_K == 4 * kAtomK,
                "stages are one, two or four 128-byte K atoms wide");
  static_assert(BLOCK_K == kAtomK || !kMulticastB, "B multicast loads one K atom per stage");
  static_assert(!kInt8 || (Cfg::kGemmType == GemmType::kNormal && !kAMNMajor && !kBMNMajor && !Cfg::kAccumulate &&
                           (BLOCK_N <= 32 || BLOCK_N % 16 == 0)),
                "int8: plain K-major GEMMs without C; BLOCK_N 8..32 or a multiple of 16 (integer wgmma widths)");
  static_assert(kMathWGs == 1 || kMathWGs == 2, "one or two consumer warpgroups");
  static_assert(kRowsPerWG == 64 || kRowsPerWG == 128, "each consumer warpgroup owns 64 or 128 rows");
  static_assert(BLOCK_N % 8 == 0 && BLOCK_N >= 16 && BLOCK_N <= 256, "BLOCK_N: multiple of 8 in [16, 256]");
  static_assert(kSubM * BLOCK_N / 2 <= 128, "at most 128 fp32 accumulator registers per thread");
  static_assert(!kAMNMajor || BLOCK_M % 64 == 0, "MN-major A needs BLOCK_M % 64 == 0");
  static_assert(!kBMNMajor || BLOCK_N % 64 == 0, "MN-major B needs BLOCK_N % 64 == 0");

  extern __shared__ __align__(1024) u8 smem[];
  auto* barriers = reinterpret_cast<prim::StageBarriers<kStages>*>(smem + Smem::kBarrierOffset);
  auto smem_a = [&](int stage) { return smem + Smem::kAOffset + stage * Smem::kABytes; };
  auto smem_b = [&](int stage) { return smem + Smem::kBOffset + stage * Smem::kBBytes; };

  auto init = [&] {
    prim::tma_prefetch_descriptor(&params.tma_a);
    prim::tma_prefetch_descriptor(&params.tma_b);
    prim::tma_prefetch_descriptor(&params.tma_d);
    if (params.a_tail_rows > 0) prim::tma_prefetch_descriptor(&params.tma_a_tail);
    if (kSwapAB && params.b_tail_rows > 0) prim::tma_prefetch_descriptor(&params.tma_b_tail);
    if (params.d_tail_rows > 0) prim::tma_prefetch_descriptor(&params.tma_d_tail);
    barriers->init(kMathWGs * 4 * Pair::kCtas);  // one release per consumer warp of every CTA sharing a stage
  };
  // The producer: one elected thread of warpgroup 0 issues every TMA load.
  auto produce = [&](const Pair& pair, int thread_in_wg) {
    if (thread_in_wg < 32 && prim::elect_one_sync()) {
      // (The host never gives MN-major A a tail map, so its A tile is always BLOCK_M x BLOCK_K; a B tail map only
      // to a swapped kernel's K-major, unshared B.)
      auto b_tail = [&](const sched::Tile& tile) { return kSwapAB && is_b_tail(params, tile.n0); };
      auto tx_bytes = [&](const sched::Tile& tile) {
        return static_cast<u32>((is_a_tail(params, tile.m0) ? params.a_tail_rows : BLOCK_M) * BLOCK_K *
                                    Smem::kElemBytes +
                                (b_tail(tile) ? params.b_tail_rows * BLOCK_K * Smem::kElemBytes : Smem::kBBytes));
      };
      sm90_produce<Scheduler, kStages, BLOCK_K>(
          params, barriers, tx_bytes, [&](const sched::Tile& tile, int k0, int stage, u64* full) {
            int a_batch = tile.a_batch, b_batch = tile.b_batch;
            if constexpr (Cfg::kGemmType == GemmType::kBatchReduced) {
              // The reduction runs through batch 0's K, then batch 1's...: params.k is their sum, each a whole
              // number of K blocks (checked on the host), so a block never straddles two batches.
              const int k_per_batch = params.k / params.num_groups;
              a_batch = b_batch = k0 / k_per_batch;
              k0 -= a_batch * k_per_batch;
            }
            const TmaDescriptor* tma_a = is_a_tail(params, tile.m0) ? &params.tma_a_tail : &params.tma_a;
            load_operand_tile<kAMNMajor, BLOCK_M, BLOCK_K, kAtomK>(tma_a, full, smem_a(stage), tile.m0, k0, a_batch);
            if constexpr (kMulticastB)
              pair.template load_shared<BLOCK_N>(&params.tma_b, full, smem_b(stage), k0, tile.n0, b_batch,
                                                 tile.share_b);
            else
              load_operand_tile<kBMNMajor, BLOCK_N, BLOCK_K, kAtomK>(b_tail(tile) ? &params.tma_b_tail : &params.tma_b,
                                                                     full, smem_b(stage), tile.n0, k0, b_batch);
          });
    }
  };
  // A consumer warpgroup: the main loop, the split-K fixup and the epilogue of every tile.
  auto consume = [&](const Pair& pair, int math_wg, int thread_in_wg) {
    const int lane = threadIdx.x % 32;
    const int row_base = math_wg * kRowsPerWG;  // first tile row of this warpgroup

    // Descriptor layouts (see prim/wgmma.cuh): K-major tiles step 32 bytes per K slice (16 bf16, 32 int8) within
    // a K atom and a whole atom ([rows][128 bytes]) every 4 slices; MN-major tiles are 64-wide column panels of
    // BLOCK_K rows and step 16 rows (2048 bytes) per K slice.
    constexpr u32 kPanelBytes = BLOCK_K * 128;
    constexpr int kSlicesPerAtom = kAtomK / kSliceK;
    auto k_major_offset = [](int rows, int kk) {
      return (kk / kSlicesPerAtom) * rows * 128 + (kk % kSlicesPerAtom) * 32;
    };
    auto a_desc = [&](int stage, int sub, int kk) {
      const int row = row_base + sub * 64;
      const u32 addr = kAMNMajor ? smem_addr(smem_a(stage)) + (row / 64) * kPanelBytes + kk * 2048
                                 : smem_addr(smem_a(stage)) + row * 128 + k_major_offset(BLOCK_M, kk);
      return prim::make_smem_desc(addr, kAMNMajor ? kPanelBytes : 0, 1024, prim::SmemSwizzle::k128B);
    };
    auto b_desc = [&](int stage, int kk) {
      const u32 addr =
          kBMNMajor ? smem_addr(smem_b(stage)) + kk * 2048 : smem_addr(smem_b(stage)) + k_major_offset(BLOCK_N, kk);
      return prim::make_smem_desc(addr, kBMNMajor ? kPanelBytes : 0, 1024, prim::SmemSwizzle::k128B);
    };

    u8* smem_d = smem + Smem::kDOffset + math_wg * Epilogue::kStagingBytes;

    auto release = [&](u32 stage) { pair.release(barriers, stage); };

    Scheduler scheduler(params);
    prim::PipelineState<kStages> st;
    sched::Tile tile;

    while (scheduler.next(tile)) {
      // Per tile (the first wgmma overwrites it): int8's sums then die at their scaling instead of living on
      // beside the scaled tile.
      Acc acc[kSubM][BLOCK_N / 2];
      // -------- main loop: one committed wgmma group per K block, kInFlight groups kept in flight --------
      const int num_k_blocks = tile.k_blocks;
      for (int kb = 0; kb < num_k_blocks; ++kb) {
        barriers->consumer_wait(st);
#pragma unroll
        for (int s = 0; s < kSubM; ++s)
#pragma unroll
          for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(acc[s][i]);
        prim::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / kSliceK; ++kk) {
#pragma unroll
          for (int s = 0; s < kSubM; ++s) {
            const u32 scale_d = (kb > 0 || kk > 0) ? 1u : 0u;
            if constexpr (kInt8)
              prim::wgmma_s8<BLOCK_N>(a_desc(st.index, s, kk), b_desc(st.index, kk), acc[s], scale_d);
            else
              prim::wgmma_bf16<BLOCK_N, kAMNMajor ? 1 : 0, kBMNMajor ? 1 : 0>(a_desc(st.index, s, kk),
                                                                              b_desc(st.index, kk), acc[s], scale_d);
          }
        }
        prim::wgmma_commit();
#pragma unroll
        for (int s = 0; s < kSubM; ++s)
#pragma unroll
          for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(acc[s][i]);
        // With at most kInFlight groups pending, the group of K block kb - kInFlight has finished reading
        // its stage.
        prim::wgmma_wait<kInFlight>();
        if (kb >= kInFlight && lane == 0) release((st.index + kStages - kInFlight) % kStages);
        st.advance();
      }
      prim::wgmma_wait<0>();
      if (lane == 0)
        for (int j = num_k_blocks > kInFlight ? num_k_blocks - kInFlight : 0; j < num_k_blocks; ++j)
          release((st.index + kStages - (num_k_blocks - j)) % kStages);

      // The fp32 tile from here on: the accumulators, or int8's scaled sums (a cut tile's parts then meet scaled).
      auto finish = [&](float(&out)[kSubM][BLOCK_N / 2]) {
        // -------- cut tile: publish this part; only the part that completes the tile goes on --------
        if constexpr (kSplit) {
          if (tile.parts > 1 &&
              !Fixup::reduce(params, scheduler, tile, out, math_wg, thread_in_wg, warpgroup_barrier(math_wg)))
            return;
        }

        // A tile walked only to feed the peer's multicast (padding, or past its group's end) stores nothing.
        if (!tile.active) return;

        // -------- epilogue: registers → swizzled shared memory → TMA store --------
        // (Swapped, D's rows are the tile's columns: the host gives no D tail map; TMA clips the box.)
        const TmaDescriptor* tma_d = kSwapAB ? &params.tma_d : d_map_for_rows(params, tile.m0 + row_base);
        Epilogue::template write_tile<Cfg::kAccumulate>(tma_d, smem_d, out, thread_in_wg, warpgroup_barrier(math_wg),
                                                        tile.m0 + row_base, tile.n0, params.n, tile.d_batch);
      };
      if constexpr (kInt8) {
        float scaled[kSubM][BLOCK_N / 2];
        scale_int_accumulators<kSubM, BLOCK_N>(acc, scaled, params, tile.m0 + row_base, tile.n0, thread_in_wg);
        finish(scaled);
      } else {
        finish(acc);
      }
    }
  };
  sm90_persistent_cta<kMathWGs, Pair>(init, produce, consume);
}

}  // namespace tilegemm
