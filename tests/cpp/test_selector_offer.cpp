// The kernels run more configs than the selector picks unasked (legality vs offer): tiles an odd multiple of 8 wide
// and FP8 stages of several K blocks away from small M and long K are legal, rejected by the selector with a reason
// that names the switch and the filter, and chosen once TILEGEMM_CONFIG_FILTER names their fields.
#include <gtest/gtest.h>

#include <string>

#include "core/config_filter.hpp"
#include "heuristics/selector_offer.hpp"
#include "scoped_env.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

GemmDesc fp8_dense(int m, int n, int k) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k;
  d.a_dtype = d.b_dtype = DType::kFloat8E4M3;
  return d;
}

// Among the enumerated candidates with the feature: how many the kernel runs, and how many the selector keeps.
struct FeatureCount {
  int runnable = 0, selectable = 0;
  std::string reason;  // one rejection reason of a runnable candidate
};

template <class Has>
FeatureCount count(const GemmDesc& desc, Has has) {
  const HardwareModel hw = hardware_preset("h200");
  FeatureCount out;
  for (const Candidate& c : enumerate_candidates(desc, hw)) {
    if (!has(c.config) || !sm90_config_legal(desc, c.config, hw, nullptr)) continue;
    ++out.runnable;
    if (c.legal)
      ++out.selectable;
    else
      out.reason = c.reject_reason;
  }
  return out;
}

}  // namespace

TEST(SelectorOffer, FeaturesTheKernelsRunAreOfferedOnlyWhenTheFilterNamesThem) {
  const GemmDesc desc = fp8_dense(4096, 7168, 2048);
  // Each feature alone (a candidate with two is refused for either), on tile shapes offered by themselves.
  auto shape = [](const GemmConfig& c) { return c.block_m <= 128 || c.block_n >= kSm90Fp8TallTileMinBlockN; };
  // (FP8 two-block stages run no cluster: legality keeps those apart.)
  auto odd_eighth = [=](const GemmConfig& c) {
    return c.block_n % 16 == 8 && c.cluster_m == 1 && c.block_k == 128 && shape(c);
  };
  auto two_block_stages = [=](const GemmConfig& c) { return c.block_k == 256 && c.block_n % 16 == 0 && shape(c); };
  {
    test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
    for (auto [counted, flag, needle] :
         {std::tuple{count(desc, odd_eighth), kSm90OddEighthBlockNSelected, "block_n=56"},
          std::tuple{count(desc, two_block_stages), false, "block_k=256"}}) {  // M = 4096: not offered
      EXPECT_GT(counted.runnable, 0) << needle;
      if (flag) continue;
      EXPECT_EQ(counted.selectable, 0) << needle;
      EXPECT_NE(counted.reason.find("not offered"), std::string::npos) << counted.reason;
      EXPECT_NE(counted.reason.find(needle), std::string::npos) << counted.reason;
    }
  }
  {
    test_util::ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "block_k=256");
    const FeatureCount two = count(desc, two_block_stages);
    EXPECT_EQ(two.selectable, two.runnable);
    EXPECT_EQ(select_config(desc, hardware_preset("h200")).block_k, 256);
  }
  {
    // A BF16 problem too: naming block_n offers the odd widths, and the one named is chosen.
    GemmDesc bf16 = desc;
    bf16.a_dtype = bf16.b_dtype = DType::kBFloat16;
    test_util::ScopedEnv filter("TILEGEMM_CONFIG_FILTER", "block_n=56");
    const FeatureCount odd = count(bf16, odd_eighth);
    EXPECT_GT(odd.runnable, 0);
    EXPECT_EQ(odd.selectable, odd.runnable);
    EXPECT_EQ(select_config(bf16, hardware_preset("h200")).block_n, 56);
  }
}

