#pragma once
// SM90 FP8 GEMM with fine-grained scaling: D (+)= (A ⊙ sfa) · (B ⊙ sfb)ᵀ, e4m3 operands (both K-major).
//
//   1D2D (kSfbPerToken = false): sfa per token (1×128), sfb per 128×128 block; D bf16.
//   1D1D (kSfbPerToken = true):  both per token; D fp32, optionally accumulated (TMA reduce-add).
//
//   warpgroup 0            : producer — one elected thread issues TMA loads of the A and B tiles (128-byte
//                            swizzle, BLOCK_K = 128 = one scale block) and of A's per-token scales: a column of
//                            BLOCK_M rows per K block when they are MN-major, a [BLOCK_M][4] box of four K blocks
//                            per stage when they are row-major with 16-byte rows (ScaleLayout::kRowMajor, what
//                            DeepGEMM's quantiser returns for K a multiple of 512; TMA cannot transpose, so the
//                            consumers read either layout and no call needs a layout pass first). 1D2D: a second
//                            thread cp.asyncs the stage's one or two B block scales. Scales in any other strides
//                            (kStrided) are copied by that whole warp, lane by lane, into the column layout:
//                            slower on long K, as those copies share the SM's load/store pipe with the consumers.
//   warpgroups 1..kMathWGs : consumers — per K block and 64-row sub-block, wgmma 64xBLOCK_Nx32 (four of them)
//                            into fresh fp32 registers, wait, then scale and add them into the fp32 result on
//                            the CUDA cores. This two-level accumulation is what keeps FP8 GEMMs accurate on
//                            Hopper: the tensor core's fp8 accumulator keeps fewer than fp32's mantissa bits.
//                            With two consumer warpgroups one promotes while the other's wgmma runs.
//   persistent grid        : CTAs walk the tile sequence of sched::TileScheduler (same schedulers as BF16), or
//                            with split-K / stream-K the work units of sched::SplitTileScheduler, whose cut
//                            tiles are summed by sched::SplitFixup after promotion (scales already applied).
//   2-CTA cluster (kClusterM == 2): the two CTAs take m-blocks 2q and 2q+1 of one n-block; each loads half of
//                            the B tile and multicasts it to both (sched::Tile::share_b false: each loads its
//                            own), as the BF16 kernel does. Scales are loaded by each CTA for itself.
//   head splits (1D2D dense, Config::kHeadLeft/kHeadMid/kHeadRight): each tile is stored at D's columns of its head
//                            part, skipping `mid` columns per head (fp8_gemm_nt_skip_head_mid; Traits::d_column).
//
// The generated source defines a `Config` with the named constants below and an extern "C" entry point that
// calls sm90_fp8_gemm<Config>(params).
#include "tilegemm/fp8_params.hpp"
#include "tilegemm/kernels/sm90_cluster_pair.cuh"
#include "tilegemm/kernels/sm90_epilogue.cuh"
#include "tilegemm/kernels/sm90_persistent.cuh"
#include "tilegemm/kernels/sm90_producer.cuh"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/cp_async.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/prim/wgmma.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"
#include "tilegemm/sched/split_fixup.cuh"
#include "tilegemm/sched/split_scheduler.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

// Shared-memory plan of one CTA (src/heuristics/sm90_fp8_legality.cpp computes the same total).
template <class Cfg>
struct Sm90Fp8Smem {
  static constexpr int align128(int bytes) { return (bytes + 127) / 128 * 128; }
  // One, two or four 128-wide scale blocks of K per stage; each is one 128B-swizzle atom of A and B, stored one after
  // the other ([BLOCK_K / 128][rows][128]).
  static constexpr int kScaleBlocks = Cfg::BLOCK_K / 128;
  static constexpr int kABytes = Cfg::BLOCK_M * Cfg::BLOCK_K;  // e4m3: one byte per element
  static constexpr int kBBytes = Cfg::BLOCK_N * Cfg::BLOCK_K;
  static constexpr int kDBytes = Cfg::BLOCK_M * Cfg::BLOCK_N * (Cfg::kDIsFloat ? 4 : 2);
  static constexpr int kSfaBlockBytes = align128(Cfg::BLOCK_M * 4);  // one K block's column, MN-contiguous
  static constexpr int kSfaBytes = fp8_sfa_stage_bytes(Cfg::kSfaLayout, Cfg::BLOCK_M, kScaleBlocks);
  // 1D1D: BLOCK_N per-token scales; 1D2D: the tile's (at most two) block scales of each K block ([K block][column
  // block]).
  static constexpr int kSfbBytes =
      Cfg::kSfbPerToken ? align128(Cfg::BLOCK_N * 4) : fp8_1d2d_sfb_stage_bytes(kScaleBlocks);
  static constexpr int kAOffset = 0;
  static constexpr int kBOffset = kAOffset + Cfg::kStages * kABytes;
  static constexpr int kDOffset = kBOffset + Cfg::kStages * kBBytes;
  static constexpr int kSfaOffset = kDOffset + kDBytes;
  static constexpr int kSfbOffset = kSfaOffset + Cfg::kStages * kSfaBytes;
  static constexpr int kBarrierOffset = kSfbOffset + Cfg::kStages * kSfbBytes;
  static constexpr int kTotal = kBarrierOffset + 2 * Cfg::kStages * 8;
  // TMA transaction bytes of one stage: a box counts in full, out-of-bounds elements included. A's boxes hold
  // a_rows rows (BLOCK_M, or a tail's rows), its MN-major scale boxes sfa_rows floats, a row-major scale box always
  // BLOCK_M rows of 16 bytes; strided scales arrive by cp.async.
  TG_DEVICE static unsigned stage_tx_bytes(int a_rows, int sfa_rows) {
    const int sfa = Cfg::kSfaLayout == ScaleLayout::kMnMajor    ? kScaleBlocks * sfa_rows * 4
                    : Cfg::kSfaLayout == ScaleLayout::kRowMajor ? Cfg::BLOCK_M * 4 * kRowMajorScaleBoxBlocks
                                                                : 0;
    return kScaleBlocks * a_rows * 128 + sfa + kBBytes +
           (Cfg::kSfbPerToken && !Cfg::kSfbStrided ? Cfg::BLOCK_N * 4 : 0);
  }
  // NOTE: every 128B-swizzled buffer must start on a 1024-byte boundary.
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0 && kDBytes % 1024 == 0,
                "tile buffers must be multiples of 1024 bytes (BLOCK_M and BLOCK_N multiples of 8)");
};

