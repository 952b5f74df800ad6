// The split-K / stream-K work-unit schedulers (device/tilegemm/sched/split_scheduler.cuh), run on the host:
// every CTA of a grid walks its units, and the union must cover every K block of every tile exactly once,
// with parts numbered in K order and deterministic-mode workspace slots that never collide.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "host_scheduler_shim.hpp"
#include "tilegemm/sched/split_scheduler.cuh"

using namespace tilegemm;

namespace {

constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 64;

struct Unit {
  sched::Tile tile;
  int cta;
};

template <GemmScheme kScheme, GemmType kType>
void check_schedule(int m, int n, int k, int groups, int grid, int split) {
  SCOPED_TRACE(::testing::Message() << "m=" << m << " n=" << n << " k=" << k << " groups=" << groups << " grid=" << grid
                                    << " split=" << split);
  using Scheduler = sched::SplitTileScheduler<kScheme, kType, kBlockM, kBlockN, 2, kBlockK>;
  GemmParams p{};
  p.m = m, p.n = n, p.k = k, p.num_groups = groups, p.split_k = split;
  gridDim.x = static_cast<unsigned>(grid);
  const int k_blocks = (k + kBlockK - 1) / kBlockK;
  const int tiles =
      (m + kBlockM - 1) / kBlockM * ((n + kBlockN - 1) / kBlockN) * (kType == GemmType::kBatched ? groups : 1);

  std::map<int, std::vector<Unit>> by_tile;
  std::vector<long long> cta_k_blocks(static_cast<std::size_t>(grid), 0);
  for (int c = 0; c < grid; ++c) {
    blockIdx.x = static_cast<unsigned>(c);
    Scheduler s(p);
    sched::Tile t;
    while (s.next(t)) {
      ASSERT_GE(t.k_blocks, 1);
      ASSERT_LT(t.tile_index, tiles);
      by_tile[t.tile_index].push_back({t, c});
      cta_k_blocks[static_cast<std::size_t>(c)] += t.k_blocks;
    }
  }
  ASSERT_EQ(static_cast<int>(by_tile.size()), tiles) << "every tile has work";

  std::set<std::tuple<int, int, int>> coords;
  std::set<int> slots;
  blockIdx.x = 0;  // the fix-up of a tile may run in any CTA: slot() must not depend on which
  Scheduler any(p);
  for (auto& [index, units] : by_tile) {
    std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.tile.k0 < b.tile.k0; });
    int next_k = 0;
    for (std::size_t q = 0; q < units.size(); ++q) {
      const sched::Tile& t = units[q].tile;
      EXPECT_EQ(t.k0, next_k * kBlockK) << "tile " << index << " part " << q << ": K blocks contiguous, no overlap";
      next_k += t.k_blocks;
      EXPECT_EQ(t.parts, static_cast<int>(units.size())) << "tile " << index;
      EXPECT_EQ(t.part, static_cast<int>(q)) << "tile " << index << ": parts numbered in K order";
      EXPECT_EQ(t.m0, units[0].tile.m0);
      EXPECT_EQ(t.n0, units[0].tile.n0);
      EXPECT_EQ(t.a_batch, units[0].tile.a_batch);
      if (t.parts > 1) {
        // The writer (its own CTA) and the fix-up (here: CTA 0) agree on the slot, and no two parts share one.
        blockIdx.x = static_cast<unsigned>(units[q].cta);
        Scheduler own(p);
        blockIdx.x = 0;
        const int slot = own.slot(index, t.part);
        EXPECT_EQ(slot, any.slot(index, t.part));
        EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " used twice";
        const long long max_slots = kScheme == GemmScheme::kSplitK ? 1LL * tiles * split : 2LL * grid;
        EXPECT_GE(slot, 0);
        EXPECT_LT(slot, max_slots);
      }
    }
    EXPECT_EQ(next_k, k_blocks) << "tile " << index << " covers all of K";
    EXPECT_TRUE(coords.insert({units[0].tile.m0, units[0].tile.n0, units[0].tile.a_batch}).second)
        << "tile " << index << " has the coordinates of another tile";
  }
  if (kScheme == GemmScheme::kStreamK) {
    const auto [lo, hi] = std::minmax_element(cta_k_blocks.begin(), cta_k_blocks.end());
    EXPECT_LE(*hi - *lo, 1) << "stream-K shares K blocks evenly";
    EXPECT_GE(*lo, 1) << "the host never launches a CTA without work";
    // All full waves but the last are walked whole, CTA c taking tiles c, c + grid, ...; only the rest is cut,
    // and the fix-up numbers just those.
    const long long whole = stream_k_whole_tiles<long long>(tiles, grid);
    EXPECT_EQ(whole, tiles / grid >= 2 ? (tiles / grid - 1) * grid : 0);
    for (auto& [index, units] : by_tile) {
      if (index >= whole) {
        EXPECT_EQ(any.cut_index(index), index - whole);
        continue;
      }
      ASSERT_EQ(units.size(), 1u) << "tile " << index << " lies in the whole-tile waves";
      EXPECT_EQ(units[0].cta, index % grid) << "tile " << index;
    }
  }
}

}  // namespace

TEST(SplitScheduler, SplitKCoversEveryKBlockOnceInKOrder) {
  for (int k : {128, 1000, 7168, 16384})
    for (int split : {2, 3, 7, 16}) {
      if (split > (k + 63) / 64) continue;
      for (auto [m, n] : {std::pair{1, 8}, std::pair{64, 576}, std::pair{129, 7168}}) {
        const int tiles = (m + kBlockM - 1) / kBlockM * ((n + kBlockN - 1) / kBlockN);
        // One wave, and a persistent grid smaller than the units (CTAs take several).
        for (int grid : {std::min(132, tiles * split), std::max(1, tiles * split / 3)})
          check_schedule<GemmScheme::kSplitK, GemmType::kNormal>(m, n, k, 1, grid, split);
      }
    }
}

TEST(SplitScheduler, StreamKCoversEveryKBlockOnceAndBalancesCtas) {
  for (int k : {64, 1000, 7168})
    for (auto [m, n] : {std::pair{1, 8}, std::pair{129, 576}, std::pair{256, 7168}, std::pair{4096, 2112}}) {
      const long long tiles = (m + kBlockM - 1) / kBlockM * ((n + kBlockN - 1) / kBlockN);
      const long long total = tiles * ((k + 63) / 64);
      for (int grid : {132, 7, 1}) {
        const int g = static_cast<int>(std::min<long long>(grid, total));
        check_schedule<GemmScheme::kStreamK, GemmType::kNormal>(m, n, k, 1, g, 1);
      }
    }
}

// Two or more full waves of tiles: the whole-tile waves first, then the last one to two waves shared out.
TEST(SplitScheduler, StreamKWalksAllFullWavesButTheLastWhole) {
  for (int k : {512, 7168})
    for (auto [m, n] : {std::pair{4096, 7168}, std::pair{1024, 2112}, std::pair{8448, 256}})
      for (int grid : {132, 128}) check_schedule<GemmScheme::kStreamK, GemmType::kNormal>(m, n, k, 1, grid, 1);
  check_schedule<GemmScheme::kStreamK, GemmType::kBatched>(1024, 1024, 1000, 5, 132, 1);
}

TEST(SplitScheduler, BatchedProblemsSplitEveryBatch) {
  check_schedule<GemmScheme::kSplitK, GemmType::kBatched>(64, 576, 1000, 3, 60, 4);
  check_schedule<GemmScheme::kStreamK, GemmType::kBatched>(129, 256, 7168, 2, 132, 1);
}
