// 256-row tiles of M-grouped contiguous problems (per-row group index, groups aligned to 128 rows only): the
// scheduler must hand every 128-row block that holds group rows to exactly one tile half, with that group's B,
// run the reduction twice when the halves belong to different groups, and skip tiles that are padding only.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "host_scheduler_shim.hpp"
#include "tilegemm/sched/gemm_scheduler.cuh"

using namespace tilegemm;

namespace {

constexpr int kBlockM = 256, kHalf = 128, kBlockN = 64, kBlockK = 128;
using Scheduler = sched::TileScheduler<GemmType::kMGroupedContiguous, kBlockM, kBlockN, 4, false, kBlockK, 1>;

// (128-row block, n-block) -> (group whose B it was computed with, times computed), over every CTA of a grid.
std::map<std::pair<int, int>, std::pair<int, int>> walk(const std::vector<int>& rows, int n, int k, int grid,
                                                        int* two_pass_tiles) {
  GemmParams p{};
  p.m = static_cast<int>(rows.size()), p.n = n, p.k = k, p.num_groups = 8, p.grouped_layout = rows.data();
  std::map<std::pair<int, int>, std::pair<int, int>> seen;
  *two_pass_tiles = 0;
  gridDim.x = static_cast<unsigned>(grid);
  for (int c = 0; c < grid; ++c) {
    blockIdx.x = static_cast<unsigned>(c);
    Scheduler s(p);
    sched::Tile t;
    while (s.next(t)) {
      const int k_blocks = (k + kBlockK - 1) / kBlockK;
      EXPECT_EQ(t.m0 % kBlockM, 0);
      EXPECT_EQ(t.k_blocks, t.two_passes() ? 2 * k_blocks : k_blocks);
      EXPECT_EQ(t.pass_blocks(), k_blocks);
      // Each consumer half computes one pass and hands the other's stages back: first half first.
      for (int half = 0; half < 2; ++half)
        EXPECT_EQ(t.blocks_before_pass(half) + t.pass_blocks() + t.blocks_after_pass(half), t.k_blocks);
      EXPECT_EQ(t.blocks_before_pass(0), 0);
      EXPECT_EQ(t.blocks_before_pass(1), t.two_passes() ? k_blocks : 0);
      // What each stage loads.
      int k0 = (k_blocks - 1) * kBlockK, b = -2;
      t.pass_operands<kBlockK>(k0, b);
      EXPECT_EQ(k0, (k_blocks - 1) * kBlockK);
      EXPECT_EQ(b, t.b_batch);
      if (t.two_passes()) {
        k0 = k_blocks * kBlockK;  // the second pass's first stage: A from K 0 again, B of the second group
        t.pass_operands<kBlockK>(k0, b);
        EXPECT_EQ(k0, 0);
        EXPECT_EQ(b, t.second_b_batch);
      }
      *two_pass_tiles += t.two_passes();
      for (int half = 0; half < 2; ++half) {
        const int row = t.m0 + half * kHalf;
        if (row >= p.m || rows[row] < 0) continue;  // padding rows: computed or not, never owned
        const int group = half == 1 && t.two_passes() ? t.second_b_batch : t.b_batch;
        auto& entry = seen[{row / kHalf, t.n0 / kBlockN}];
        entry.first = group;
        ++entry.second;
      }
    }
  }
  return seen;
}

}  // namespace

TEST(StraddlingTiles, EveryGroupBlockComputedOnceWithItsOwnB) {
  // Blocks of 128 rows: groups of 1, 3, 0, 2 and 1 blocks, padding after group 1 and at the end, so tiles start
  // with padding, end with padding, hold one group, or straddle two.
  const std::vector<int> blocks = {0, 1, 1, 1, -1, 3, 3, 4, -1};
  std::vector<int> rows;
  for (int g : blocks) rows.insert(rows.end(), kHalf, g);
  rows.resize(rows.size() - 40);  // M not a multiple of the tile: the last half is short
  const int n = 3 * kBlockN + 16;
  for (int grid : {1, 3, 7}) {
    SCOPED_TRACE(::testing::Message() << "grid " << grid);
    int two_pass_tiles = 0;
    const auto seen = walk(rows, n, 1000, grid, &two_pass_tiles);
    const int n_blocks = (n + kBlockN - 1) / kBlockN;
    int owned = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b] < 0) continue;
      for (int nb = 0; nb < n_blocks; ++nb) {
        const auto it = seen.find({static_cast<int>(b), nb});
        ASSERT_NE(it, seen.end()) << "block " << b << " n-block " << nb << " never computed";
        EXPECT_EQ(it->second.first, blocks[b]) << "block " << b << " computed with another group's B";
        EXPECT_EQ(it->second.second, 1) << "block " << b << " computed twice";
        ++owned;
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), owned);
    // Of the tiles (blocks 0-1, 2-3, 4-5, 6-7, 8), 0-1 (groups 0, 1) and 6-7 (groups 3, 4) straddle two groups;
    // 4-5 starts with padding and runs one pass with group 3; 8 is padding only.
    EXPECT_EQ(two_pass_tiles, 2 * n_blocks);
  }
}