// An int the compiler knows (a template argument), usable where an int is.
template <int V>
struct FixedInt {
  TG_DEVICE constexpr operator int() const { return V; }
};

// Calls f(FixedInt<groups>), groups = the 8-column groups of a kBlockN-wide tile that lie in the 128-wide scale block
// of its first column, for a tile whose first column sits `offset` columns into that block (offset a multiple of
// kStep below 128; the last candidate is taken without a test).
template <int kBlockN, int kStep, int kOffset = 0, class F>
TG_DEVICE void with_fixed_first_groups(int offset, F&& f) {
  constexpr int kGroups = (128 - kOffset < kBlockN ? 128 - kOffset : kBlockN) / 8;
  if constexpr (kOffset + kStep >= 128)
    f(FixedInt<kGroups>{});
  else if (offset == kOffset)
    f(FixedInt<kGroups>{});
  else
    with_fixed_first_groups<kBlockN, kStep, kOffset + kStep>(offset, f);
}

// Calls f(FixedInt<I>{}) for I = kBegin .. kEnd - 1, in order.
template <int kBegin, int kEnd, class F>
TG_DEVICE void for_each_fixed(F&& f) {
  if constexpr (kBegin < kEnd) {
    f(FixedInt<kBegin>{});
    for_each_fixed<kBegin + 1, kEnd>(f);
  }
}

// The compile-time plan of one kernel: which of the recipe's modes this config runs, and the checks that keep
// them legal together.
template <class Cfg>
struct Sm90Fp8Traits {
  static constexpr int BLOCK_M = Cfg::BLOCK_M, BLOCK_N = Cfg::BLOCK_N, BLOCK_K = Cfg::BLOCK_K;
  static constexpr int kStages = Cfg::kStages;
  static constexpr int kMathWGs = Cfg::kNumMathWarpgroups;
  using Smem = Sm90Fp8Smem<Cfg>;
  static constexpr int kRowsPerWG = BLOCK_M / kMathWGs;  // rows of the tile one consumer warpgroup owns
  static constexpr int kSubM = kRowsPerWG / 64;
  static constexpr bool kPerTokenB = Cfg::kSfbPerToken;
  // Each 64-row sub-block's wgmmas run as kNParts groups over column parts of the tile, so that a part's promotion
  // (CUDA cores) overlaps the later parts' wgmmas: with one group, a warpgroup's promotion leaves the tensor pipe to
  // the other warpgroup alone (bench/probes/fp8-promotion-overlap: 79% busy, 95% with two parts). In the kernel, at
  // the power cap, two parts paid only for 128x192 tiles on two warpgroups (5-6% at 4096x2112x7168); 256x128, 128x128
  // and 128x64 were equal or slower, the narrower parts' wgmmas re-reading A.
  static constexpr int kNParts = kMathWGs == 2 && kSubM == 1 && BLOCK_N % 32 == 0 && BLOCK_N >= 192 ? 2 : 1;
  static constexpr int kPartN = BLOCK_N / kNParts;
  static constexpr int kScaleBlock = 128;  // K and N extent of one scale block
  static constexpr ScaleLayout kSfaLayout = Cfg::kSfaLayout;
  // The producer's second warp: with strided scales every lane copies and arrives; else one lane copies 1D2D B's
  // block scales; 1D1D with every scale through TMA needs it not at all.
  static constexpr int kScaleWarpLanes = 32;
  static constexpr bool kScaleWarpCopies = kSfaLayout == ScaleLayout::kStrided || (kPerTokenB && Cfg::kSfbStrided);
  static constexpr int kScaleArrivals = kScaleWarpCopies ? kScaleWarpLanes : kPerTokenB ? 0 : 1;
  // Who releases a consumer warp's stage: lane 0 after a __syncwarp() orders every lane's reads of it, but
  // compute-sanitizer's racecheck credits an arrival with the arriving thread's reads only and then reports the scale
  // warp's cp.async refills of 1D1D scales as hazards (bench/probes/racecheck-ring). There every lane arrives, at no
  // measured cost, so racecheck checks the kernel as it runs; elsewhere lane 0 does.
  static constexpr bool kEveryLaneReleases = kPerTokenB && kScaleWarpCopies;
  static constexpr u32 kReleasesPerWarp = kEveryLaneReleases ? 32 : 1;
  // Two or four K blocks per stage halve or quarter the stage handshakes (the per-stage cost that bounds narrow
  // small-M tiles, as in the BF16 kernel's 128-wide stages); kept to the plain 1D2D data-parallel and split paths.
  static constexpr int kScaleBlocksPerStage = Smem::kScaleBlocks;
  // A stage of several K blocks on a narrow one-sub-block tile issues every block's wgmmas at once, each into
  // registers of its own and a commit group of its own, then promotes each block as its group lands: the tensor pipe
  // runs the later blocks while the CUDA cores promote the earlier ones, instead of waiting for each block in turn.
  // Measured (H200, kernel timer): 64x2112x7168 on 64x16x512 9.6 -> 9.0 µs, 128x2112x7168 on 64x32x512 10.4 -> 9.6,
  // 64x7168x16384 on 64x64x256 39.7 -> 39.1. The extra registers (one fp32 copy of the tile per K block) bound it
  // to at most 64 per thread; one consumer warpgroup only (what was measured: 128x64 tiles on two warpgroups keep
  // one block at a time).
  static constexpr bool kOverlapStageBlocks = BLOCK_K > kScaleBlock&& kMathWGs == 1 && kSubM == 1 && kNParts == 1 &&
                                              !kPerTokenB && kScaleBlocksPerStage * BLOCK_N / 2 <= 64;
  // 1D2D: a tile's columns fall into at most two 128-wide scale blocks of B (checked below); when BLOCK_N divides
  // 128 there is one, when 128 divides BLOCK_N the split is at column 128 of every tile.
  static constexpr bool kOneScaleBlockB = kScaleBlock % BLOCK_N == 0;
  static constexpr bool kAlignedScaleBlocksB = BLOCK_N % kScaleBlock == 0;
  // Where a tile's first column can sit inside its scale block: a multiple of gcd(BLOCK_N, 128).
  static constexpr int kScaleSplitStep = (BLOCK_N & -BLOCK_N) < kScaleBlock ? (BLOCK_N & -BLOCK_N) : kScaleBlock;
  using Epilogue = Sm90Epilogue<kRowsPerWG, BLOCK_N, Cfg::kDIsFloat>;
  static constexpr int kClusterM = Cfg::kClusterM;
  static constexpr bool kMulticastB = kClusterM == 2;
  using Pair = Sm90ClusterPair<kMulticastB>;
  // Split-K / stream-K: work units are tiles with a K sub-range; each part's promoted fp32 result meets the
  // others' in the workspace (sched::SplitFixup), exactly as in the BF16 kernel.
  using Schedulers = sched::SchedulerFor<Cfg, BLOCK_M, BLOCK_N, BLOCK_K>;
  static constexpr bool kSplit = Schedulers::kSplit;
  using Scheduler = typename Schedulers::type;
  using Fixup = sched::SplitFixup<kSubM, BLOCK_N, kMathWGs, Cfg::kDeterministic>;
  // 256-row tiles of per-row contiguous problems may straddle two groups (sched::Tile::two_passes): each
  // consumer warpgroup owns one 128-row half and computes only in its own pass of the reduction.
  static constexpr bool kTwoPassTiles =
      Cfg::kGemmType == GemmType::kMGroupedContiguous && BLOCK_M > kContiguousGroupRowAlignment;
  // Per-group operand maps: A and B of tile.d_batch's group, at K offsets local to it (tile.k0 is the group's first
  // K element); the scales keep one K-block index over all groups, from group_maps.k_block_base.
  static constexpr bool kGroupMaps = Cfg::kGroupMaps;

