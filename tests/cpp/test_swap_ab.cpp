// Swap AB for BF16 GEMMs (GemmConfig::swap_ab): the swapped problem, the rules, the selector behind its pin, the
// cost of a swapped config, and the generated kernels compiling for sm_90a without spills.
#include <gtest/gtest.h>

#include <string>

#include "core/config_filter.hpp"
#include "expect_invalid.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"

using namespace tilegemm;
using test_util::ScopedEnv;

namespace {

GemmDesc dense(int m, int n, int k, Major ma = Major::kKMajor, Major mb = Major::kKMajor) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  desc.major_a = ma, desc.major_b = mb;
  return desc;
}

// A legal swapped config of the kernel's own problem (block sizes along the weights' rows and the tokens).
GemmConfig swapped_config(int block_m, int block_n, int math_wg, int stages) {
  GemmConfig c;
  c.block_m = block_m, c.block_n = block_n, c.block_k = 64, c.num_math_warpgroups = math_wg, c.stages = stages;
  c.swap_ab = true, c.swizzle_d_bytes = 128, c.num_sms = 132, c.raster_group = 8;
  return c;
}

}  // namespace

TEST(SwapAb, SwappedProblemExchangesTheOperands) {
  const GemmDesc desc = dense(257, 24576, 1536, Major::kKMajor, Major::kMNMajor);
  const GemmDesc s = swapped_problem(desc);
  EXPECT_EQ(s.m, 24576);
  EXPECT_EQ(s.n, 257);
  EXPECT_EQ(s.k, 1536);
  EXPECT_EQ(s.major_a, Major::kMNMajor);
  EXPECT_EQ(s.major_b, Major::kKMajor);
  EXPECT_TRUE(s.d_transposed);
  GemmConfig c;
  EXPECT_EQ(kernel_problem(desc, c).m, 257);  // a plain config runs the caller's problem
  c.swap_ab = true;
  EXPECT_EQ(kernel_problem(desc, c).m, 24576);
  EXPECT_EQ(kernel_problem(s, c).m, 24576);  // an already swapped problem stays as it is
  // D's row length is the swapped problem's m: 257 tokens are fine, 100 columns of D are not (TMA row stride).
  EXPECT_NO_THROW(validate_desc(s));
  test_util::expect_invalid([] { validate_desc(swapped_problem(dense(257, 100, 64))); }, "n");
}

TEST(SwapAb, RunsPlainBf16GemmsWithBf16DOnly) {
  EXPECT_TRUE(sm90_swap_ab_runs(dense(129, 4096, 7168)));
  GemmDesc fp32_d = dense(129, 4096, 7168);
  fp32_d.d_dtype = DType::kFloat32;
  GemmDesc with_c = dense(129, 4096, 7168);
  with_c.with_c = true;
  GemmDesc fp8 = dense(129, 4096, 7168);
  fp8.a_dtype = fp8.b_dtype = DType::kFloat8E4M3;
  GemmDesc batched = dense(129, 4096, 7168);
  batched.type = GemmType::kBatched, batched.num_groups = 2;
  for (const GemmDesc& d : {fp32_d, with_c, fp8, batched, swapped_problem(dense(129, 4096, 7168))}) {
    SCOPED_TRACE(to_string(d));
    EXPECT_FALSE(sm90_swap_ab_runs(d));
  }
}

TEST(SwapAb, LegalityTiesTheFlagToTheSwappedProblem) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = dense(257, 24576, 1536);
  GemmConfig c = swapped_config(128, 144, 2, 5);
  std::string why;
  EXPECT_TRUE(sm90_bf16_config_legal(swapped_problem(desc), c, hw, &why)) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, c, hw, &why));
  EXPECT_NE(why.find("swap_ab runs the swapped problem"), std::string::npos) << why;
  GemmConfig plain = c;
  plain.swap_ab = false;
  EXPECT_FALSE(sm90_bf16_config_legal(swapped_problem(desc), plain, hw, &why));
  EXPECT_NE(why.find("d_transposed"), std::string::npos) << why;
  GemmConfig split = c;
  split.scheme = GemmScheme::kSplitK, split.split_k = 2;
  EXPECT_FALSE(sm90_bf16_config_legal(swapped_problem(desc), split, hw, &why));
  EXPECT_NE(why.find("data-parallel"), std::string::npos) << why;
  GemmConfig narrow_swizzle = c;
  narrow_swizzle.swizzle_d_bytes = 32;
  EXPECT_FALSE(sm90_bf16_config_legal(swapped_problem(desc), narrow_swizzle, hw, &why));
  GemmDesc fp8 = desc;
  fp8.a_dtype = fp8.b_dtype = DType::kFloat8E4M3;
  GemmConfig fp8_config = c;
  fp8_config.block_k = 128;
  EXPECT_FALSE(sm90_config_legal(fp8, fp8_config, hw, &why));
  EXPECT_NE(why.find("swap_ab"), std::string::npos) << why;
}

TEST(SwapAb, FilterPinsTheFlag) {
  const ConfigFilter on = parse_config_filter("swap_ab=1,block_m=128");
  const ConfigFilter off = parse_config_filter("swap_ab=0");
  GemmConfig c;
  EXPECT_FALSE(on.matches(c));
  EXPECT_TRUE(off.matches(c));
  c.swap_ab = true;
  EXPECT_TRUE(on.matches(c));
  EXPECT_FALSE(off.matches(c));
  EXPECT_EQ(off.pinned("swap_ab"), 0);
  EXPECT_EQ(on.pinned("swap_ab"), 1);
  EXPECT_FALSE(on.pinned("stages").has_value());
  for (const char* bad : {"swap_ab=2", "swap_ab=-1", "swap_ab=", "swap_ab=yes"}) {
    SCOPED_TRACE(bad);
    test_util::expect_invalid([&] { parse_config_filter(bad); }, "TILEGEMM_CONFIG_FILTER");
  }
}

