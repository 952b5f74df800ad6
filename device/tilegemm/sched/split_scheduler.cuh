#pragma once
// Work-unit schedulers for split-K and stream-K (dense and batched problems). A work unit is an output tile
// with a K sub-range: sched::Tile's k0 / k_blocks, plus tile_index, part and parts, so the kernel's main
// loop is unchanged and only the epilogue asks whether the tile was cut (parts > 1).
//
//   split-K:  T tiles × S slices; unit u = (tile u / S, slice u % S), walked with a stride of gridDim.x.
//             Slice s covers K blocks [s·KB/S, (s+1)·KB/S), so slices differ by at most one K block and
//             a K that is not a multiple of the split (or of BLOCK_K: TMA zero-fills) needs nothing special.
//   stream-K: first, with two or more full waves of tiles, the W = stream_k_whole_tiles(T, G) leading tiles
//             are walked whole with a stride of G, as data-parallel tiles. Then the S·KB K blocks of the
//             S = T − W remaining tiles are laid end to end and CTA c of the G-CTA grid takes
//             [⌊c·S·KB/G⌋, ⌊(c+1)·S·KB/G⌋): every CTA does the same amount of MMA work to within one K
//             block. A CTA's range starts and ends inside tiles; the tiles in between it computes whole.
//             Only those S tiles can be cut: cut_index() numbers them for the fix-up's slots and counters.
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

  // The only state is the cursor: every count below is recomputed from the parameters (constant memory) where
  // it is used. The producer warpgroup walks this schedule in 40 registers, and keeping the counts live made the
  // FP8 stream-K kernels spill.
  const GemmParams& p;
  // split-K: next unit / all units. stream-K: this CTA's remaining [cursor, end) of the shared K blocks, after
  // −cursor whole tiles while cursor is negative.
  i64 cursor, end;

  TG_DEVICE explicit SplitTileScheduler(const GemmParams& params) : p(params) {
    if constexpr (kStreamK) {
      // Every CTA has the same number of whole tiles: whole_tiles() is a multiple of the grid.
      cursor = whole_tiles() > 0 ? -static_cast<i64>(whole_tiles() / grid()) : range_begin(blockIdx.x);
      end = range_begin(blockIdx.x + 1);
    } else {
      cursor = blockIdx.x;
      end = static_cast<i64>(num_tiles()) * p.split_k;
    }
  }

  TG_DEVICE int num_m_blocks() const { return ceil_div(p.m, BLOCK_M); }
  TG_DEVICE int num_n_blocks() const { return ceil_div(p.n, BLOCK_N); }
  TG_DEVICE int num_tiles() const {
    return num_m_blocks() * num_n_blocks() * (kType == GemmType::kBatched ? p.num_groups : 1);
  }
  TG_DEVICE int k_blocks() const { return ceil_div(p.k, BLOCK_K); }  // of one whole tile
  TG_DEVICE int grid() const { return static_cast<int>(gridDim.x); }
  // stream-K: the leading tiles walked whole (W above, a multiple of the grid); 0 for split-K.
  TG_DEVICE int whole_tiles() const { return kStreamK ? stream_k_whole_tiles(num_tiles(), grid()) : 0; }
  // stream-K: K blocks of the shared tiles.
  TG_DEVICE i64 total() const { return static_cast<i64>(num_tiles() - whole_tiles()) * k_blocks(); }

  // stream-K: first K block of CTA c's range, and the CTA whose range holds K block i (the inverse:
  // range_begin(c) <= i  ⇔  c·total < (i+1)·G  ⇔  c <= ⌈(i+1)·G / total⌉ − 1). K blocks are counted from the
  // first shared tile.
  TG_DEVICE i64 range_begin(i64 c) const { return c * total() / grid(); }
  TG_DEVICE int owner(i64 i) const { return static_cast<int>(((i + 1) * grid() - 1) / total()); }

  // Workspace slot holding part q of tile t (deterministic mode). split-K: one per (tile, slice).
  // stream-K: two per CTA, for the cut tiles at the start (0) and the end (1) of its range; a CTA whose whole
  // range lies inside one tile uses slot 1. Both the writer and the fix-up derive it from (t, q) alone.
  TG_DEVICE int slot(int t, int q) const {
    if constexpr (kStreamK) {
      const int u = cut_index(t);
      const int c = owner(static_cast<i64>(u) * k_blocks()) + q;
      const bool ends_here = (range_begin(c + 1) - 1) / k_blocks() == u;
      return 2 * c + (ends_here ? 1 : 0);
    } else {
      return t * p.split_k + q;
    }
  }

  // Index of tile t among the tiles that can be cut (the fix-up's workspace slot and counter, non-deterministic
  // mode): the shared tiles for stream-K, every tile for split-K.
  TG_DEVICE int cut_index(int t) const { return t - whole_tiles(); }

  // Fills `tile` with this CTA's next work unit; false when none is left.
  TG_DEVICE bool next(Tile& tile) {
    int t, kb0, kb1;
    if constexpr (kStreamK) {
      if (cursor < 0) {  // this CTA's whole tile number whole_tiles() / G + cursor
        t = static_cast<int>(blockIdx.x) + (whole_tiles() / grid() + static_cast<int>(cursor)) * grid();
        kb0 = 0, kb1 = k_blocks();
        tile.parts = 1, tile.part = 0;
        if (++cursor == 0) cursor = range_begin(blockIdx.x);
      } else {
        if (cursor >= end) return false;
        const int kb = k_blocks();
        const int u = static_cast<int>(cursor / kb);
        const i64 first = static_cast<i64>(u) * kb;
        const i64 seg_end = min(end, first + kb);
        kb0 = static_cast<int>(cursor - first);
        kb1 = static_cast<int>(seg_end - first);
        const int first_owner = owner(first);
        tile.parts = owner(first + kb - 1) - first_owner + 1;
        tile.part = static_cast<int>(blockIdx.x) - first_owner;
        cursor = seg_end;
        t = whole_tiles() + u;
      }
    } else {
      if (cursor >= end) return false;
      const int split = p.split_k;
      t = static_cast<int>(cursor / split);
      const int s = static_cast<int>(cursor % split);
      kb0 = static_cast<int>(static_cast<i64>(s) * k_blocks() / split);
      kb1 = static_cast<int>(static_cast<i64>(s + 1) * k_blocks() / split);
      tile.parts = split;
      tile.part = s;
      cursor += gridDim.x;
    }
    const int tiles_per_group = num_m_blocks() * num_n_blocks();
    const int g = t / tiles_per_group;
    int m_block, n_block;
    raster<kRasterGroup>(t - g * tiles_per_group, num_m_blocks(), num_n_blocks(), m_block, n_block);
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
// split-K / stream-K → SplitTileScheduler. Cfg names kScheme, kGemmType, kRasterGroup, kPsumLayout, kClusterM and
// kClusterN (the cluster's extent along N: clusters pair m-blocks only, so 1).
template <class Cfg, int BLOCK_M, int BLOCK_N, int BLOCK_K>
struct SchedulerFor {
  static constexpr bool kSplit = Cfg::kScheme != GemmScheme::kDataParallel;
  // A batch-reduced problem's tiles are those of one [M, N, ΣK] problem (the producer maps K to the batches).
  static constexpr GemmType kTileType = Cfg::kGemmType == GemmType::kBatchReduced ? GemmType::kNormal : Cfg::kGemmType;
  static_assert(Cfg::kClusterN == 1, "2-CTA clusters pair m-blocks (2x1), never n-blocks");
  static_assert(!kSplit || (Cfg::kClusterM == 1 && !Cfg::kPsumLayout &&
                            (kTileType == GemmType::kNormal || kTileType == GemmType::kBatched)),
                "split-K / stream-K: dense or batched problems without clusters");
  using DataParallel =
      TileScheduler<kTileType, BLOCK_M, BLOCK_N, Cfg::kRasterGroup, Cfg::kPsumLayout, BLOCK_K, Cfg::kClusterM>;
  using Split = SplitTileScheduler<Cfg::kScheme, kTileType, BLOCK_M, BLOCK_N, Cfg::kRasterGroup, BLOCK_K>;
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
