// FP8: 256-row tiles narrower than kSm90Fp8TallTileMinBlockN are not offered unless the filter names block_n, but for
// 64-wide ones where 256x128 tiles leave a third of the SMs idle. The contiguous MoE prefill they were measured on
// (8 experts, 8704 rows, 4096x7168 weights) picked 256x80 before; 1024x2112x7168 keeps its 256x64.
#include <gtest/gtest.h>

#include <string>

#include "scoped_env.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

GemmDesc fp8_problem(GemmType type, int groups, int m, int n, int k) {
  GemmDesc d;
  d.type = type;
  d.num_groups = groups, d.m = m, d.n = n, d.k = k;
  d.a_dtype = d.b_dtype = DType::kFloat8E4M3;
  return d;
}

}  // namespace

TEST(Fp8TallTileWidth, NarrowTallTilesAreRejectedWithTheirReason) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  const GemmDesc desc = fp8_problem(GemmType::kMGroupedContiguous, 8, 8704, 4096, 7168);
  int narrow = 0;
  for (const Candidate& c : enumerate_candidates(desc, hw)) {
    if (c.config.block_m != 256 || c.config.block_n >= kSm90Fp8TallTileMinBlockN) continue;
    if (!sm90_config_legal(desc, c.config, hw, nullptr)) continue;
    ++narrow;
    EXPECT_FALSE(c.legal) << to_string(c.config);
    EXPECT_NE(c.reject_reason.find("narrower than 128"), std::string::npos) << c.reject_reason;
  }
  EXPECT_GT(narrow, 0) << "the kernel runs narrow 256-row tiles, so the rule has something to reject";
}

// The shapes whose picks the rule changed: every 256-row pick is at least 128 wide, on every FP8 problem type.
TEST(Fp8TallTileWidth, ShapesThatChoseNarrowTallTiles) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  struct Case {
    GemmType type;
    int groups, m, n, k;
  };
  for (const Case& c :
       {Case{GemmType::kMGroupedContiguous, 8, 8704, 4096, 7168},
        Case{GemmType::kMGroupedContiguous, 8, 8576, 4096, 7168}, Case{GemmType::kNormal, 1, 2048, 7168, 2048},
        Case{GemmType::kNormal, 1, 3072, 1536, 7168}, Case{GemmType::kNormal, 1, 1024, 7168, 2048}}) {
    const GemmConfig config = select_config(fp8_problem(c.type, c.groups, c.m, c.n, c.k), hw);
    if (config.block_m > 128) EXPECT_GE(config.block_n, kSm90Fp8TallTileMinBlockN) << to_string(config);
  }
}

// 256x128 tiles of 1024x2112x7168 fill 68 of 132 SMs: 64-wide 256-row tiles (132 of them) stay offered, and won
// there. 2048x7168x2048's 448 wide tiles fill 85% of four waves: no narrow tall tile.
TEST(Fp8TallTileWidth, SixtyFourWideTallTilesWhereWideOnesLeaveSmsIdle) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  const GemmConfig filler = select_config(fp8_problem(GemmType::kNormal, 1, 1024, 2112, 7168), hw);
  EXPECT_EQ(filler.block_m, 256) << to_string(filler);
  EXPECT_EQ(filler.block_n, kSm90Fp8TallFillerBlockN) << to_string(filler);
  const GemmDesc busy = fp8_problem(GemmType::kNormal, 1, 2048, 7168, 2048);
  for (const Candidate& c : enumerate_candidates(busy, hw))
    if (c.config.block_m == 256 && c.config.block_n == kSm90Fp8TallFillerBlockN) EXPECT_FALSE(c.legal);
  const GemmConfig pick = select_config(busy, hw);
  EXPECT_FALSE(pick.block_m > 128 && pick.block_n < kSm90Fp8TallTileMinBlockN) << to_string(pick);
}

TEST(Fp8TallTileWidth, TheFilterStillForcesANarrowTallTile) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv narrow("TILEGEMM_CONFIG_FILTER", "block_m=256,block_n=80");
  const GemmConfig config = select_config(fp8_problem(GemmType::kMGroupedContiguous, 8, 8704, 4096, 7168), hw);
  EXPECT_EQ(config.block_m, 256);
  EXPECT_EQ(config.block_n, 80);
}

// 64-row warpgroups of 192 columns keep up with 256x128 tiles on compute-bound problems (kFp8SingleSubBlockMaxBlockN):
// at 4096x2112x7168 on the H100, 128x192 (3 waves) measured 1.36x faster than the 128x64 tiles (8 full waves) the
// model chose while it charged them the 64-row penalty. Where the weights' DRAM reads dominate the penalty stays.
TEST(Fp8TallTileWidth, WideSingleSubBlockTilesOnComputeBoundProblems) {
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  for (const char* preset : {"h100-sxm", "h200"}) {
    const GemmConfig pick = select_config(fp8_problem(GemmType::kNormal, 1, 4096, 2112, 7168), hardware_preset(preset));
    EXPECT_EQ(pick.block_m, 128) << preset << ": " << to_string(pick);
    EXPECT_EQ(pick.block_n, 192) << preset << ": " << to_string(pick);
  }
}
