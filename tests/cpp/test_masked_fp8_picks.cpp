// FP8 masked problems: tiles counted over the spread of rows around expected_m, no 256-row tiles unless asked, and
// the measured picks (H200, through deep_gemm): 128-row tiles as wide as the problem allows from 128 rows per group
// up, 64-row tiles for groups of ~20 rows.
#include <gtest/gtest.h>

#include <string>

#include "scoped_env.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

GemmDesc fp8_masked(int groups, int m_max, int expected_m, int n, int k) {
  GemmDesc d;
  d.type = GemmType::kMGroupedMasked;
  d.num_groups = groups, d.m = m_max, d.expected_m = expected_m, d.n = n, d.k = k;
  d.a_dtype = d.b_dtype = DType::kFloat8E4M3;
  return d;
}

const Candidate& first_with(const std::vector<Candidate>& ranked, int block_m, int block_n) {
  for (const Candidate& c : ranked)
    if (c.config.block_m == block_m && c.config.block_n == block_n) return c;
  throw std::runtime_error("no such candidate");
}

}  // namespace

// Rows spread over [0.7, 1.3] x expected_m: 256 expected rows need one 256-row tile in half the groups and two in
// the other half; the 128-row tiles of 128 expected rows likewise average 1.5 per group.
TEST(MaskedFp8Picks, TilesCountTheSpreadOfRowsAroundExpectedM) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv tall("TILEGEMM_CONFIG_FILTER", "block_m=256");
  const auto ranked = rank_candidates(fp8_masked(16, 4096, 256, 4096, 7168), hw);
  const std::int64_t per_group = 4096 / 128;  // n-blocks of a 256x128 tile
  EXPECT_NEAR(static_cast<double>(first_with(ranked, 256, 128).cost.tiles), 1.5 * 16 * per_group,
              0.05 * 16 * per_group);
  test_util::ScopedEnv any("TILEGEMM_CONFIG_FILTER", nullptr);
  const auto small = rank_candidates(fp8_masked(8, 512, 128, 7168, 2048), hw);
  EXPECT_NEAR(static_cast<double>(first_with(small, 128, 128).cost.tiles), 1.5 * 8 * 56, 0.05 * 8 * 56);
  // Without a hint every group is m rows: no spread.
  const auto full = rank_candidates(fp8_masked(8, 256, 0, 7168, 2048), hw);
  EXPECT_EQ(first_with(full, 128, 128).cost.tiles, 2 * 8 * 56);
}

TEST(MaskedFp8Picks, TallTilesOnlyWhenTheFilterAsks) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = fp8_masked(32, 4096, 192, 6144, 7168);
  {
    test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
    for (const Candidate& c : enumerate_candidates(desc, hw)) {
      if (c.config.block_m != 256 || !sm90_config_legal(desc, c.config, hw, nullptr)) continue;
      EXPECT_FALSE(c.legal) << to_string(c.config);
      EXPECT_NE(c.reject_reason.find("kSm90Fp8MaskedTallTilesSelected"), std::string::npos) << c.reject_reason;
    }
  }
  test_util::ScopedEnv tall("TILEGEMM_CONFIG_FILTER", "block_m=256");
  EXPECT_EQ(select_config(desc, hw).block_m, 256);
}

// The shapes measured: DeepGEMM's masked test shapes and the MoE decode projections of 8 experts at 512 tokens.
TEST(MaskedFp8Picks, MeasuredShapes) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  struct Case {
    int groups, m_max, expected_m, n, k, block_m, min_block_n;
  };
  for (const Case& c : {Case{32, 4096, 192, 6144, 7168, 128, 192}, Case{6, 4096, 1024, 7168, 3072, 128, 192},
                        Case{16, 4096, 256, 4096, 7168, 128, 160}, Case{8, 512, 128, 4096, 7168, 128, 192},
                        Case{8, 512, 128, 7168, 2048, 128, 192}, Case{32, 4096, 20, 4096, 4096, 64, 64},
                        Case{6, 4096, 20, 4096, 2048, 64, 64}}) {
    const GemmConfig config = select_config(fp8_masked(c.groups, c.m_max, c.expected_m, c.n, c.k), hw);
    EXPECT_EQ(config.block_m, c.block_m) << c.groups << "x" << c.expected_m << "x" << c.n << "x" << c.k;
    EXPECT_GE(config.block_n, c.min_block_n) << c.groups << "x" << c.expected_m << "x" << c.n << "x" << c.k;
  }
}
