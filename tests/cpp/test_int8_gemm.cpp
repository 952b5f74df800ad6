// int8 x int8 GEMM (tilegemm/int8_gemm.hpp) without a GPU: the kernel variants the selector picks compile for
// sm_90a without spills, the legality rules of integer wgmma hold, and bad arguments throw InvalidArgument naming
// the argument before any CUDA call.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "api/launch_plan.hpp"
#include "expect_invalid.hpp"
#include "fake_views.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/int8_gemm.hpp"
#include "tilegemm/jit.hpp"

using namespace tilegemm;
using test_util::expect_edit_rejected;
using test_util::expect_invalid;
using test_util::fake_batched;
using test_util::fake_matrix;
using test_util::fake_vector;

namespace {

constexpr DType kI8 = DType::kInt8;

GemmDesc int8_desc(int m, int n, int k) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  desc.a_dtype = desc.b_dtype = kI8;
  desc.d_dtype = DType::kBFloat16;
  return desc;
}

class Int8GemmCodegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");  // spills or local memory fail the compile
  }
};

void expect_compiles(const GemmDesc& desc, const GemmConfig& config) {
  const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(desc, config);
  SCOPED_TRACE(spec.name);
  EXPECT_EQ(spec.entry, "sm90_i8_gemm_impl");
  EXPECT_NE(spec.source.find("static constexpr bool kInt8 = true"), std::string::npos);
  std::shared_ptr<const jit::CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
  EXPECT_GT(kernel->cubin().size(), 1000u);
}

}  // namespace

// DeepSeek-V3 projections from decode to prefill: whatever the selector picks is an int8 config and compiles.
TEST_F(Int8GemmCodegen, SelectedConfigsOfDeepSeekShapesCompile) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [m, n, k] : {std::tuple{1, 2112, 7168}, std::tuple{64, 24576, 1536}, std::tuple{128, 7168, 2048},
                         std::tuple{4096, 4096, 7168}, std::tuple{4096, 7168, 16384}}) {
    const GemmDesc desc = int8_desc(m, n, k);
    const GemmConfig c = select_config(desc, hw);
    SCOPED_TRACE(to_string(desc));
    EXPECT_TRUE(c.block_k == 128 || c.block_k == 256) << c.block_k;
    EXPECT_TRUE(c.block_n <= 32 || c.block_n % 16 == 0) << c.block_n;
    expect_compiles(desc, c);
  }
}

// The corners the selector may reach: narrow and widest tiles, two-atom stages, split-K, stream-K, B multicast.
TEST_F(Int8GemmCodegen, TileCornersSchemesAndMulticastCompile) {
  const HardwareModel hw = hardware_preset("h200");
  struct Shape {
    int block_m, wgs, block_n, block_k, cluster_m;
    GemmScheme scheme;
    int split_k;
  };
  const GemmDesc desc = int8_desc(512, 4096, 4096);
  for (const Shape& s :
       {Shape{64, 1, 16, 128, 1, GemmScheme::kDataParallel, 1}, Shape{64, 1, 24, 256, 1, GemmScheme::kSplitK, 4},
        Shape{128, 2, 256, 128, 1, GemmScheme::kDataParallel, 1}, Shape{128, 2, 128, 128, 1, GemmScheme::kStreamK, 1},
        Shape{128, 2, 144, 128, 2, GemmScheme::kDataParallel, 1}}) {
    GemmConfig c;
    c.block_m = s.block_m, c.num_math_warpgroups = s.wgs, c.block_n = s.block_n, c.block_k = s.block_k;
    c.cluster_m = s.cluster_m, c.multicast = s.cluster_m == 2 ? MulticastSide::kB : MulticastSide::kNone;
    c.scheme = s.scheme, c.split_k = s.split_k;
    c.stages = 3, c.num_sms = hw.num_sms;
    c.swizzle_d_bytes = d_chunk_swizzle_bytes(d_chunk_bytes(c.block_n, 2));  // as the selector sets it
    std::string why;
    EXPECT_TRUE(sm90_bf16_config_legal(desc, c, hw, &why)) << why;
    expect_compiles(desc, c);
  }
}

TEST(Int8GemmLegality, RejectsWidthsAndStagesIntegerWgmmaHasNot) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = int8_desc(512, 4096, 4096);
  GemmConfig c;
  c.block_m = 128, c.num_math_warpgroups = 2, c.block_n = 128, c.block_k = 64, c.stages = 4, c.num_sms = hw.num_sms;
  std::string why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, c, hw, &why));
  EXPECT_NE(why.find("int8 K atoms"), std::string::npos) << why;
  c.block_k = 128, c.block_n = 40;  // a bf16 width, not an integer wgmma one
  EXPECT_FALSE(sm90_bf16_config_legal(desc, c, hw, &why));
  EXPECT_NE(why.find("integer wgmma"), std::string::npos) << why;
  c.block_n = 256, c.stages = 2, c.scheme = GemmScheme::kStreamK;  // 128 accumulators per thread: data-parallel only
  EXPECT_FALSE(sm90_bf16_config_legal(desc, c, hw, &why));
  EXPECT_NE(why.find("data-parallel only"), std::string::npos) << why;
  c.scheme = GemmScheme::kDataParallel, c.stages = 4;
  c.block_n = 48, c.swizzle_d_bytes = 32;  // a 96-byte D row: 32-byte chunks (the selector's d_swizzle_bytes)
  EXPECT_TRUE(sm90_bf16_config_legal(desc, c, hw, &why)) << why;
  // The same shapes for bf16 keep bf16's rules: block_k 64 and width 40 are fine there.
  GemmDesc bf16 = desc;
  bf16.a_dtype = bf16.b_dtype = DType::kBFloat16;
  c.block_k = 64, c.block_n = 40, c.swizzle_d_bytes = 0;
  EXPECT_TRUE(sm90_bf16_config_legal(bf16, c, hw, &why)) << why;
}