// FP8 two-block stages are offered (and preferred on a tie) where they measured faster: small M, long K.
TEST(SelectorOffer, Fp8TwoBlockStagesWhereMeasuredFaster) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  for (auto [m, n, k, block_k] : {std::tuple{64, 7168, 16384, 256}, std::tuple{128, 7168, 16384, 256},
                                  std::tuple{64, 7168, 2048, 128}, std::tuple{4096, 2112, 7168, 128}}) {
    const GemmConfig c = select_config(fp8_dense(m, n, k), hw);
    EXPECT_EQ(c.block_k, block_k) << m << "x" << n << "x" << k;
  }
  GemmDesc masked = fp8_dense(8 * 256, 4096, 7168);
  masked.type = GemmType::kMGroupedMasked, masked.num_groups = 8, masked.m = 256, masked.expected_m = 64;
  EXPECT_EQ(select_config(masked, hw).block_k, 256);  // decode: ~64 rows per expert
  masked.expected_m = 256;
  EXPECT_EQ(select_config(masked, hw).block_k, 128);
  masked.expected_m = 0;  // no hint: up to m = 256 rows per group
  EXPECT_EQ(select_config(masked, hw).block_k, 128);
  GemmConfig two;
  two.block_m = 64, two.block_n = 64, two.block_k = 256, two.num_math_warpgroups = 1;
  const std::string why = sm90_offer_problem(fp8_dense(4096, 4096, 7168), two, ConfigFilter{});
  EXPECT_NE(why.find("4096 rows"), std::string::npos) << why;
}

// Four-block stages: offered (and preferred) for tiles at most kSm90Fp8FourBlockStagesMaxBlockN wide where two-block
// stages are; the selector's picks change only on the three DeepSeek shapes that measured faster with them.
TEST(SelectorOffer, Fp8FourBlockStagesOnNarrowTilesWhereMeasuredFaster) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::ScopedEnv no_filter("TILEGEMM_CONFIG_FILTER", nullptr);
  for (auto [m, n, k, block_n, block_k] :
       {std::tuple{64, 2112, 7168, 16, 512}, std::tuple{128, 2112, 7168, 32, 512}, std::tuple{64, 4096, 7168, 32, 512},
        std::tuple{128, 4096, 7168, 64, 256}, std::tuple{64, 7168, 16384, 64, 256},
        std::tuple{128, 7168, 16384, 64, 256}}) {
    const GemmConfig c = select_config(fp8_dense(m, n, k), hw);
    EXPECT_EQ(c.block_n, block_n) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.block_k, block_k) << m << "x" << n << "x" << k;
  }
  GemmConfig four;
  four.block_m = 64, four.block_n = 64, four.block_k = 512, four.num_math_warpgroups = 1;
  std::string why = sm90_offer_problem(fp8_dense(64, 7168, 16384), four, ConfigFilter{});
  EXPECT_NE(why.find("wider than 32"), std::string::npos) << why;
  four.block_n = 32;
  EXPECT_TRUE(sm90_offer_problem(fp8_dense(64, 7168, 16384), four, ConfigFilter{}).empty());
  why = sm90_offer_problem(fp8_dense(256, 7168, 16384), four, ConfigFilter{});
  EXPECT_NE(why.find("256 rows"), std::string::npos) << why;
  EXPECT_TRUE(sm90_offer_problem(fp8_dense(256, 7168, 16384), four, parse_config_filter("block_k=512")).empty());
}

TEST(SelectorOffer, NamingAFieldIsWhatOffers) {
  GemmConfig odd;
  odd.block_m = 64, odd.num_math_warpgroups = 1, odd.block_n = 56, odd.block_k = 128;
  const GemmDesc desc = fp8_dense(64, 2112, 7168);
  // Another field is not enough: the filter must name block_n to offer an odd-eighth width.
  EXPECT_EQ(sm90_offer_problem(desc, odd, parse_config_filter("block_m=64")).empty(), kSm90OddEighthBlockNSelected);
  EXPECT_TRUE(sm90_offer_problem(desc, odd, parse_config_filter("block_m=64,block_n=56,stages=8")).empty());
  EXPECT_TRUE(parse_config_filter("cluster_m=2,block_n=128").names({"cluster_m"}));
  EXPECT_FALSE(parse_config_filter("cluster_m=2").names({"cluster_n"}));
  EXPECT_FALSE(ConfigFilter{}.names({"block_m"}));
  // Everything else is offered as it is.
  GemmConfig plain = odd;
  plain.block_n = 64;
  EXPECT_TRUE(sm90_offer_problem(desc, plain, ConfigFilter{}).empty());
}