  static_assert(kClusterM == 1 || (kMulticastB && BLOCK_N % 16 == 0),
                "B multicast splits the B tile into two halves of whole 8-row swizzle atoms");
  static_assert(!kTwoPassTiles ||
                    (kRowsPerWG == kContiguousGroupRowAlignment && !Cfg::kPsumLayout && kClusterM == 1 && !kPerTokenB),
                "256-row contiguous tiles: 1D2D, per-row group index, no cluster, one 128-row half per warpgroup");
  static_assert(BLOCK_K == kScaleBlock || BLOCK_K == 2 * kScaleBlock || BLOCK_K == 4 * kScaleBlock,
                "one, two or four 128-wide scale blocks of K per stage");
  static_assert(BLOCK_K == kScaleBlock || (!kPerTokenB && !kMulticastB && !kTwoPassTiles),
                "several K blocks per stage: 1D2D without clusters or two-pass tiles");
  static_assert(kMathWGs == 1 || kMathWGs == 2, "one or two consumer warpgroups");
  static_assert(!kGroupMaps || (Cfg::kGemmType == GemmType::kKGroupedContiguous && BLOCK_K == kScaleBlock &&
                                kClusterM == 1 && kSfaLayout != ScaleLayout::kRowMajor),
                "per-group maps: K-grouped problems, one K block per stage, no cluster, no row-major scale boxes");
  static_assert(kRowsPerWG == 64 || kRowsPerWG == 128, "each consumer warpgroup owns 64 or 128 rows");
  static_assert(BLOCK_N % 8 == 0 && BLOCK_N >= 16 && BLOCK_N <= 256, "BLOCK_N: multiple of 8 in [16, 256]");
  static_assert(kPerTokenB || BLOCK_N <= kScaleBlock || BLOCK_N - kScaleBlock == (BLOCK_N & -BLOCK_N & 127) ||
                    kAlignedScaleBlocksB,
                "1D2D: a tile may straddle at most two 128-wide scale blocks of B "
                "(BLOCK_N <= 128, or BLOCK_N - 128 == gcd(BLOCK_N, 128): 144, 160, 192, 256)");
  static_assert((kSubM + 1) * BLOCK_N / 2 <= 192, "result + one K block of partials must fit in registers");
  static_assert(!kPerTokenB || Cfg::kDIsFloat, "the 1D1D recipe writes fp32 D");

