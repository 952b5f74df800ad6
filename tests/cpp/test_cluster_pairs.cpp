// 1x2 clusters (the two CTAs of a cluster share the A tile): walking the device scheduler on the host, the two CTAs
// of every cluster must take the same m-block and n-blocks 2q and 2q+1 in step, tile after tile, and together the
// clusters must cover every tile of a dense or batched problem exactly once.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "host_scheduler_shim.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/sched/gemm_scheduler.cuh"

using namespace tilegemm;

namespace {

constexpr int kBlockM = 256, kBlockN = 128;

template <GemmType kType>
std::vector<std::vector<sched::Tile>> walk_every_cta(const GemmParams& p, int grid) {
  using Scheduler = sched::TileScheduler<kType, kBlockM, kBlockN, 8, false, 128, 1, 2>;
  std::vector<std::vector<sched::Tile>> per_cta(grid);
  gridDim.x = static_cast<unsigned>(grid);
  for (int c = 0; c < grid; ++c) {
    blockIdx.x = static_cast<unsigned>(c);
    Scheduler s(p);
    sched::Tile t;
    while (s.next(t)) per_cta[c].push_back(t);
  }
  return per_cta;
}

template <GemmType kType>
void expect_pairs_share_a(int m, int n, int batches) {
  SCOPED_TRACE(::testing::Message() << "m=" << m << " n=" << n << " batches=" << batches);
  GemmDesc desc;
  desc.type = kType;
  desc.m = m, desc.n = n, desc.k = 1024, desc.num_groups = batches;
  desc.a_dtype = desc.b_dtype = DType::kFloat8E4M3;
  GemmConfig c;
  c.block_m = kBlockM, c.block_n = kBlockN, c.block_k = 128, c.num_math_warpgroups = 2, c.stages = 3;
  c.cluster_n = 2, c.multicast = MulticastSide::kA, c.num_sms = 132;
  const int grid = sm90_grid_size(desc, c);
  ASSERT_EQ(grid % 2, 0) << "a whole number of clusters";

  GemmParams p{};
  p.m = m, p.n = n, p.k = desc.k, p.num_groups = batches;
  const auto per_cta = walk_every_cta<kType>(p, grid);

  const int num_m_blocks = (m + kBlockM - 1) / kBlockM, num_n_blocks = (n + kBlockN - 1) / kBlockN;
  std::map<std::tuple<int, int, int>, int> stored;  // (batch, m0, n0) of active tiles
  for (int q = 0; 2 * q < grid; ++q) {
    const auto& even = per_cta[2 * q];
    const auto& odd = per_cta[2 * q + 1];
    ASSERT_EQ(even.size(), odd.size()) << "cluster " << q << ": both CTAs walk the same number of tiles";
    for (std::size_t i = 0; i < even.size(); ++i) {
      EXPECT_EQ(even[i].m0, odd[i].m0) << "cluster " << q << " tile " << i << ": one shared A tile";
      EXPECT_EQ(even[i].a_batch, odd[i].a_batch);
      EXPECT_EQ(even[i].n0 % (2 * kBlockN), 0) << "the even CTA takes the even n-block";
      EXPECT_EQ(odd[i].n0, even[i].n0 + kBlockN) << "the odd CTA takes the next n-block";
      EXPECT_EQ(even[i].k_blocks, odd[i].k_blocks);
      for (const sched::Tile* t : {&even[i], &odd[i]}) {
        EXPECT_EQ(t->active, t->n0 < n) << "only a block past the end of N is walked without storing";
        if (t->active) ++stored[{t->d_batch, t->m0, t->n0}];
      }
    }
  }
  EXPECT_EQ(stored.size(), static_cast<std::size_t>(num_m_blocks) * num_n_blocks * batches) << "every tile stored";
  for (const auto& [tile, count] : stored) EXPECT_EQ(count, 1) << "a tile stored twice";
}

TEST(ClusterPairsSharingA, DenseTilesArePairedAlongNAndCoveredOnce) {
  expect_pairs_share_a<GemmType::kNormal>(4096, 7168, 1);  // 16 x 56 tiles: several waves
  expect_pairs_share_a<GemmType::kNormal>(4095, 1000, 1);  // ragged M and N, 8 n-blocks
  expect_pairs_share_a<GemmType::kNormal>(300, 384, 1);    // an odd n-block count: one inactive block per pair row
  expect_pairs_share_a<GemmType::kNormal>(64, 256, 1);     // a single cluster
}

TEST(ClusterPairsSharingA, BatchedTilesStayInsideTheirBatch) {
  expect_pairs_share_a<GemmType::kBatched>(129, 576, 3);
  expect_pairs_share_a<GemmType::kBatched>(1024, 4096, 8);
}

}  // namespace
