// FP8 M-grouped contiguous problems in the prefix-sum layout with a hint of rows per group (DeepGEMM's
// expected_m_for_psum_layout; the MoE layer's even spread): tiles counted over the groups' rows rather than the
// buffer's, so a decode batch of a few rows per expert gets short tiles, and the hint is refused where no kernel
// reads it.
#include <gtest/gtest.h>

#include <string>

#include "expect_invalid.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

// DeepSeek-V3's gate/up GEMM of 512 tokens top-8 over 256 experts: 4096 rows in a buffer laid out for the worst
// routing (every expert padded to 128 rows).
GemmDesc moe_gemm1(int expected_m) {
  GemmDesc d;
  d.type = GemmType::kMGroupedContiguous;
  d.use_psum_layout = true;
  d.num_groups = 256, d.m = 36608, d.expected_m = expected_m, d.n = 4096, d.k = 7168;
  d.a_dtype = d.b_dtype = DType::kFloat8E4M3;
  return d;
}

}  // namespace

TEST(PsumHintPicks, TilesFollowTheHintedRowsPerGroup) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmConfig hinted = select_config(moe_gemm1(16), hw);
  // 16 rows per expert: one m-block per expert whatever the tile height, so the short tile computes least.
  EXPECT_EQ(hinted.block_m, 64) << to_string(hinted);
  const Candidate ranked = rank_candidates(moe_gemm1(16), hw).front();
  EXPECT_EQ(ranked.cost.tiles, 256LL * ((4096 + hinted.block_n - 1) / hinted.block_n));
  // Without the hint the buffer's 36608 rows are taken as real: the cost counts their tiles.
  const Candidate unhinted = rank_candidates(moe_gemm1(0), hw).front();
  EXPECT_GE(unhinted.cost.tiles, 36608LL / unhinted.config.block_m * (4096 / unhinted.config.block_n));
}

TEST(PsumHintPicks, OnlyThePrefixSumLayoutTakesAHint) {
  GemmDesc per_row = moe_gemm1(16);
  per_row.use_psum_layout = false;
  test_util::expect_invalid([&] { validate_desc(per_row); }, "expected_m", "prefix-sum");
  GemmDesc too_many = moe_gemm1(40000);
  test_util::expect_invalid([&] { validate_desc(too_many); }, "expected_m", "m=36608");
  EXPECT_NO_THROW(validate_desc(moe_gemm1(16)));
}
