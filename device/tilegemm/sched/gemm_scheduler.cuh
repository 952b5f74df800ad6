#pragma once
// Persistent tile scheduler for the SM90 GEMM kernels. Every CTA walks the linear tile sequence with a
// stride of gridDim.x; the producer and the consumers of a CTA each run their own copy and see the same
// tiles. Grouped, batched and masked problems differ only here, not in the kernels.
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm::sched {

// One output tile and the TMA coordinates that locate its operands.
struct Tile {
  int m0;        // first row in A's / D's row coordinate
  int n0;        // first column of D (first row of B)
  int a_batch;   // third TMA coordinate of A
  int b_batch;   // third TMA coordinate of B
  int d_batch;   // third TMA coordinate of D
  int k0;        // first K element of the tile's reduction (K-grouped: the group's offset)
  int k_blocks;  // BLOCK_K steps of the reduction (>= 1)
  // Split-K / stream-K (sched/split_scheduler.cuh): the tile's linear index, and which of its `parts` K
  // sub-ranges this is. Data-parallel schedulers leave the defaults: one part, the whole tile.
  int tile_index = 0;
  int part = 0;
  int parts = 1;
  // 2-CTA clusters (kClusterM == 2): an inactive tile is walked only so the peer gets its half of the shared
  // B tile (its rows are padding or past the group's end: nothing is stored); share_b is false when the two
  // CTAs' m-blocks belong to different groups, and each CTA then loads its whole B tile itself.
  bool active = true;
  bool share_b = true;
  // A 256-row tile of an M-grouped contiguous problem whose two 128-row halves belong to different groups
  // (groups are aligned to 128 rows only): the reduction runs twice, k_blocks / 2 blocks with B of b_batch for
  // the first half's rows, then as many with B of second_b_batch for the second half's. Each consumer
  // warpgroup owns one half and computes only in its own pass. -1: one pass (both halves in b_batch's group).
  int second_b_batch = -1;

  TG_DEVICE bool two_passes() const { return second_b_batch >= 0; }
  // K blocks of one pass: the blocks the consumer warpgroup of either half computes.
  TG_DEVICE int pass_blocks() const { return two_passes() ? k_blocks / 2 : k_blocks; }
  // The stages the consumer warpgroup owning half `half` hands back unread before and after its own pass (the
  // first half's pass comes first).
  TG_DEVICE int blocks_before_pass(int half) const { return two_passes() ? half * pass_blocks() : 0; }
  TG_DEVICE int blocks_after_pass(int half) const { return two_passes() ? (1 - half) * pass_blocks() : 0; }
  // The loads of the stage at reduction offset k0: the second pass reads the same K range of A with the second
  // half's group of B.
  template <int BLOCK_K>
  TG_DEVICE void pass_operands(int& k0, int& b) const {
    b = b_batch;
    if (two_passes() && k0 >= this->k0 + pass_blocks() * BLOCK_K) {
      k0 -= pass_blocks() * BLOCK_K;
      b = second_b_batch;
    }
  }
};

// Maps a tile index inside one [num_m_blocks x num_n_blocks] grid to (m_block, n_block). Tiles go down M
// inside a band of kRasterGroup m-blocks before moving to the next n-block, so the CTAs of one wave share
// a few B panels and A panels in L2.
template <int kRasterGroup>
TG_DEVICE void raster(int local, int num_m_blocks, int num_n_blocks, int& m_block, int& n_block) {
  const int band_tiles = kRasterGroup * num_n_blocks;
  const int band = local / band_tiles;
  const int first_m = band * kRasterGroup;
  const int band_m = min(kRasterGroup, num_m_blocks - first_m);
  const int in_band = local - band * band_tiles;
  m_block = first_m + in_band % band_m;
  n_block = in_band / band_m;
}

// kPsumLayout (M-grouped contiguous only): grouped_layout[g] is the end row of group g, and group g starts at
// the previous end rounded up to kContiguousGroupRowAlignment.
// K-grouped contiguous: grouped_layout[g] is group g's K extent (a multiple of BLOCK_K); groups follow each
// other along K, and every group produces a whole [M, N] output D[g].
// kClusterM == 2: the two CTAs of a cluster take m-blocks 2q and 2q+1 of the same n-block, so they can share
// (multicast) the B tile; both CTAs always walk the same pairs. Dense and batched: the odd m-block past the
// end of M is still walked (A loads zero-filled out of bounds, stores clipped) while its B half feeds the peer.
// M-grouped contiguous: a padding block of a pair is inactive; blocks of two different groups do not share B.
// Masked: m-blocks are paired inside a group; the odd one past the group's last block is inactive.
template <GemmType kType, int BLOCK_M, int BLOCK_N, int kRasterGroup, bool kPsumLayout = false, int BLOCK_K = 64,
          int kClusterM = 1>
struct TileScheduler {
  // Masked and prefix-sum problems are walked group by group with a cursor; the others index tiles directly.
  static constexpr bool kGroupCursor = kType == GemmType::kMGroupedMasked || kPsumLayout;
  static constexpr bool kKGrouped = kType == GemmType::kKGroupedContiguous;
  static_assert(kClusterM == 1 || (kClusterM == 2 && !kPsumLayout && kType != GemmType::kKGroupedContiguous),
                "2-CTA clusters pair m-blocks of dense, batched, masked and per-row contiguous problems");

  const GemmParams& p;
  int num_m_blocks;  // per group (normal, batched), of all rows (contiguous), of the current group (masked)
  int num_n_blocks;
  int next_index;
  // Cursor: the group it is in, that group's first tile index and (prefix-sum layout) its first row.
  int group = 0;
  int group_first_tile = 0;
  int group_row0 = 0;
  int group_k0 = 0;  // K-grouped: first K element of `group`
  // Per-row contiguous without clusters: the group indices of the next tile's (one or two) 128-row blocks,
  // loaded while the current tile runs so the global load does not stall the start of the next one.
  int ahead_index = -1;
  int ahead_g0 = -1, ahead_g1 = -1;

  TG_DEVICE explicit TileScheduler(const GemmParams& params)
      : p(params),
        num_m_blocks(ceil_div(params.m, BLOCK_M)),
        num_n_blocks(ceil_div(params.n, BLOCK_N)),
        next_index(blockIdx.x / kClusterM + (kGroupCursor ? 0 : params.unit_begin)) {
    // A chunked launch (GemmParams::unit_begin): the cursor starts at its first group, the others at its
    // first tile.
    if constexpr (kGroupCursor) {
      group = params.unit_begin;
      num_m_blocks = group_m_blocks(group);
      if constexpr (kPsumLayout) group_row0 = psum_group_start(group);
    }
  }

  // One past the last group the cursor walks in this launch.
  TG_DEVICE int group_end() const { return min(p.num_groups, p.unit_end); }

  // First row of group g in the prefix-sum layout.
  TG_DEVICE int psum_group_start(int g) const {
    constexpr int kAlign = kContiguousGroupRowAlignment;
    return g == 0 ? 0 : ceil_div(__ldg(p.grouped_layout + g - 1), kAlign) * kAlign;
  }

  TG_DEVICE int group_m_blocks(int g) const {
    if (g >= p.num_groups) return 0;
    const int rows = kPsumLayout ? __ldg(p.grouped_layout + g) - psum_group_start(g) : __ldg(p.grouped_layout + g);
    return rows > 0 ? ceil_div(rows, BLOCK_M) : 0;
  }

  // Per-row contiguous: the groups of the first and (256-row tiles) second 128-row block of the tile starting
  // at row m0; -1 for padding or past the end.
  TG_DEVICE void load_block_groups(int m0, int& g0, int& g1) const {
    g0 = __ldg(p.grouped_layout + m0);
    g1 = BLOCK_M > kContiguousGroupRowAlignment && m0 + kContiguousGroupRowAlignment < p.m
             ? __ldg(p.grouped_layout + m0 + kContiguousGroupRowAlignment)
             : -1;
  }

  // Fills `tile` with the next tile of this CTA; false when none is left.
  TG_DEVICE bool next(Tile& tile) {
    while (true) {
      const int index = next_index;
      next_index += gridDim.x / kClusterM;
      if constexpr (kKGrouped) {
        // Every group has the same [M, N] tile grid; the cursor carries the running K offset.
        const int tiles_per_group = num_m_blocks * num_n_blocks;
        while (index >= group_first_tile + tiles_per_group) {
          group_first_tile += tiles_per_group;
          group_k0 += __ldg(p.grouped_layout + group);
          if (++group >= p.num_groups) return false;
        }
        const int group_k = __ldg(p.grouped_layout + group);
        if (group_k <= 0) continue;  // nothing to add to D[group]: the host already wrote C (or zeros) there
        int m_block, n_block;
        raster<kRasterGroup>(index - group_first_tile, num_m_blocks, num_n_blocks, m_block, n_block);
        tile = {m_block * BLOCK_M, n_block * BLOCK_N, 0, 0, group, group_k0, ceil_div(group_k, BLOCK_K)};
        return true;
      } else if constexpr (kGroupCursor) {
        // Advance the cursor past groups this index has left behind (indices only grow). With a cluster the
        // index walks pairs of m-blocks.
        while (index >= group_first_tile + ceil_div(num_m_blocks, kClusterM) * num_n_blocks) {
          group_first_tile += ceil_div(num_m_blocks, kClusterM) * num_n_blocks;
          if (++group >= group_end()) return false;
          num_m_blocks = group_m_blocks(group);
          if constexpr (kPsumLayout) group_row0 = psum_group_start(group);
        }
        int m_block, n_block;
        raster<(kRasterGroup / kClusterM > 0 ? kRasterGroup / kClusterM : 1)>(
            index - group_first_tile, ceil_div(num_m_blocks, kClusterM), num_n_blocks, m_block, n_block);
        bool active = true;
        if constexpr (kClusterM > 1) {
          m_block = m_block * kClusterM + static_cast<int>(blockIdx.x % kClusterM);
          active = m_block < num_m_blocks;
        }
        const int k_blocks = ceil_div(p.k, BLOCK_K);
        if constexpr (kPsumLayout)
          tile = {group_row0 + m_block * BLOCK_M, n_block * BLOCK_N, 0, group, 0, 0, k_blocks};
        else
          tile = {m_block * BLOCK_M, n_block * BLOCK_N, group, group, group, 0, k_blocks};
        tile.active = active;
        return true;
      } else {
        // With a 2-CTA cluster the index walks pairs of m-blocks.
        const int m_units = ceil_div(num_m_blocks, kClusterM);
        const int tiles_per_group = m_units * num_n_blocks;
        const int groups = kType == GemmType::kBatched ? p.num_groups : 1;
        static_assert(!kKGrouped, "handled above");
        const int end = min(tiles_per_group * groups, p.unit_end);
        if (index >= end) return false;
        const int g = index / tiles_per_group;
        int m_block, n_block;
        // The raster group counts m-blocks; a cluster walks pairs of them.
        raster<(kRasterGroup / kClusterM > 0 ? kRasterGroup / kClusterM : 1)>(index - g * tiles_per_group, m_units,
                                                                              num_n_blocks, m_block, n_block);
        if constexpr (kClusterM > 1) m_block = m_block * kClusterM + static_cast<int>(blockIdx.x % kClusterM);
        const int m0 = m_block * BLOCK_M, n0 = n_block * BLOCK_N;
        if constexpr (kType == GemmType::kMGroupedContiguous && kClusterM == 1) {
          int g0, g1;
          if (index == ahead_index)
            g0 = ahead_g0, g1 = ahead_g1;
          else
            load_block_groups(m0, g0, g1);
          if (next_index < end) {  // one group: the next index is a tile of the same grid
            int next_m_block, next_n_block;
            raster<kRasterGroup>(next_index, num_m_blocks, num_n_blocks, next_m_block, next_n_block);
            load_block_groups(next_m_block * BLOCK_M, ahead_g0, ahead_g1);
            ahead_index = next_index;
          }
          if constexpr (BLOCK_M > kContiguousGroupRowAlignment) {
            // The two 128-row halves may belong to different groups, or one may be padding.
            static_assert(BLOCK_M == 2 * kContiguousGroupRowAlignment, "a tile spans at most two aligned group blocks");
            if (g0 < 0 && g1 < 0) continue;
            const int k_blocks = ceil_div(p.k, BLOCK_K);
            if (g0 >= 0 && g1 >= 0 && g0 != g1) {
              tile = {m0, n0, 0, g0, 0, 0, 2 * k_blocks};
              tile.second_b_batch = g1;
            } else {
              tile = {m0, n0, 0, g0 >= 0 ? g0 : g1, 0, 0, k_blocks};  // a padding half computes unused rows
            }
          } else {
            // Blocks of up to 128 rows: groups are aligned to the block size, so a block's first row names its
            // group; a block whose first row is padding (-1) holds padding only and is skipped.
            if (g0 < 0) continue;
            tile = {m0, n0, 0, g0, 0, 0, ceil_div(p.k, BLOCK_K)};
          }
        } else if constexpr (kType == GemmType::kMGroupedContiguous) {
          // Both CTAs read both blocks' groups, so they agree on skipping the pair and on sharing B.
          const int first_row = (m_block - static_cast<int>(blockIdx.x % kClusterM)) * BLOCK_M;
          const int g0 = __ldg(p.grouped_layout + first_row);
          const int g1 = first_row + BLOCK_M < p.m ? __ldg(p.grouped_layout + first_row + BLOCK_M) : -1;
          if (g0 < 0 && g1 < 0) continue;
          const int mine = m0 == first_row ? g0 : g1;
          tile = {m0, n0, 0, mine >= 0 ? mine : (g0 < 0 ? g1 : g0), 0, 0, ceil_div(p.k, BLOCK_K)};
          tile.active = mine >= 0;
          tile.share_b = g0 == g1 || g0 < 0 || g1 < 0;
        } else {
          tile = {m0, n0, g, g, g, 0, ceil_div(p.k, BLOCK_K)};
        }
        return true;
      }
    }
  }
};

}  // namespace tilegemm::sched