TEST(SwapAb, SelectorSwapsRaggedMPastOneBlockWhereTheModelGainsATenth) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc ragged = dense(257, 24576, 1536);
  GemmConfig plain;
  {
    ScopedEnv off("TILEGEMM_CONFIG_FILTER", "swap_ab=0");
    plain = select_config(ragged, hw);
  }
  const GemmConfig swapped = select_config(ragged, hw);
  EXPECT_FALSE(plain.swap_ab);
  EXPECT_TRUE(swapped.swap_ab);
  // 257 tokens fill 2 x 136+ columns instead of three 128-row blocks, of which the last holds one row.
  const CostBreakdown plain_cost = estimate_sm90_cost(ragged, plain, hw);
  const CostBreakdown swapped_cost = estimate_sm90_cost(ragged, swapped, hw);
  EXPECT_LT(swapped_cost.predicted_us, 0.88 * plain_cost.predicted_us)
      << plain_cost.predicted_us << " vs " << swapped_cost.predicted_us;
  EXPECT_EQ(swapped_cost.flops, plain_cost.flops);
  // The plan listing ranks the swapped candidates first, the selector's pick at the front.
  const std::vector<Candidate> ranked = rank_candidates(ragged, hw);
  ASSERT_FALSE(ranked.empty());
  EXPECT_TRUE(ranked.front().config.swap_ab);
  EXPECT_EQ(ranked.front().config.block_m, swapped.block_m);
  EXPECT_EQ(ranked.front().config.block_n, swapped.block_n);
  // A smaller predicted gain (9% at 129x4096x7168), or M within one 128-row block (65x7168x2048: 16%), stays plain;
  // the pin swaps them anyway.
  for (const GemmDesc& d : {dense(129, 4096, 7168), dense(65, 7168, 2048), dense(4096, 7168, 2048)}) {
    SCOPED_TRACE(to_string(d));
    EXPECT_FALSE(select_config(d, hw).swap_ab);
    for (const Candidate& c : rank_candidates(d, hw)) EXPECT_FALSE(c.config.swap_ab);
  }
  ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "swap_ab=1");
  EXPECT_TRUE(select_config(dense(129, 4096, 7168), hw).swap_ab);
  EXPECT_TRUE(select_config(dense(65, 7168, 2048), hw).swap_ab);
  // Where the kernel cannot swap (fp32 D), the pin leaves nothing to match: the error names the variable.
  GemmDesc fp32_d = ragged;
  fp32_d.d_dtype = DType::kFloat32;
  test_util::expect_invalid([&] { select_config(fp32_d, hw); }, "TILEGEMM_CONFIG_FILTER");
}

TEST(SwapAb, UnpinnedAndSwapOffSelectionsStayPlain) {
  const HardwareModel hw = hardware_preset("h200");
  ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "swap_ab=0");
  for (const GemmDesc& d : {dense(257, 24576, 1536), dense(129, 4096, 7168), dense(65, 2112, 7168)}) {
    SCOPED_TRACE(to_string(d));
    EXPECT_FALSE(select_config(d, hw).swap_ab);
    for (const Candidate& c : rank_candidates(d, hw)) EXPECT_FALSE(c.config.swap_ab);
  }
}

namespace {
class SwapAbCodegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");
  }
};
}  // namespace

TEST_F(SwapAbCodegen, SwappedKernelsCompileWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  struct Variant {
    GemmDesc desc;
    GemmConfig config;
  };
  GemmConfig clustered = swapped_config(128, 144, 2, 5);
  clustered.cluster_m = 2, clustered.multicast = MulticastSide::kB;
  const Variant variants[] = {
      {dense(257, 24576, 1536), swapped_config(128, 144, 2, 5)},  // 64 rows per warpgroup, x4 stores only
      {dense(129, 4096, 7168), swapped_config(64, 80, 1, 12)},    // 80 = 5 x 16
      {dense(65, 2112, 7168, Major::kKMajor, Major::kMNMajor), swapped_config(64, 72, 1, 12)},  // x2 tail, MN-major A'
      {dense(200, 1000, 1000), swapped_config(256, 104, 2, 3)},  // 128 rows per warpgroup: two chunks
      {dense(72, 2112, 1000, Major::kMNMajor, Major::kKMajor), swapped_config(64, 128, 1, 8)},  // MN-major B'
      {dense(256, 7168, 2048), clustered},                                                      // tokens multicast
  };
  for (const Variant& v : variants) {
    const GemmDesc run = swapped_problem(v.desc);
    GemmConfig config = v.config;
    config.smem_bytes = sm90_bf16_smem_bytes(run, config);
    std::string why;
    ASSERT_TRUE(sm90_bf16_config_legal(run, config, hw, &why)) << to_string(v.desc) << ": " << why;
    const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(v.desc, config);
    SCOPED_TRACE(spec.name);
    EXPECT_NE(spec.name.find("_swap"), std::string::npos);
    EXPECT_NE(spec.source.find("kSwapAB = true"), std::string::npos);
    EXPECT_NE(spec.source.find("BLOCK_N = " + std::to_string(config.block_n)), std::string::npos);
    std::shared_ptr<const jit::CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
  }
  // The plain kernel's source says so too (the same template serves both).
  GemmConfig plain = swapped_config(128, 144, 2, 5);
  plain.swap_ab = false;
  EXPECT_NE(kernels::sm90_bf16_gemm_spec(dense(257, 24576, 1536), plain).source.find("kSwapAB = false"),
            std::string::npos);
}
