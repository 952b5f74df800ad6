#pragma once
// Work-unit schedulers for split-K and stream-K (dense and batched problems). A work unit is an output tile
// with a K sub-range: sched::Tile's k0 / k_blocks, plus tile_index, part and parts, so the kernel's main
// loop is unchanged and only the epilogue asks whether the tile was cut (parts > 1).
//
//   split-K:  T tiles × S slices; unit u = (tile u / S, slice u % S), walked with a stride of gridDim.x.
//             Slice s covers K blocks [s·KB/S, (s+1)·KB/S), so slices differ by at most one K block and
//             a K that is not a multiple of the split (or of BLOCK_K: TMA zero-fills) needs nothing special.
//   stream-K: the T·KB K blocks of all tiles are laid end to end and CTA c of the G-CTA grid takes
//             [⌊c·T·KB/G⌋, ⌊(c+1)·T·KB/G⌋): every CTA does the same amount of MMA work to within one K
//             block. A CTA's range starts and ends inside tiles; the tiles in between it computes whole.
//
// The parts of one tile are numbered in K order (part 0 holds the lowest K blocks); the fix-up sums them in
// that order, which makes the deterministic mode bit-reproducible whichever CTA finishes last.
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm::sched {

template <GemmScheme kScheme, GemmType kType, int BLOCK_M, int BLOCK_N, int kRasterGroup, int BLOCK_K = 64>
struct SplitTileScheduler {
  static_assert(kScheme == GemmScheme::kSplitK || kScheme == GemmScheme::kStreamK, "split-K or stream-K");
  static_assert(kType == GemmType::kNormal || kType == GemmType::kBatched,
                "split-K / stream-K cut the tiles of dense and batched problems only");
  static constexpr bool kStreamK = kScheme == GemmScheme::kStreamK;

  const GemmParams& p;
  int num_m_blocks, num_n_blocks, num_tiles;
  int k_blocks;     // K blocks of one whole tile
  int split;        // split-K: slices per tile
  i64 total;        // stream-K: K blocks of the whole problem (num_tiles · k_blocks)
  i64 cursor, end;  // split-K: next unit / all units; stream-K: this CTA's remaining [cursor, end)

  TG_DEVICE explicit SplitTileScheduler(const GemmParams& params)
      : p(params), num_m_blocks(ceil_div(params.m, BLOCK_M)), num_n_blocks(ceil_div(params.n, BLOCK_N)) {
    num_tiles = num_m_blocks * num_n_blocks * (kType == GemmType::kBatched ? params.num_groups : 1);
    k_blocks = ceil_div(params.k, BLOCK_K);
    split = kStreamK ? 1 : params.split_k;
    total = static_cast<i64>(num_tiles) * k_blocks;
    if constexpr (kStreamK) {
      cursor = range_begin(blockIdx.x);
      end = range_begin(blockIdx.x + 1);
    } else {
      cursor = blockIdx.x;
      end = static_cast<i64>(num_tiles) * split;
    }
  }

  // stream-K: first K block of CTA c's range, and the CTA whose range holds K block i (the inverse:
  // range_begin(c) <= i  ⇔  c·total < (i+1)·G  ⇔  c <= ⌈(i+1)·G / total⌉ − 1).
  TG_DEVICE i64 range_begin(i64 c) const { return c * total / gridDim.x; }
  TG_DEVICE int owner(i64 i) const { return static_cast<int>(((i + 1) * gridDim.x - 1) / total); }

  // Workspace slot holding part q of tile t (deterministic mode). split-K: one per (tile, slice).
  // stream-K: two per CTA, for the cut tiles at the start (0) and the end (1) of its range; a CTA whose whole
  // range lies inside one tile uses slot 1. Both the writer and the fix-up derive it from (t, q) alone.
  TG_DEVICE int slot(int t, int q) const {
    if constexpr (kStreamK) {
      const int c = owner(static_cast<i64>(t) * k_blocks) + q;
      const bool ends_here = (range_begin(c + 1) - 1) / k_blocks == t;
      return 2 * c + (ends_here ? 1 : 0);
    } else {
      return t * split + q;
    }
  }

  // Fills `tile` with this CTA's next work unit; false when none is left.
  TG_DEVICE bool next(Tile& tile) {
    if (cursor >= end) return false;
    int t, kb0, kb1;
    if constexpr (kStreamK) {
      t = static_cast<int>(cursor / k_blocks);
      const i64 first = static_cast<i64>(t) * k_blocks;
      const i64 seg_end = min(end, first + k_blocks);
      kb0 = static_cast<int>(cursor - first);
      kb1 = static_cast<int>(seg_end - first);
      const int first_owner = owner(first);
      tile.parts = owner(first + k_blocks - 1) - first_owner + 1;
      tile.part = static_cast<int>(blockIdx.x) - first_owner;
      cursor = seg_end;
    } else {
      t = static_cast<int>(cursor / split);
      const int s = static_cast<int>(cursor % split);
      kb0 = static_cast<int>(static_cast<i64>(s) * k_blocks / split);
      kb1 = static_cast<int>(static_cast<i64>(s + 1) * k_blocks / split);
      tile.parts = split;
      tile.part = s;
      cursor += gridDim.x;
    }
    const int tiles_per_group = num_m_blocks * num_n_blocks;
    const int g = t / tiles_per_group;
    int m_block, n_block;
    raster<kRasterGroup>(t - g * tiles_per_group, num_m_blocks, num_n_blocks, m_block, n_block);
    tile.m0 = m_block * BLOCK_M;
    tile.n0 = n_block * BLOCK_N;
    tile.a_batch = tile.b_batch = tile.d_batch = g;
    tile.k0 = kb0 * BLOCK_K;
    tile.k_blocks = kb1 - kb0;
    tile.tile_index = t;
    return true;
  }
};

// The scheduler a kernel config uses: data-parallel → TileScheduler (with the config's cluster pairing),
// split-K / stream-K → SplitTileScheduler. Cfg names kScheme, kGemmType, kRasterGroup, kPsumLayout, kClusterM.
template <class Cfg, int BLOCK_M, int BLOCK_N, int BLOCK_K>
struct SchedulerFor {
  static constexpr bool kSplit = Cfg::kScheme != GemmScheme::kDataParallel;
  static_assert(!kSplit || (Cfg::kClusterM == 1 && !Cfg::kPsumLayout &&
                            (Cfg::kGemmType == GemmType::kNormal || Cfg::kGemmType == GemmType::kBatched)),
                "split-K / stream-K: dense or batched problems without clusters");
  using DataParallel = TileScheduler<Cfg::kGemmType, BLOCK_M, BLOCK_N, Cfg::kRasterGroup, Cfg::kPsumLayout, BLOCK_K,
                                     Cfg::kClusterM>;
  using Split = SplitTileScheduler<Cfg::kScheme, Cfg::kGemmType, BLOCK_M, BLOCK_N, Cfg::kRasterGroup, BLOCK_K>;
  template <bool kCut, int kDummy = 0>
  struct Pick {
    using type = DataParallel;
  };
  template <int kDummy>
  struct Pick<true, kDummy> {
    using type = Split;
  };
  using type = typename Pick<kSplit>::type;
};

}  // namespace tilegemm::sched