  // fp8_gemm_nt_skip_head_mid: the generated Config then has kHeadLeft/kHeadMid/kHeadRight (a plain kernel's has
  // none), and D column of GEMM column n skips `mid` columns in each head. The host takes only tiles as wide as a
  // divisor of left and right, so a tile stays in one part of a head and moves as a whole: only the store's first
  // column (and the column bound) are remapped, once per tile.
  static constexpr bool kHeadSplits = requires { Cfg::kHeadMid; };
  TG_DEVICE static int d_column(int n) {
    if constexpr (kHeadSplits) {
      static_assert(Cfg::kGemmType == GemmType::kNormal && !kPerTokenB && Cfg::kHeadLeft % BLOCK_N == 0 &&
                        Cfg::kHeadRight % BLOCK_N == 0,
                    "head splits: dense 1D2D, BLOCK_N dividing left and right");
      constexpr int kHead = Cfg::kHeadLeft + Cfg::kHeadRight;
      const int head = n / kHead, r = n % kHead;
      return head * (kHead + Cfg::kHeadMid) + (r < Cfg::kHeadLeft ? r : r + Cfg::kHeadMid);
    } else {
      return n;
    }
  }

  // B's group for the stage at reduction offset k0, which a two-pass tile's second pass maps back to its own K.
  TG_DEVICE static int stage_b_batch(const sched::Tile& tile, int& k0) {
    int b_batch = tile.b_batch;
    if constexpr (kTwoPassTiles) tile.pass_operands<BLOCK_K>(k0, b_batch);
    return b_batch;
  }
};

// Where a stage's buffers and the CTA's barriers sit in dynamic shared memory.
template <class Cfg>
struct Sm90Fp8Buffers {
  using Smem = Sm90Fp8Smem<Cfg>;
  // The dynamic shared memory named by its symbol (every such declaration names the same buffer), not held as a
  // pointer: the compiler then still sees shared-space addresses wherever a role function uses them.
  TG_DEVICE static u8* smem() {
    extern __shared__ __align__(1024) u8 dynamic_smem[];
    return dynamic_smem;
  }
  TG_DEVICE prim::StageBarriers<Cfg::kStages>* barriers() const {
    return reinterpret_cast<prim::StageBarriers<Cfg::kStages>*>(smem() + Smem::kBarrierOffset);
  }
  TG_DEVICE u8* a(int stage) const { return smem() + Smem::kAOffset + stage * Smem::kABytes; }
  TG_DEVICE u8* b(int stage) const { return smem() + Smem::kBOffset + stage * Smem::kBBytes; }
  TG_DEVICE float* sfa(int stage) const {
    return reinterpret_cast<float*>(smem() + Smem::kSfaOffset + stage * Smem::kSfaBytes);
  }
  TG_DEVICE float* sfb(int stage) const {
    return reinterpret_cast<float*>(smem() + Smem::kSfbOffset + stage * Smem::kSfbBytes);
  }
};

// The producer's TMA thread: per stage, one 128-byte atom of A and of B per K block (B multicast in a cluster pair)
// and every scale TMA can bring.
template <class Cfg, class Pair>
TG_DEVICE void sm90_fp8_load_stages(const Fp8GemmParams& params, const Fp8GroupMaps& group_maps,
                                    Sm90Fp8Buffers<Cfg> buffers, const Pair& pair) {
  using T = Sm90Fp8Traits<Cfg>;
  using Smem = typename T::Smem;
  constexpr int BLOCK_M = T::BLOCK_M, BLOCK_N = T::BLOCK_N, kScaleBlock = T::kScaleBlock;
  const GemmParams& gemm = params.gemm;
  auto tx_bytes = [&](const sched::Tile& tile) {
    return is_a_tail(gemm, tile.m0) ? Smem::stage_tx_bytes(gemm.a_tail_rows, params.sfa_tail_rows)
                                    : Smem::stage_tx_bytes(BLOCK_M, BLOCK_M);
  };
  sm90_produce<typename T::Scheduler, T::kStages, T::BLOCK_K>(
      gemm, buffers.barriers(), tx_bytes, [&](const sched::Tile& tile, int k0, int stage, u64* full) {
        int b_batch = T::stage_b_batch(tile, k0);
        const bool tail = is_a_tail(gemm, tile.m0);
        const TmaDescriptor* tma_a = tail ? &gemm.tma_a_tail : &gemm.tma_a;
        const TmaDescriptor* tma_b = &gemm.tma_b;
        const TmaDescriptor* tma_sfa = tail ? &params.tma_sfa_tail : &params.tma_sfa;
        const int k_scale0 = k0 / kScaleBlock + (T::kGroupMaps ? group_maps.k_block_base : 0);
        // Per-group maps: the group's own A and B, at K offsets inside it, batch coordinate 0.
        int a_batch = tile.a_batch, k_local0 = k0;
        if constexpr (T::kGroupMaps) {
          tma_a = &group_maps.maps[2 * tile.d_batch];
          tma_b = &group_maps.maps[2 * tile.d_batch + 1];
          a_batch = b_batch = 0;
          k_local0 = k0 - tile.k0;
        }
        // Row-major scales: one box of the four K blocks around the stage's, BLOCK_M rows (rows past the last and
        // K blocks past K zero-filled: their products are never stored, or are 0 · 0). The box starts at a
        // multiple of four K blocks: a TMA box's inner start must be 16-byte aligned (an unaligned one faulted
        // with an illegal instruction); the consumers pick their column (row_box_column).
        if constexpr (T::kSfaLayout == ScaleLayout::kRowMajor)
          prim::tma_load_3d(&params.tma_sfa, full, buffers.sfa(stage), k_scale0 & ~(kRowMajorScaleBoxBlocks - 1),
                            tile.m0, tile.a_batch);
      // Per K block of the stage: one 128-byte atom of A and of B, one column of MN-major scales.
#pragma unroll
        for (int h = 0; h < T::kScaleBlocksPerStage; ++h) {
          const int k = k_local0 + h * kScaleBlock;
          prim::tma_load_3d(tma_a, full, buffers.a(stage) + h * BLOCK_M * 128, k, tile.m0, a_batch);
          if constexpr (T::kMulticastB)
            pair.template load_shared<BLOCK_N>(&gemm.tma_b, full, buffers.b(stage) + h * BLOCK_N * 128, k, tile.n0,
                                               b_batch, tile.share_b);
          else
            prim::tma_load_3d(tma_b, full, buffers.b(stage) + h * BLOCK_N * 128, k, tile.n0, b_batch);
          if constexpr (T::kSfaLayout == ScaleLayout::kMnMajor)
            prim::tma_load_3d(tma_sfa, full, buffers.sfa(stage) + h * Smem::kSfaBlockBytes / 4, tile.m0, k_scale0 + h,
                              tile.a_batch);
          if constexpr (T::kPerTokenB && !Cfg::kSfbStrided)  // (one K block per stage: checked above)
            prim::tma_load_3d(&params.tma_sfb, full, buffers.sfb(stage), tile.n0, k_scale0, tile.b_batch);
        }
      });
}

