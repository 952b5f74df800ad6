// Every SM90 BF16 kernel variant the API can launch compiles for sm_90a through the JIT on a machine
// without a GPU, and ptxas reports no spills or local memory (DG_JIT_PTXAS_CHECK).
#include <gtest/gtest.h>

#include <string>

#include "kernels/sm90_bf16_gemm.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"

using namespace tilegemm;

namespace {

// A fresh JIT cache per test, and ptxas spills or local memory fail the compile.
class Sm90Bf16Codegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");
  }
};

GemmDesc make_desc(GemmType type, Major ma, Major mb, DType d, bool with_c) {
  GemmDesc desc;
  desc.type = type;
  desc.m = 4096, desc.n = 7168, desc.k = 2048;
  desc.num_groups = type == GemmType::kNormal ? 1 : 4;
  desc.expected_m = type == GemmType::kMGroupedMasked ? 256 : 0;
  desc.major_a = ma, desc.major_b = mb;
  desc.d_dtype = d;
  desc.with_c = with_c;
  return desc;
}

void expect_compiles(const GemmDesc& desc, const GemmConfig& config) {
  const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(desc, config);
  SCOPED_TRACE(spec.name);
  // Profilers (and DeepGEMM's bench_kineto) find the kernel by a name that carries the family.
  EXPECT_EQ(spec.entry, desc.type == GemmType::kBatchReduced ? "sm90_bmn_bnk_mn_gemm_impl" : "sm90_bf16_gemm_impl");
  EXPECT_NE(spec.source.find("\n" + spec.entry + "(const __grid_constant__"), std::string::npos);
  EXPECT_NE(spec.source.find("static constexpr int BLOCK_N = " + std::to_string(config.block_n)), std::string::npos);
  std::shared_ptr<const jit::CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
  EXPECT_GT(kernel->cubin().size(), 1000u);
}

}  // namespace

TEST_F(Sm90Bf16Codegen, EveryLayoutAndOutputCompilesWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  for (Major ma : {Major::kKMajor, Major::kMNMajor})
    for (Major mb : {Major::kKMajor, Major::kMNMajor})
      for (DType d : {DType::kBFloat16, DType::kFloat32})
        for (bool with_c : {false, true}) {
          if (ma == Major::kMNMajor && mb == Major::kMNMajor && with_c) continue;  // covered by the others
          const GemmDesc desc = make_desc(GemmType::kNormal, ma, mb, d, with_c);
          expect_compiles(desc, select_config(desc, hw));
        }
}

