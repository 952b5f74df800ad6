// fp8_gemm_1d2d_skip_head_mid (DeepGEMM's fp8_gemm_nt_skip_head_mid) without a GPU: the checks name the argument,
// legality and the selector take only tiles as wide as a divisor of the head parts, the plan carries the splits into
// its kernel (name, Config fields), a plain GEMM's generated source has none of it, and the kernels compile for
// sm_90a through the JIT's NVRTC path with no spills. Nothing here runs a kernel: views point at unused addresses.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "api/launch_plan.hpp"
#include "expect_invalid.hpp"
#include "kernels/sm90_fp8_gemm.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"

using namespace tilegemm;
using test_util::expect_invalid;

namespace {

constexpr std::uintptr_t kBase = 0x7f0000000000;  // never dereferenced
constexpr DType kBf16 = DType::kBFloat16, kFp8 = DType::kFloat8E4M3, kFp32 = DType::kFloat32;
constexpr HeadSplits kDeepGemmSplits{128, 64, 128};  // DeepGEMM's test_gemm_skip_head_mid

TensorView mat(std::uintptr_t ptr, DType t, std::int64_t rows, std::int64_t cols, std::int64_t rs,
               std::int64_t cs = 1) {
  return TensorView::matrix(reinterpret_cast<void*>(ptr), t, rows, cols, rs, cs);
}

// A valid call: a [M, K], b [N, K] with two heads of 128 + 128 columns, d [M, N + 2 * 64].
struct Call {
  std::int64_t m = 64, n = 512, k = 256;
  TensorView a = mat(kBase, kFp8, m, k, k);
  TensorView sfa = mat(kBase + 0x100000, kFp32, m, k / 128, 1, m);  // per token, MN-major
  TensorView b = mat(kBase + 0x200000, kFp8, n, k, k);
  TensorView sfb = mat(kBase + 0x300000, kFp32, n / 128, k / 128, k / 128);  // per 128x128 block
  TensorView d = mat(kBase + 0x400000, kBf16, m, 640, 640);
  api::Plan plan(const HeadSplits& h = kDeepGemmSplits) const {
    return api::plan_fp8_gemm_skip_head_mid(a, sfa, b, sfb, d, h, 0);
  }
};

GemmDesc skip_desc(int m, int n, int k, const HeadSplits& h) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  desc.a_dtype = desc.b_dtype = kFp8;
  desc.d_dtype = kBf16;
  desc.head_splits = h;
  return desc;
}

}  // namespace

TEST(Fp8SkipHeadMid, AValidCallPlansTheRemappedGemm) {
  const Call c;
  const api::Plan plan = c.plan();
  EXPECT_EQ(plan->desc.n, 512);  // the GEMM's N: d's skipped columns are no work
  EXPECT_EQ(plan->desc.head_splits, kDeepGemmSplits);
  EXPECT_EQ(plan->desc.type, GemmType::kNormal);
  // Left or right alone may be 0: every head is then one part plus the skipped columns.
  Call left_only = c;
  left_only.d = mat(kBase + 0x400000, kBf16, c.m, 512 + 4 * 32, 512 + 4 * 32);
  EXPECT_NO_THROW(left_only.plan({128, 32, 0}));
}

TEST(Fp8SkipHeadMid, BadHeadSplitsNameThemselves) {
  const Call c;
  expect_invalid([&] { c.plan({0, 0, 0}); }, "head_splits", "left + right > 0");
  expect_invalid([&] { c.plan({0, 64, 0}); }, "head_splits", "left + right > 0");
  expect_invalid([&] { c.plan({-128, 64, 128}); }, "head_splits", "each >= 0");
  expect_invalid([&] { c.plan({128, -64, 128}); }, "head_splits", "got (128, -64, 128)");
  expect_invalid([&] { c.plan({128, 64, 64}); }, "head_splits", "dividing N = 512");
  // left + right = 16 divides N, but no tile width (a multiple of 8 from 16 up) divides 8.
  expect_invalid([&] { c.plan({8, 0, 8}); }, "head_splits", "tile width");
}

