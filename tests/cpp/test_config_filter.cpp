// TILEGEMM_CONFIG_FILTER: parsing, errors that name the variable, and the selector honouring it.
#include <gtest/gtest.h>

#include "core/config_filter.hpp"
#include "expect_invalid.hpp"
#include "scoped_env.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"

using namespace tilegemm;
using test_util::ScopedEnv;

namespace {

GemmDesc dense(int m, int n, int k) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  return desc;
}

}  // namespace

TEST(ConfigFilter, ParsesFieldsAndMatches) {
  const ConfigFilter f = parse_config_filter("block_m=128,block_n=256,stages=3,cluster_m=2");
  ASSERT_EQ(f.terms.size(), 4u);
  GemmConfig c;
  c.block_m = 128, c.block_n = 256, c.stages = 3, c.cluster_m = 2;
  EXPECT_TRUE(f.matches(c));
  EXPECT_TRUE(f.names({"cluster_m", "stages"}));
  c.stages = 4;
  EXPECT_FALSE(f.matches(c));
  EXPECT_TRUE(parse_config_filter("").empty());
  EXPECT_FALSE(parse_config_filter("cluster_m=1").names({"cluster_m", "cluster_n"}));
}

TEST(ConfigFilter, MalformedFiltersNameTheVariable) {
  for (const char* bad : {"block_m", "block_m=", "block_m=x", "block_m=0", "block_m=-64", "warps=2",
                          "block_m=64,block_m=128", "block_m=64,"}) {
    SCOPED_TRACE(bad);
    test_util::expect_invalid([&] { parse_config_filter(bad); }, "TILEGEMM_CONFIG_FILTER");
  }
  ::setenv("TILEGEMM_CONFIG_FILTER", "tile=3", 1);
  test_util::expect_invalid([] { reload_env(); }, "TILEGEMM_CONFIG_FILTER");
  ::unsetenv("TILEGEMM_CONFIG_FILTER");
  reload_env();
}

TEST(ConfigFilter, SelectorKeepsOnlyMatchingLegalConfigs) {
  const HardwareModel hw = hardware_preset("h200");
  // A memory-bound shape: the selector does not pick a cluster for it on its own.
  const GemmDesc desc = dense(128, 4096, 7168);
  const GemmConfig unfiltered = select_config(desc, hw);
  {
    ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "block_m=64,block_n=96");
    const GemmConfig c = select_config(desc, hw);
    EXPECT_EQ(c.block_m, 64);
    EXPECT_EQ(c.block_n, 96);
    EXPECT_TRUE(unfiltered.block_m != 64 || unfiltered.block_n != 96);
  }
  {
    // Clusters are not offered on their own; the filter forces the 2x1 B-multicast kernel.
    EXPECT_EQ(unfiltered.cluster_m, 1);
    ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "cluster_m=2,block_m=64,block_n=64");
    const GemmConfig c = select_config(desc, hw);
    EXPECT_EQ(c.cluster_m, 2);
    EXPECT_EQ(c.multicast, MulticastSide::kB);
  }
  {
    // The stage width: the selector keeps 64-wide stages for this shape on its own.
    EXPECT_EQ(unfiltered.block_k, 64);
    ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "block_k=128");
    EXPECT_EQ(select_config(desc, hw).block_k, 128);
  }
  {
    // The raster group is derived, not enumerated: the filter sets it rather than filtering on it.
    ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "raster=3");
    EXPECT_NE(unfiltered.raster_group, 3);
    EXPECT_EQ(select_config(desc, hw).raster_group, 3);
  }
  {
    // Legal configs exist, none matches: the error names the variable, not the desc.
    ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "block_n=44");
    test_util::expect_invalid([&] { select_config(desc, hw); }, "TILEGEMM_CONFIG_FILTER");
  }
  // The filter is part of the selection cache key: without it the first answer comes back.
  const GemmConfig again = select_config(desc, hw);
  EXPECT_EQ(again.block_m, unfiltered.block_m);
  EXPECT_EQ(again.block_n, unfiltered.block_n);
}

// The persistent grid keeps the wave count and drops CTAs that would only work in a last, nearly empty wave.
TEST(PersistentGrid, BalancedToTheWaveCount) {
  const HardwareModel hw = hardware_preset("h200");
  GemmConfig c;
  c.block_m = 128, c.block_n = 256, c.num_math_warpgroups = 2, c.stages = 3, c.num_sms = hw.num_sms;
  // 32 x 16 = 512 tiles: 4 waves of 132, or the same 4 waves of 128 equally loaded CTAs.
  EXPECT_EQ(sm90_grid_size(dense(4096, 4096, 7168), c), 128);
  c.cluster_m = 2, c.multicast = MulticastSide::kB;
  EXPECT_EQ(sm90_grid_size(dense(4096, 4096, 7168), c), 128);
  // 64x16 tiles of 64x2112: 132 tiles, one full wave.
  GemmConfig narrow;
  narrow.block_m = 64, narrow.block_n = 16, narrow.num_math_warpgroups = 1, narrow.num_sms = hw.num_sms;
  EXPECT_EQ(sm90_grid_size(dense(64, 2112, 7168), narrow), 132);
  // 100 tiles: one partial wave, one CTA each.
  narrow.block_n = 16;
  EXPECT_EQ(sm90_grid_size(dense(64, 1600, 7168), narrow), 100);
  // Two CTAs per SM (TILEGEMM_CTAS_PER_SM, tuning): 264 slices of 132 tiles split in two fill both slots.
  GemmConfig split = narrow;
  split.scheme = GemmScheme::kSplitK, split.split_k = 2;
  EXPECT_EQ(sm90_grid_size(dense(64, 2112, 7168), split, 2), 264);
  EXPECT_EQ(sm90_grid_size(dense(64, 1600, 7168), narrow, 2), 100);  // fewer tiles than slots: one each
  EXPECT_EQ(sm90_grid_size(dense(64, 2112, 7168), split), 132);
}