// The producer's scale warp: the stage's scales that TMA does not bring, with 4-byte cp.async: 1D2D B's block
// scales (lane 0) and strided per-token scales (every lane: A's column of each K block, MN-contiguous in shared
// memory as the consumers read it; 1D1D B's likewise). Rows past the last are read from the last row: their
// products land in accumulator rows or columns that are never stored.
template <class Cfg>
TG_DEVICE void sm90_fp8_copy_scales(const Fp8GemmParams& params, const Fp8GroupMaps& group_maps,
                                    Sm90Fp8Buffers<Cfg> buffers, int lane) {
  using T = Sm90Fp8Traits<Cfg>;
  constexpr int BLOCK_M = T::BLOCK_M, BLOCK_N = T::BLOCK_N, kScaleBlock = T::kScaleBlock;
  const GemmParams& gemm = params.gemm;
  const ScaleTensor& sfa = params.sfa;
  const ScaleTensor& sfb = params.sfb;
  sm90_walk_stages<typename T::Scheduler, T::kStages, T::BLOCK_K>(
      gemm, buffers.barriers(), [&](const sched::Tile& tile, int k0, int stage, u64* full) {
        const int b_batch = T::stage_b_batch(tile, k0);
        const int kb0 = k0 / kScaleBlock + (T::kGroupMaps ? group_maps.k_block_base : 0);
#pragma unroll
        for (int h = 0; h < T::kScaleBlocksPerStage; ++h) {
          // A K block past K (in the last stage, when the K-block count is not a multiple of the stage's) reads
          // the first block's scales again: its A and B are zero-filled, and a finite scale keeps 0 · scale at 0.
          const long long kb = kb0 + (k0 + h * kScaleBlock < gemm.k ? h : 0);
          if constexpr (T::kSfaLayout == ScaleLayout::kStrided) {
            const float* a_column = sfa.data + tile.a_batch * sfa.group_stride + kb * sfa.k_stride;
            float* a_dst = buffers.sfa(stage) + h * T::Smem::kSfaBlockBytes / 4;
        // (Not unrolled: this warp has 40 registers when two consumer warpgroups take the rest.)
#pragma unroll 1
            for (int r = lane; r < BLOCK_M; r += T::kScaleWarpLanes)
              prim::cp_async_4(a_dst + r, a_column + min(tile.m0 + r, sfa.rows - 1) * sfa.row_stride);
          }
          const float* b_column = sfb.data + b_batch * sfb.group_stride + kb * sfb.k_stride;
          if constexpr (T::kPerTokenB) {  // (one K block per stage: checked above)
            if constexpr (Cfg::kSfbStrided) {
#pragma unroll 1
              for (int c = lane; c < BLOCK_N; c += T::kScaleWarpLanes)
                prim::cp_async_4(buffers.sfb(stage) + c, b_column + min(tile.n0 + c, sfb.rows - 1) * sfb.row_stride);
            }
          } else if (!T::kScaleWarpCopies || lane == 0) {  // (only lane 0 runs this role unless every lane copies)
            // The tile's first 128-column block and the next (this one again past the last row: never read), both
            // clamped to the last row.
            const int first = min(tile.n0 / kScaleBlock, sfb.rows - 1);
            prim::cp_async_4(buffers.sfb(stage) + 2 * h, b_column + first * sfb.row_stride);
            if constexpr (!T::kOneScaleBlockB)
              prim::cp_async_4(buffers.sfb(stage) + 2 * h + 1,
                               b_column + min(first + 1, sfb.rows - 1) * sfb.row_stride);
          }
        }
        prim::cp_async_mbarrier_arrive_noinc(full);
      });
}

// One consumer warpgroup: per K block and 64-row sub-block, wgmmas into fresh fp32 registers, then promotion
// (scale and add) into the fp32 result; per tile, the split-K fixup and the epilogue.
// The register arrays are locals of run(), passed down by reference: as members they kept the whole object in
// local memory where a loop indexes them.
template <class Cfg, class Pair>
struct Sm90Fp8Consumer {
  using T = Sm90Fp8Traits<Cfg>;
  static constexpr int BLOCK_M = T::BLOCK_M, BLOCK_N = T::BLOCK_N, kSubM = T::kSubM, kPartN = T::kPartN;
  static constexpr int kScaleBlock = T::kScaleBlock, kBlocks = T::kScaleBlocksPerStage;
  using Acc = float[kSubM][BLOCK_N / 2];                                        // the scaled fp32 result
  using Part = float[BLOCK_N / 2];                                              // one K block of one sub-block
  using BlockParts = float[T::kOverlapStageBlocks ? kBlocks : 1][BLOCK_N / 2];  // each K block's, overlapped
  using State = prim::PipelineState<T::kStages>;