TEST(Int8GemmLegality, DescsOutsideTheRecipeAreRejected) {
  GemmDesc mn = int8_desc(512, 4096, 4096);
  mn.major_b = Major::kMNMajor;
  expect_invalid([&] { validate_desc(mn); }, "major_a", "K-major");
  GemmDesc fp32_d = int8_desc(512, 4096, 4096);
  fp32_d.d_dtype = DType::kFloat32;
  expect_invalid([&] { validate_desc(fp32_d); }, "d_dtype", "bf16 D");
  GemmDesc batched = int8_desc(512, 4096, 4096);
  batched.type = GemmType::kBatched, batched.num_groups = 2;
  expect_invalid([&] { validate_desc(batched); }, "type", "plain GEMM");
  expect_invalid([&] { validate_desc(int8_desc(512, 4096, 4104)); }, "k", "multiple of 16");
}

namespace {

struct Args {
  TensorView a = fake_matrix(kI8, 256, 512, 512), b = fake_matrix(kI8, 128, 512, 512);
  TensorView sa = fake_vector(DType::kFloat32, 256), sb = fake_vector(DType::kFloat32, 128);
  TensorView d = fake_matrix(DType::kBFloat16, 256, 128, 128);
  void call() const { int8_gemm_nt(a, b, sa, sb, d); }
};

}  // namespace

TEST(Int8GemmApi, RejectsWrongDtypes) {
  expect_edit_rejected<Args>([](Args& x) { x.a = fake_matrix(DType::kBFloat16, 256, 512, 512); }, "a", "int8");
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(DType::kFloat8E4M3, 128, 512, 512); }, "b", "int8");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kFloat32, 256, 128, 128); }, "d", "bf16");
  expect_edit_rejected<Args>([](Args& x) { x.sa = fake_vector(DType::kBFloat16, 256); }, "scale_a", "fp32");
  expect_edit_rejected<Args>([](Args& x) { x.sb = fake_vector(DType::kInt32, 128); }, "scale_b", "fp32");
}

TEST(Int8GemmApi, RejectsMismatchedShapesAndLayouts) {
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(kI8, 128, 256, 256); }, "b", "K=512");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kBFloat16, 256, 64, 64); }, "d", "N=128");
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(kI8, 128, 512, 1, 128); }, "b", "K-major");
  expect_edit_rejected<Args>([](Args& x) { x.a = fake_matrix(kI8, 256, 512, 1, 256); }, "a", "K-major");
  expect_edit_rejected<Args>([](Args& x) { x.sa = fake_vector(DType::kFloat32, 255); }, "scale_a", "[256]");
  expect_edit_rejected<Args>([](Args& x) { x.sb = fake_vector(DType::kFloat32, 128, 2); }, "scale_b", "contiguous");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kBFloat16, 256, 128, 1, 256); }, "d",
                             "contiguous rows");
  // K must give 16-byte rows for TMA; and past kInt8GemmMaxK the int32 sums could overflow.
  expect_edit_rejected<Args>(
      [](Args& x) { x.a = fake_matrix(kI8, 256, 520, 520), x.b = fake_matrix(kI8, 128, 520, 520); }, "k",
      "multiple of 16");
  expect_edit_rejected<Args>(
      [](Args& x) {
        const std::int64_t k = kInt8GemmMaxK + 17;
        x.a = fake_matrix(kI8, 256, k, k), x.b = fake_matrix(kI8, 128, k, k);
      },
      "k", "int32 sums");
}

TEST(Int8GemmApi, EmptyProblemsLaunchNothing) {
  // M = 0 writes nothing; with a null d no GPU call could have happened.
  Args args;
  args.a = fake_matrix(kI8, 0, 512, 512), args.sa = fake_vector(DType::kFloat32, 0),
  args.d = fake_matrix(DType::kBFloat16, 0, 128, 128);
  EXPECT_NO_THROW(args.call());
  const auto plan = api::plan_int8_gemm(args.a, args.b, args.sa, args.sb, args.d, 0);
  EXPECT_EQ(plan->work, api::LaunchPlan::Work::kNone);
  // K = 0: D is all zeros, written without a kernel.
  Args no_k;
  no_k.a = fake_matrix(kI8, 256, 0, 0), no_k.b = fake_matrix(kI8, 128, 0, 0);
  EXPECT_EQ(api::plan_int8_gemm(no_k.a, no_k.b, no_k.sa, no_k.sb, no_k.d, 0)->work, api::LaunchPlan::Work::kFill);
  // A valid problem plans a kernel of the int8 desc.
  const auto full = api::plan_int8_gemm(Args{}.a, Args{}.b, Args{}.sa, Args{}.sb, Args{}.d, 0);
  EXPECT_EQ(full->work, api::LaunchPlan::Work::kKernel);
  EXPECT_EQ(full->desc.a_dtype, kI8);
  EXPECT_EQ(full->desc.k, 512);
}
