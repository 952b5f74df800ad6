// Chunked launches of data-parallel M-grouped GEMMs (sm90_launch_chunks + GemmParams::unit_begin/unit_end):
// the launches together must walk exactly the tiles one launch walks, each once, for per-row contiguous,
// prefix-sum and masked problems with and without 2-CTA clusters; and the host cuts only where asked.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "host_scheduler_shim.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/sched/gemm_scheduler.cuh"

using namespace tilegemm;

namespace {

constexpr int kBlockM = 128, kBlockN = 64;

// (m0, n0, a_batch, b_batch, d_batch, active, share_b) of every tile a launch walks, with multiplicity.
using TileKey = std::tuple<int, int, int, int, int, bool, bool>;

template <GemmType kType, bool kPsum, int kClusterM>
std::map<TileKey, int> walk(GemmParams p, int grid, const std::vector<WorkRange>& launches) {
  using Scheduler = sched::TileScheduler<kType, kBlockM, kBlockN, 4, kPsum, 64, kClusterM>;
  std::map<TileKey, int> seen;
  gridDim.x = static_cast<unsigned>(grid);
  for (const WorkRange& r : launches) {
    p.unit_begin = r.begin;
    p.unit_end = r.end;
    for (int c = 0; c < grid; ++c) {
      blockIdx.x = static_cast<unsigned>(c);
      Scheduler s(p);
      sched::Tile t;
      while (s.next(t)) ++seen[{t.m0, t.n0, t.a_batch, t.b_batch, t.d_batch, t.active, t.share_b}];
    }
  }
  return seen;
}

GemmDesc grouped_desc(GemmType type, int m, int n, int groups) {
  GemmDesc d;
  d.type = type;
  d.m = m, d.n = n, d.k = 512, d.num_groups = groups;
  return d;
}

GemmConfig config_for(int cluster_m) {
  GemmConfig c;
  c.block_m = kBlockM, c.block_n = kBlockN, c.block_k = 64, c.cluster_m = cluster_m;
  return c;
}

// Chunked and single launches walk the same multiset of tiles, and the chunking really cut the work.
template <GemmType kType, bool kPsum, int kClusterM>
void expect_same_tiles(const GemmDesc& desc, const int* layout, int grid, int waves) {
  SCOPED_TRACE(::testing::Message() << "m=" << desc.m << " n=" << desc.n << " groups=" << desc.num_groups
                                    << " cluster=" << kClusterM << " grid=" << grid << " waves=" << waves);
  GemmParams p{};
  p.m = desc.m, p.n = desc.n, p.k = desc.k, p.num_groups = desc.num_groups, p.grouped_layout = layout;
  const std::vector<WorkRange> chunks = sm90_launch_chunks(desc, config_for(kClusterM), grid, waves);
  EXPECT_GT(chunks.size(), 1u) << "the problem is long enough to be cut";
  const auto once = walk<kType, kPsum, kClusterM>(p, grid, {WorkRange{}});
  const auto cut = walk<kType, kPsum, kClusterM>(p, grid, chunks);
  EXPECT_FALSE(once.empty());
  EXPECT_EQ(cut, once);
  for (const auto& [tile, count] : cut) EXPECT_EQ(count, 1) << "a tile walked twice";
}

}  // namespace

TEST(LaunchChunks, PerRowContiguousCutsAnywhere) {
  // 5 groups of 2, 0, 3, 1 and 4 blocks of 128 rows, with one padding block (-1) after group 2.
  const std::vector<int> blocks = {0, 0, 2, 2, 2, -1, 3, 4, 4, 4, 4};
  std::vector<int> rows;
  for (int g : blocks) rows.insert(rows.end(), kBlockM, g);
  const GemmDesc desc = grouped_desc(GemmType::kMGroupedContiguous, static_cast<int>(rows.size()), 4 * kBlockN + 8, 5);
  for (int waves : {1, 2})
    for (int grid : {4, 6}) {
      expect_same_tiles<GemmType::kMGroupedContiguous, false, 1>(desc, rows.data(), grid, waves);
      expect_same_tiles<GemmType::kMGroupedContiguous, false, 2>(desc, rows.data(), grid, waves);
    }
}

TEST(LaunchChunks, PrefixSumAndMaskedCutBetweenGroups) {
  // Prefix-sum layout: end rows of 6 groups (one empty, several not multiples of 128).
  const std::vector<int> ends = {300, 300, 700, 1024, 1100, 1500};
  const GemmDesc psum = [&] {
    GemmDesc d = grouped_desc(GemmType::kMGroupedContiguous, 1536, 3 * kBlockN, 6);
    d.use_psum_layout = true;
    return d;
  }();
  expect_same_tiles<GemmType::kMGroupedContiguous, true, 1>(psum, ends.data(), 4, 1);

  // Masked: M_max 512 rows per group, valid rows per group below (one empty, one odd block count for pairs).
  const std::vector<int> masked_m = {512, 0, 130, 384, 1, 257, 500};
  GemmDesc masked = grouped_desc(GemmType::kMGroupedMasked, 512, 2 * kBlockN, 7);
  masked.expected_m = 256;
  for (int grid : {2, 4}) {
    expect_same_tiles<GemmType::kMGroupedMasked, false, 1>(masked, masked_m.data(), grid, 1);
    expect_same_tiles<GemmType::kMGroupedMasked, false, 2>(masked, masked_m.data(), grid, 1);
  }
}

TEST(LaunchChunks, CutsOnlyLongGroupedDataParallelWork) {
  const GemmConfig c = config_for(1);
  const GemmDesc contiguous = grouped_desc(GemmType::kMGroupedContiguous, 32768, 4096, 8);
  // 256 m-blocks x 64 n-blocks = 16384 tiles; 132 CTAs x 8 waves = 1056 tiles per launch.
  const std::vector<WorkRange> chunks = sm90_launch_chunks(contiguous, c, 132, 8);
  ASSERT_EQ(chunks.size(), 16u);
  EXPECT_EQ(chunks.front().begin, 0);
  EXPECT_EQ(chunks.front().end, 1056);
  EXPECT_EQ(chunks.back().end, 16384);
  for (std::size_t i = 1; i < chunks.size(); ++i) EXPECT_EQ(chunks[i].begin, chunks[i - 1].end);

  // Masked: 4096 expected rows = 32 x 64 = 2048 tiles per group, about 2 groups per 32 waves of 132.
  GemmDesc masked = grouped_desc(GemmType::kMGroupedMasked, 8192, 4096, 8);
  masked.expected_m = 4096;
  const std::vector<WorkRange> groups = sm90_launch_chunks(masked, c, 132, 32);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].begin, 2);
  EXPECT_EQ(groups[1].end, 4);

  // One launch: chunking off, work within one chunk, dense problems, split schemes.
  EXPECT_EQ(sm90_launch_chunks(contiguous, c, 132, 0).size(), 1u);
  EXPECT_EQ(sm90_launch_chunks(contiguous, c, 132, 1000).size(), 1u);
  GemmDesc dense = contiguous;
  dense.type = GemmType::kNormal;
  EXPECT_EQ(sm90_launch_chunks(dense, c, 132, 1).size(), 1u);
  GemmConfig split = c;
  split.scheme = GemmScheme::kSplitK;
  EXPECT_EQ(sm90_launch_chunks(contiguous, split, 132, 1).size(), 1u);
  const WorkRange all = sm90_launch_chunks(dense, c, 132, 1).front();
  EXPECT_EQ(all.begin, 0);
  EXPECT_EQ(all.end, 0x7fffffff);
}