  // This thread's scales of every K block of a stage, read before the stage can be released.
  struct StageScales {
    float sb_first[kBlocks] = {}, sb_second[kBlocks] = {};  // 1D2D: B's (at most two) block scales of the tile
    float sa[kBlocks][kSubM][2];                            // A's, rows thread_row and thread_row + 8
  };

  const Fp8GemmParams& params;
  const Sm90Fp8Buffers<Cfg> buffers;
  const Pair& pair;
  const int math_wg, thread_in_wg;
  const int lane = threadIdx.x % 32;
  const int row_base = math_wg * T::kRowsPerWG;                // first tile row of this warpgroup
  const int thread_row = (thread_in_wg / 32) * 16 + lane / 4;  // accumulator rows thread_row and thread_row + 8
  const int thread_col = 2 * (lane % 4);                       // accumulator columns 8j + thread_col (+1)

  TG_DEVICE void release(u32 stage) const { pair.release(buffers.barriers(), stage); }

  // A stage's first descriptors (this warpgroup's rows, K slice 0). K-major tiles of 128-byte rows: a 32-element K
  // slice is a 32-byte step inside the swizzle atom, a 64-row sub-block 64 rows, a column part kPartN rows of B.
  TG_DEVICE u64 a_stage_desc(int stage) const {
    return prim::make_smem_desc(smem_addr(buffers.a(stage)) + row_base * 128, 0, 1024, prim::SmemSwizzle::k128B);
  }
  TG_DEVICE u64 b_stage_desc(int stage) const {
    return prim::make_smem_desc(smem_addr(buffers.b(stage)), 0, 1024, prim::SmemSwizzle::k128B);
  }

  // Passes `stages` stages back unread (the other pass of a two-pass tile).
  TG_DEVICE void hand_back(State& st, int stages) const {
    for (int i = 0; i < stages; ++i) {
      buffers.barriers()->consumer_wait(st);
      if (T::kEveryLaneReleases || lane == 0) release(st.index);
      st.advance();
    }
  }

  TG_DEVICE StageScales read_scales(u32 stage, const sched::Tile& tile, int kb) const {
    StageScales scales;
#pragma unroll
    for (int h = 0; h < kBlocks; ++h) {
      if constexpr (!T::kPerTokenB) {
        scales.sb_first[h] = buffers.sfb(stage)[2 * h];
        if constexpr (!T::kOneScaleBlockB) scales.sb_second[h] = buffers.sfb(stage)[2 * h + 1];
      }
      // Row r of K block h: columns at [h][r], a row-major box at [r][column of h] (a warp's eight rows 16
      // bytes apart fall in distinct banks). The box's first column is the K block at a multiple of four
      // (producer): this stage's first block sits row_box_column in.
      constexpr bool kRowBox = T::kSfaLayout == ScaleLayout::kRowMajor;
      constexpr int kRowStep = kRowBox ? kRowMajorScaleBoxBlocks : 1;
      const int row_box_column = kRowBox ? (tile.k0 / kScaleBlock + kb * kBlocks) & (kRowMajorScaleBoxBlocks - 1) : 0;
      const float* sfa_block = buffers.sfa(stage) + (kRowBox ? row_box_column + h : h * T::Smem::kSfaBlockBytes / 4);
#pragma unroll
      for (int s = 0; s < kSubM; ++s) {
        scales.sa[h][s][0] = sfa_block[(row_base + s * 64 + thread_row) * kRowStep];
        scales.sa[h][s][1] = sfa_block[(row_base + s * 64 + thread_row + 8) * kRowStep];
      }
    }
    return scales;
  }

  // 1D2D promotion of K block h's wgmma result `regs` (8-column groups [j_begin, j_end)) into sub-block s:
  // acc += regs · sa[row] · sb[column block]; groups below first_groups take B's first block scale.
  template <class FirstGroups>
  TG_DEVICE static void promote_1d2d(Acc& acc, const StageScales& sc, const float* regs, int h, int s, int j_begin,
                                     int j_end, FirstGroups first_groups) {
    const float s00 = sc.sa[h][s][0] * sc.sb_first[h], s10 = sc.sa[h][s][1] * sc.sb_first[h];
    const float s01 = sc.sa[h][s][0] * sc.sb_second[h], s11 = sc.sa[h][s][1] * sc.sb_second[h];
#pragma unroll
    for (int j = j_begin; j < j_end; ++j) {
      const bool in_first = j < first_groups;
      const float top = in_first ? s00 : s01, bottom = in_first ? s10 : s11;
      acc[s][4 * j + 0] += top * regs[4 * j + 0];
      acc[s][4 * j + 1] += top * regs[4 * j + 1];
      acc[s][4 * j + 2] += bottom * regs[4 * j + 2];
      acc[s][4 * j + 3] += bottom * regs[4 * j + 3];
    }
  }

  // 1D1D promotion of groups [j_begin, j_end): acc += part · sa[row] · sb[column], B's scales read from the stage.
  TG_DEVICE void promote_1d1d(Acc& acc, const Part& part, u32 stage, const StageScales& sc, int h, int s, int j_begin,
                              int j_end) const {
    const float* sfb_stage = buffers.sfb(stage);
#pragma unroll
    for (int j = j_begin; j < j_end; ++j) {
      const float sb0 = sfb_stage[8 * j + thread_col], sb1 = sfb_stage[8 * j + thread_col + 1];
      acc[s][4 * j + 0] += sc.sa[h][s][0] * sb0 * part[4 * j + 0];
      acc[s][4 * j + 1] += sc.sa[h][s][0] * sb1 * part[4 * j + 1];
      acc[s][4 * j + 2] += sc.sa[h][s][1] * sb0 * part[4 * j + 2];
      acc[s][4 * j + 3] += sc.sa[h][s][1] * sb1 * part[4 * j + 3];
    }
  }