TEST(Fp8SkipHeadMid, BadTensorsNameThemselves) {
  const Call c;
  Call narrow = c;  // d as wide as the GEMM: the mid columns missing
  narrow.d = mat(kBase + 0x400000, kBf16, c.m, c.n, c.n);
  expect_invalid([&] { narrow.plan(); }, "d", "N + N / (left + right) * mid = 640");
  Call fp32 = c;  // SM90 runs the 1D2D recipe: bf16 D only
  fp32.d = mat(kBase + 0x400000, kFp32, c.m, 640, 640);
  expect_invalid([&] { fp32.plan(); }, "d", "bf16");
  Call columns = c;  // not N-major
  columns.d = mat(kBase + 0x400000, kBf16, c.m, 640, 1, c.m);
  expect_invalid([&] { columns.plan(); }, "d");
  Call unaligned = c;  // a 16-byte TMA row stride is D's own constraint
  unaligned.d = mat(kBase + 0x400000, kBf16, c.m, 640, 644);
  expect_invalid([&] { unaligned.plan(); }, "d", "16");
  Call batched = c;
  batched.a = TensorView::batched(reinterpret_cast<void*>(kBase), kFp8, 2, c.m, c.k, c.m * c.k, c.k);
  expect_invalid([&] { batched.plan(); }, "a", "2-D");
  Call empty_k = c;
  empty_k.a = mat(kBase, kFp8, c.m, 0, 16);
  empty_k.b = mat(kBase + 0x200000, kFp8, c.n, 0, 16);
  empty_k.sfa = mat(kBase + 0x100000, kFp32, c.m, 0, 1, c.m);
  empty_k.sfb = mat(kBase + 0x300000, kFp32, c.n / 128, 0, 1);
  expect_invalid([&] { empty_k.plan(); }, "a", "K > 0");
  Call per_token_b = c;  // the 1D2D recipe's B scales are per 128x128 block
  per_token_b.sfb = mat(kBase + 0x300000, kFp32, c.n, c.k / 128, 1, c.n);
  expect_invalid([&] { per_token_b.plan(); }, "sfb", "per-block");
  Call e4m3_d = c;
  e4m3_d.d = mat(kBase + 0x400000, kFp8, c.m, 640, 640);
  expect_invalid([&] { e4m3_d.plan(); }, "d");
}

// Only a dense 1D2D desc can carry head splits; the rules name them.
TEST(Fp8SkipHeadMid, ValidateDescKeepsHeadSplitsToDense1D2D) {
  GemmDesc one_d_one_d = skip_desc(64, 512, 256, kDeepGemmSplits);
  one_d_one_d.d_dtype = kFp32;
  expect_invalid([&] { validate_desc(one_d_one_d); }, "head_splits", "1D2D");
  GemmDesc batched = skip_desc(64, 512, 256, kDeepGemmSplits);
  batched.type = GemmType::kBatched, batched.num_groups = 2;
  expect_invalid([&] { validate_desc(batched); }, "head_splits", "dense");
  GemmDesc bf16 = skip_desc(64, 512, 256, kDeepGemmSplits);
  bf16.a_dtype = bf16.b_dtype = kBf16;
  expect_invalid([&] { validate_desc(bf16); }, "head_splits");
  EXPECT_NO_THROW(validate_desc(skip_desc(64, 512, 256, kDeepGemmSplits)));
}

TEST(Fp8SkipHeadMid, TileWidthsDivideBothHeadParts) {
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({128, 64, 128}), 128);
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({64, 0, 192}), 64);
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({256, 0, 256}), 256);
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({0, 16, 384}), 192);  // 384 = 2 x 192; 1D2D runs 192-wide tiles
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({24, 8, 48}), 24);
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({8, 0, 8}), 0);
  EXPECT_EQ(sm90_fp8_head_split_max_block_n({8 * 37, 0, 8 * 37}), 0);  // divisors 8 and 296 only

  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = skip_desc(4096, 32768, 512, kDeepGemmSplits);
  int legal = 0;
  for (const Candidate& cand : enumerate_candidates(desc, hw)) {
    if (!cand.legal) continue;
    ++legal;
    EXPECT_EQ(128 % cand.config.block_n, 0) << to_string(cand.config);
  }
  EXPECT_GT(legal, 0);
  GemmConfig wide;
  wide.block_m = 128, wide.num_math_warpgroups = 2, wide.block_n = 192, wide.block_k = 128, wide.stages = 3;
  wide.num_sms = hw.num_sms;
  std::string why;
  EXPECT_FALSE(sm90_fp8_config_legal(desc, wide, hw, &why));
  EXPECT_NE(why.find("head_splits"), std::string::npos) << why;
  GemmDesc plain = desc;
  plain.head_splits = {};
  EXPECT_TRUE(sm90_fp8_config_legal(plain, wide, hw, &why)) << why;
}