TEST_F(Sm90Bf16Codegen, EverySchedulerCompiles) {
  const HardwareModel hw = hardware_preset("h200");
  for (GemmType type : {GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
    const GemmDesc desc = make_desc(type, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false);
    expect_compiles(desc, select_config(desc, hw));
  }
  GemmDesc k_grouped =
      make_desc(GemmType::kKGroupedContiguous, Major::kMNMajor, Major::kMNMajor, DType::kFloat32, true);
  expect_compiles(k_grouped, select_config(k_grouped, hw));
  // einsum 'bmk,bnk->mn' at DeepGEMM's test shape (129 batches of K 128 into a 128x384 D): a long-K problem the
  // selector cuts, with the producer walking the batches; fp32 D accumulated in place, and bf16 D.
  for (const bool accumulate : {true, false}) {
    GemmDesc reduced = make_desc(GemmType::kBatchReduced, Major::kKMajor, Major::kKMajor,
                                 accumulate ? DType::kFloat32 : DType::kBFloat16, accumulate);
    reduced.m = 128, reduced.n = 384, reduced.num_groups = 129, reduced.k = 129 * 128;
    const GemmConfig config = select_config(reduced, hw);
    EXPECT_NE(config.scheme, GemmScheme::kDataParallel) << "3 tiles on 132 SMs";
    EXPECT_EQ(config.block_k, 64);
    EXPECT_EQ(config.cluster_m * config.cluster_n, 1);
    const jit::KernelSpec reduced_spec = kernels::sm90_bf16_gemm_spec(reduced, config);
    EXPECT_NE(reduced_spec.source.find("GemmType::kBatchReduced"), std::string::npos);
    expect_compiles(reduced, config);
  }
  GemmDesc psum = make_desc(GemmType::kMGroupedContiguous, Major::kKMajor, Major::kMNMajor, DType::kBFloat16, false);
  psum.use_psum_layout = true;
  const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(psum, select_config(psum, hw));
  EXPECT_NE(spec.name.find("_psum"), std::string::npos);
  EXPECT_NE(spec.source.find("kPsumLayout = true"), std::string::npos);
  expect_compiles(psum, select_config(psum, hw));
}

TEST_F(Sm90Bf16Codegen, ExtremeTileShapesCompile) {
  // The corners of the legal space: the smallest tile, non-power-of-two block_n, 256-row tiles.
  const GemmDesc desc = make_desc(GemmType::kNormal, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false);
  for (auto [bm, bn, wgs] : {std::tuple{64, 16, 1}, std::tuple{128, 112, 2}, std::tuple{256, 128, 2},
                             std::tuple{64, 256, 1}, std::tuple{64, 208, 1}}) {
    GemmConfig config;
    config.block_m = bm, config.block_n = bn, config.num_math_warpgroups = wgs;
    config.stages = 3;
    config.num_sms = 132;
    expect_compiles(desc, config);
  }
}

// Tiles whose width is an odd multiple of 8 (offered only when TILEGEMM_CONFIG_FILTER names block_n: measured slower):
// bf16 D goes out in 16-byte unswizzled chunks with a final stmatrix x2, fp32 D in 32-byte chunks.
TEST_F(Sm90Bf16Codegen, OddMultipleOfEightTilesCompile) {
  const HardwareModel hw = hardware_preset("h200");
  struct Shape {
    int block_m, wgs, block_n, block_k;
    DType d;
    bool with_c;
  };
  for (const Shape& s :
       {Shape{64, 1, 56, 64, DType::kBFloat16, false}, Shape{64, 1, 24, 128, DType::kBFloat16, false},
        Shape{128, 2, 120, 64, DType::kBFloat16, false}, Shape{64, 1, 40, 64, DType::kFloat32, true}}) {
    const GemmDesc desc = make_desc(GemmType::kNormal, Major::kKMajor, Major::kKMajor, s.d, s.with_c);
    GemmConfig c;
    c.block_m = s.block_m, c.num_math_warpgroups = s.wgs, c.block_n = s.block_n, c.block_k = s.block_k;
    c.stages = 4, c.num_sms = hw.num_sms;
    c.swizzle_d_bytes = 0;  // no swizzle mode divides these rows (the selector's d_swizzle_bytes)
    std::string why;
    ASSERT_TRUE(sm90_bf16_config_legal(desc, c, hw, &why)) << why;
    expect_compiles(desc, c);
  }
}

TEST_F(Sm90Bf16Codegen, TwoAtomStagesCompileForEveryLayoutAndScheme) {
  // block_k = 128: two 64-wide K atoms per stage (K-major: two TMA boxes per operand; MN-major: 128-row panels).
  auto wide = [](int bm, int bn, int wgs, GemmScheme scheme = GemmScheme::kDataParallel, int split_k = 1) {
    GemmConfig config;
    config.block_m = bm, config.block_n = bn, config.num_math_warpgroups = wgs;
    config.block_k = 128, config.stages = 3, config.num_sms = 132;
    config.scheme = scheme, config.split_k = split_k;
    return config;
  };
  for (Major ma : {Major::kKMajor, Major::kMNMajor})
    for (Major mb : {Major::kKMajor, Major::kMNMajor}) {
      const GemmDesc desc = make_desc(GemmType::kNormal, ma, mb,
                                      mb == Major::kKMajor ? DType::kBFloat16 : DType::kFloat32, ma == Major::kMNMajor);
      const GemmConfig config = wide(ma == Major::kKMajor ? 64 : 128, mb == Major::kKMajor ? 16 : 128, 1);
      const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(desc, config);
      EXPECT_NE(spec.source.find("static constexpr int BLOCK_K = 128"), std::string::npos);
      expect_compiles(desc, config);
    }
  const GemmDesc nt = make_desc(GemmType::kNormal, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false);
  expect_compiles(nt, wide(128, 128, 2));
  expect_compiles(nt, wide(64, 64, 1, GemmScheme::kSplitK, 4));
  expect_compiles(nt, wide(64, 64, 1, GemmScheme::kStreamK));
  expect_compiles(make_desc(GemmType::kMGroupedMasked, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false),
                  wide(64, 32, 1));
}

TEST_F(Sm90Bf16Codegen, TwoCtaClusterWithBMulticastCompiles) {
  const HardwareModel hw = hardware_preset("h200");
  for (GemmType type :
       {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
    const GemmDesc desc = make_desc(type, Major::kMNMajor, Major::kKMajor, DType::kFloat32, type == GemmType::kNormal);
    GemmConfig config;
    config.block_m = 128, config.block_n = 128, config.num_math_warpgroups = 2, config.stages = 4;
    config.cluster_m = 2, config.multicast = MulticastSide::kB, config.num_sms = 132;
    std::string why;
    EXPECT_TRUE(sm90_bf16_config_legal(desc, config, hw, &why)) << why;
    const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(desc, config);
    EXPECT_NE(spec.source.find("kClusterM = 2"), std::string::npos);
    expect_compiles(desc, config);
  }
  // The prefix-sum layout's cursor does not pair m-blocks; K-grouped problems have no M groups to pair.
  GemmDesc psum = make_desc(GemmType::kMGroupedContiguous, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false);
  psum.use_psum_layout = true;
  GemmDesc k_grouped = make_desc(GemmType::kKGroupedContiguous, Major::kKMajor, Major::kKMajor, DType::kFloat32, false);
  for (const GemmDesc& desc : {psum, k_grouped}) {
    GemmConfig config;
    config.block_m = 128, config.block_n = 128, config.num_math_warpgroups = 2, config.stages = 4;
    config.cluster_m = 2, config.multicast = MulticastSide::kB, config.num_sms = 132;
    std::string why;
    EXPECT_FALSE(sm90_bf16_config_legal(desc, config, hw, &why)) << to_string(desc);
  }
  // MN-major B cannot be split for multicast, and 1x2 clusters are not implemented.
  GemmDesc mn_b = make_desc(GemmType::kNormal, Major::kKMajor, Major::kMNMajor, DType::kBFloat16, false);
  GemmConfig config;
  config.block_m = 128, config.block_n = 128, config.num_math_warpgroups = 2, config.stages = 4;
  config.cluster_m = 2, config.multicast = MulticastSide::kB, config.num_sms = 132;
  std::string why;
  EXPECT_FALSE(sm90_bf16_config_legal(mn_b, config, hw, &why));
  EXPECT_NE(why.find("MN-major"), std::string::npos) << why;
  config.cluster_m = 1, config.cluster_n = 2, config.multicast = MulticastSide::kNone;
  EXPECT_FALSE(sm90_bf16_config_legal(
      make_desc(GemmType::kNormal, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false), config, hw, &why));
  EXPECT_NE(why.find("1x2"), std::string::npos) << why;
}

TEST_F(Sm90Bf16Codegen, WgmmaGroupsInFlightFollowTheRuleAndTheTuningOverride) {
  const GemmDesc desc = make_desc(GemmType::kNormal, Major::kKMajor, Major::kKMajor, DType::kBFloat16, false);
  GemmConfig config;
  config.block_m = 64, config.block_n = 32, config.num_math_warpgroups = 1, config.num_sms = 132;
  config.stages = 8;
  EXPECT_EQ(kernels::mma_groups_in_flight(config), 1);  // measured best on the H200
  config.stages = 3;
  EXPECT_EQ(kernels::mma_groups_in_flight(config), 1);
  ::setenv("TILEGEMM_MMA_IN_FLIGHT", "4", 1);
  reload_env();
  EXPECT_EQ(kernels::mma_groups_in_flight(config), 2);  // never as deep as the ring itself
  config.stages = 8;
  EXPECT_NE(kernels::sm90_bf16_gemm_spec(desc, config).source.find("kMmaGroupsInFlight = 4"), std::string::npos);
  expect_compiles(desc, config);
  ::setenv("TILEGEMM_MMA_IN_FLIGHT", "9", 1);
  EXPECT_THROW(reload_env(), InvalidArgument);
  ::unsetenv("TILEGEMM_MMA_IN_FLIGHT");
  reload_env();
}