  // One commit group of wgmmas: K block h of the stage, 64-row sub-block s, column part kPart, into `regs`.
  template <int kPart>
  TG_DEVICE static void issue_k_block(u64 a_stage, u64 b_stage, float* regs, int h, int s) {
#pragma unroll
    for (int kk = 0; kk < kScaleBlock / 32; ++kk)
      prim::wgmma_e4m3<kPartN>(prim::advance_smem_desc(a_stage, h * BLOCK_M * 128 + s * 64 * 128 + kk * 32),
                               prim::advance_smem_desc(b_stage, h * BLOCK_N * 128 + kPart * kPartN * 128 + kk * 32),
                               regs, kk > 0 ? 1u : 0u);
    prim::wgmma_commit();
  }

  // A stage whose K blocks' wgmma groups are all in flight at once (kOverlapStageBlocks: one sub-block, one part);
  // each block is promoted as its group lands.
  template <class FirstGroups>
  TG_DEVICE void overlapped_stage(Acc& acc, BlockParts& block_parts, u32 stage, u64 a_stage, u64 b_stage,
                                  const StageScales& sc, FirstGroups first_groups) const {
#pragma unroll
    for (int h = 0; h < kBlocks; ++h)
#pragma unroll
      for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(block_parts[h][i]);
    prim::wgmma_fence();
#pragma unroll
    for (int h = 0; h < kBlocks; ++h) issue_k_block<0>(a_stage, b_stage, block_parts[h], h, 0);
    for_each_fixed<0, kBlocks>([&](auto block) {
      constexpr int h = decltype(block){};
      prim::wgmma_wait<kBlocks - 1 - h>();
#pragma unroll
      for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(block_parts[h][i]);
      if (h == kBlocks - 1 && lane == 0) release(stage);
      promote_1d2d(acc, sc, block_parts[h], h, 0, 0, BLOCK_N / 8, first_groups);
    });
  }

  // A stage one K block and sub-block at a time; each column part is promoted while the later parts' wgmmas run.
  template <class FirstGroups>
  TG_DEVICE void stage_by_blocks(Acc& acc, Part& part, u32 stage, u64 a_stage, u64 b_stage, const StageScales& sc,
                                 FirstGroups first_groups) const {
#pragma unroll
    for (int hs = 0; hs < kBlocks * kSubM; ++hs) {
      const int h = hs / kSubM, s = hs % kSubM;  // K block of the stage, 64-row sub-block
#pragma unroll
      for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(part[i]);
      prim::wgmma_fence();
      // Part p's group is done once at most the later parts' groups are in flight: its promotion runs while
      // they do (in the tensor pipe), instead of after all of them.
      auto promote_part = [&](auto part_index) {
        constexpr int p = decltype(part_index){};
        prim::wgmma_wait<T::kNParts - 1 - p>();
#pragma unroll
        for (int i = p * kPartN / 2; i < (p + 1) * kPartN / 2; ++i) prim::wgmma_fence_operand(part[i]);
        // 1D2D: every operand of this stage has been read; let the producer refill it while we promote.
        if (!T::kPerTokenB && hs == kBlocks * kSubM - 1 && p == T::kNParts - 1 && lane == 0) release(stage);
        if constexpr (!T::kPerTokenB)
          promote_1d2d(acc, sc, part, h, s, p * kPartN / 8, (p + 1) * kPartN / 8, first_groups);
        else
          promote_1d1d(acc, part, stage, sc, h, s, p * kPartN / 8, (p + 1) * kPartN / 8);
      };
      // kNParts groups of wgmma, one per column part, each into its own registers of `part`.
      issue_k_block<0>(a_stage, b_stage, part, h, s);
      if constexpr (T::kNParts == 2) issue_k_block<1>(a_stage, b_stage, part + kPartN / 2, h, s);
#pragma unroll
      for (int i = 0; i < BLOCK_N / 2; ++i) prim::wgmma_fence_operand(part[i]);
      promote_part(FixedInt<0>{});
      if constexpr (T::kNParts == 2) promote_part(FixedInt<1>{});
    }
    // 1D1D read B's scales from the stage during promotion: release only now, once every lane's reads are done
    // (lane 0's arrival orders only its own; the 1D2D reads above are followed by warp-wide wgmma instructions).
    if constexpr (T::kEveryLaneReleases) {
      release(stage);
    } else if constexpr (T::kPerTokenB) {
      __syncwarp();
      if (lane == 0) release(stage);
    }
  }

  // The K loop over `compute_blocks` stages. first_groups: how many 8-column groups of the tile lie in the first of
  // its (at most two) 128-wide scale blocks of B (1D2D). Where it takes few values (BLOCK_N 96, 160, 192) the loop
  // is instantiated once per value, so each group's scale is chosen at compile time: as a runtime test it cost a
  // compare, a select and two multiplies per 8 columns in every K block (72 instructions at 128x192, beside 96 FFMAs).
  template <class FirstGroups>
  TG_DEVICE void k_loop(State& st, Acc& acc, Part& part, BlockParts& block_parts, const sched::Tile& tile,
                        int compute_blocks, FirstGroups first_groups) const {
    for (int kb = 0; kb < compute_blocks; ++kb) {
      // The stage's descriptors are built before the wait: built after it (where the compiler sinks them),
      // their ~20 uniform-datapath instructions sat between the data's arrival and the first wgmma.
      u64 a_stage = a_stage_desc(st.index), b_stage = b_stage_desc(st.index);
      prim::compute_before_next_asm(a_stage);
      prim::compute_before_next_asm(b_stage);
      buffers.barriers()->consumer_wait(st);
      const StageScales scales = read_scales(st.index, tile, kb);
      if constexpr (T::kOverlapStageBlocks)
        overlapped_stage(acc, block_parts, st.index, a_stage, b_stage, scales, first_groups);
      else
        stage_by_blocks(acc, part, st.index, a_stage, b_stage, scales, first_groups);
      st.advance();
    }
  }