// DeepGEMM's shapes get tiles inside one head part; parts sharing only odd multiples of 8 get such a width (which the
// selector otherwise does not offer); the selector's cache never hands a plain problem's pick to a split one.
TEST(Fp8SkipHeadMid, SelectorPicksTilesInsideOneHeadPart) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {128, 4096})
    for (int n : {32768, 8192}) {
      const GemmDesc desc = skip_desc(m, n, 512, kDeepGemmSplits);
      const GemmConfig c = select_config(desc, hw);
      SCOPED_TRACE(to_string(desc) + " -> " + to_string(c));
      EXPECT_EQ(128 % c.block_n, 0);
      std::string why;
      EXPECT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << why;
    }
  EXPECT_EQ(select_config(skip_desc(256, 3 * 72, 1024, {24, 8, 48}), hw).block_n, 24);

  GemmDesc plain = skip_desc(4096, 2048, 7168, {});
  const int plain_block_n = select_config(plain, hw).block_n;
  ASSERT_GT(plain_block_n, 32) << "the case needs a plain pick wider than the split one";
  EXPECT_LE(select_config(skip_desc(4096, 2048, 7168, {32, 0, 32}), hw).block_n, 32);
}

namespace {

// A fresh JIT cache per test; ptxas spills or local memory fail the compile.
class Fp8SkipHeadMidCodegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");
  }
};

}  // namespace

// The plan's kernel carries the splits (name and Config fields); the plain plan of the same GEMM has neither, so
// neither kernel can be served for the other.
TEST_F(Fp8SkipHeadMidCodegen, PlansNameTheirOwnKernels) {
  const HardwareModel hw = hardware_preset("h200");
  const Call c;
  const auto split = api::plan_kernel_spec(*c.plan(), hw);
  Call plain_call = c;
  plain_call.d = mat(kBase + 0x400000, kBf16, c.m, c.n, c.n);
  const auto plain = api::plan_kernel_spec(
      *api::plan_fp8_gemm(plain_call.a, plain_call.sfa, plain_call.b, plain_call.sfb, plain_call.d, nullptr, false, 0),
      hw);
  ASSERT_TRUE(split && plain);
  EXPECT_NE(split->name.find("_heads128_64_128"), std::string::npos) << split->name;
  EXPECT_NE(split->source.find("static constexpr int kHeadLeft = 128;\n  static constexpr int kHeadMid = 64;\n"
                               "  static constexpr int kHeadRight = 128;\n};"),
            std::string::npos)
      << split->source;
  EXPECT_EQ(plain->name.find("_heads"), std::string::npos) << plain->name;
  EXPECT_EQ(plain->source.find("kHead"), std::string::npos) << plain->source;
  EXPECT_NE(plain->source.find("  static constexpr bool kGroupMaps = false;\n};"), std::string::npos);
}

// DeepGEMM's test shapes on the selector's tiles, and an odd-eighth width, compile for sm_90a without spills.
TEST_F(Fp8SkipHeadMidCodegen, KernelsCompileWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  for (const GemmDesc& desc :
       {skip_desc(128, 32768, 512, kDeepGemmSplits), skip_desc(4096, 32768, 512, kDeepGemmSplits),
        skip_desc(256, 3 * 72, 1024, {24, 8, 48})}) {
    const GemmConfig config = select_config(desc, hw);
    const jit::KernelSpec spec = kernels::sm90_fp8_gemm_spec(desc, config);
    SCOPED_TRACE(spec.name);
    EXPECT_NE(spec.source.find("kHeadMid"), std::string::npos);
    std::shared_ptr<const jit::CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
  }
}