  // Every tile of this CTA.
  TG_DEVICE void run() const {
    const GemmParams& gemm = params.gemm;
    u8* smem_d = buffers.smem() + T::Smem::kDOffset + math_wg * T::Epilogue::kStagingBytes;
    typename T::Scheduler scheduler(gemm);
    State st;
    sched::Tile tile;
    Acc acc;
    Part part;
    BlockParts block_parts;
    while (scheduler.next(tile)) {
#pragma unroll
      for (int s = 0; s < kSubM; ++s)
#pragma unroll
        for (int i = 0; i < BLOCK_N / 2; ++i) acc[s][i] = 0.0f;

      // A two-pass tile: this warpgroup computes its own half's pass only and hands the other pass's stages back
      // unread. The skipping stays outside the K loop: a per-block test inside it made every contiguous tile
      // ~10% slower (measured on the H200).
      int compute_blocks = tile.k_blocks, skip_after = 0;
      if constexpr (T::kTwoPassTiles) {
        compute_blocks = tile.pass_blocks();
        skip_after = tile.blocks_after_pass(math_wg);
        hand_back(st, tile.blocks_before_pass(math_wg));
      }
      auto loop = [&](auto first_groups) { k_loop(st, acc, part, block_parts, tile, compute_blocks, first_groups); };
      if constexpr (T::kPerTokenB || T::kOneScaleBlockB)
        loop(FixedInt<BLOCK_N / 8>{});
      else if constexpr (T::kAlignedScaleBlocksB)
        loop(FixedInt<kScaleBlock / 8>{});
      else if constexpr (kScaleBlock / T::kScaleSplitStep <= 4)
        with_fixed_first_groups<BLOCK_N, T::kScaleSplitStep>(tile.n0 % kScaleBlock, loop);
      else
        loop((kScaleBlock - tile.n0 % kScaleBlock) / 8);
      if constexpr (T::kTwoPassTiles) hand_back(st, skip_after);

      // A cut tile: publish this part; only the part that completes the tile goes on.
      if constexpr (T::kSplit) {
        if (tile.parts > 1 &&
            !T::Fixup::reduce(gemm, scheduler, tile, acc, math_wg, thread_in_wg, warpgroup_barrier(math_wg)))
          continue;
      }
      // A tile walked only to feed the peer's multicast (padding, or past its group's end) stores nothing.
      if (!tile.active) continue;
      // Epilogue: registers → swizzled shared memory → TMA store (at D's columns: T::d_column).
      T::Epilogue::template write_tile<Cfg::kAccumulate>(d_map_for_rows(gemm, tile.m0 + row_base), smem_d, acc,
                                                         thread_in_wg, warpgroup_barrier(math_wg), tile.m0 + row_base,
                                                         T::d_column(tile.n0), T::d_column(gemm.n), tile.d_batch);
    }
  }
};

// group_maps: Cfg::kGroupMaps kernels only (K-grouped operands in DeepGEMM's layout, fp8_params.hpp).
template <class Cfg>
TG_DEVICE void sm90_fp8_gemm(const Fp8GemmParams& params, const Fp8GroupMaps group_maps = {}) {
  using T = Sm90Fp8Traits<Cfg>;
  using Pair = typename T::Pair;
  const Sm90Fp8Buffers<Cfg> buffers;
  const GemmParams& gemm = params.gemm;
  auto init = [&] {
    prim::tma_prefetch_descriptor(&gemm.tma_a);
    prim::tma_prefetch_descriptor(&gemm.tma_b);
    prim::tma_prefetch_descriptor(&gemm.tma_d);
    if constexpr (T::kSfaLayout != ScaleLayout::kStrided) prim::tma_prefetch_descriptor(&params.tma_sfa);
    if (gemm.a_tail_rows > 0) {
      prim::tma_prefetch_descriptor(&gemm.tma_a_tail);
      if constexpr (T::kSfaLayout == ScaleLayout::kMnMajor) prim::tma_prefetch_descriptor(&params.tma_sfa_tail);
    }
    if (gemm.d_tail_rows > 0) prim::tma_prefetch_descriptor(&gemm.tma_d_tail);
    if constexpr (T::kPerTokenB && !Cfg::kSfbStrided) prim::tma_prefetch_descriptor(&params.tma_sfb);
    // Empty: kReleasesPerWarp releases per consumer warp of every CTA sharing a stage. Full: the TMA thread and the
    // scale warp's cp.async arrivals.
    buffers.barriers()->init(T::kMathWGs * 4 * Pair::kCtas * T::kReleasesPerWarp, 1 + T::kScaleArrivals);
  };
  auto produce = [&](const Pair& pair, int thread_in_wg) {
    const int producer_warp = thread_in_wg / 32;
    if (producer_warp == 0 && prim::elect_one_sync())
      sm90_fp8_load_stages<Cfg>(params, group_maps, buffers, pair);
    else if (T::kScaleArrivals > 0 && producer_warp == 1 && (T::kScaleWarpCopies || thread_in_wg % 32 == 0))
      sm90_fp8_copy_scales<Cfg>(params, group_maps, buffers, thread_in_wg % 32);
  };
  auto consume = [&](const Pair& pair, int math_wg, int thread_in_wg) {
    const Sm90Fp8Consumer<Cfg, Pair> consumer{params, buffers, pair, math_wg, thread_in_wg};
    consumer.run();
  };
  sm90_persistent_cta<T::kMathWGs, Pair>(init, produce, consume);
}

}  // namespace tilegemm
