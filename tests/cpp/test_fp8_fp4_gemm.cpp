// The SM90 FP8 x FP4 GEMM (tilegemm/fp8_fp4_gemm.hpp) without a GPU: the e2m1 -> e4m3 placement it decodes with is
// exact for every code, its kernel variants compile for sm_90a without spills, the config fills the SMs, and bad
// arguments throw InvalidArgument naming the argument before any CUDA call.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "expect_invalid.hpp"
#include "fake_views.hpp"
#include "kernels/sm90_fp8_fp4_gemm.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/fp8_quant.hpp"
#include "tilegemm/hw.hpp"

using namespace tilegemm;
using test_util::expect_edit_rejected;
using test_util::expect_invalid;
using test_util::fake_batched;
using test_util::fake_matrix;
using test_util::fake_vector;

namespace {

double e2m1_value(int code) {
  static constexpr double kMagnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * kMagnitude[code & 7];
}

}  // namespace

// The byte arithmetic of prim::e2m1x8_to_e4m3x8, per code: ((n << 2) & 0x1c) | ((n << 4) & 0x80) of the code's
// byte n is an e4m3 byte worth 2^-6 times the code (its subnormal 0.5 included, -0 staying -0), so the decode adds no
// rounding; the byte's high nibble (another code) must not leak in: every value of it is tried.
TEST(Fp8Fp4Decode, EveryE2m1CodeIsAnExactE4m3Byte) {
  for (unsigned code = 0; code < 16; ++code)
    for (unsigned other = 0; other < 16; ++other) {
      const unsigned n = code | (other << 4);
      const unsigned byte = ((n << 2) & 0x1cu) | ((n << 4) & 0x80u);
      const float value = e4m3_to_float(static_cast<std::uint8_t>(byte));
      EXPECT_EQ(static_cast<double>(value), std::ldexp(e2m1_value(static_cast<int>(code)), -6)) << "code " << code;
      EXPECT_EQ(std::signbit(value), code >= 8) << "code " << code;
    }
}

class Fp8Fp4Codegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");  // spills or local memory fail the compile
  }
};

TEST_F(Fp8Fp4Codegen, EveryTokenBlockOutputAndSplitModeCompiles) {
  for (int block_m : {8, 16, 32, 64})
    for (DType d : {DType::kBFloat16, DType::kFloat32})
      for (int splits : {1, 4}) {
        Fp8Fp4GemmConfig c;
        c.block_m = block_m, c.stages = 4, c.num_splits = splits;
        const jit::KernelSpec spec = kernels::sm90_fp8_fp4_gemm_spec(d, c);
        SCOPED_TRACE(spec.name);
        EXPECT_EQ(spec.entry, "sm90_fp8_fp4_gemm_impl");
        std::shared_ptr<const jit::CompiledKernel> kernel;
        ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
        EXPECT_GT(kernel->cubin().size(), 1000u);
      }
}

TEST_F(Fp8Fp4Codegen, MaskedExpertsCompile) {
  for (int block_m : {8, 64}) {
    Fp8Fp4GemmConfig c;
    c.block_m = block_m, c.stages = 6, c.experts = 32;
    const jit::KernelSpec spec = kernels::sm90_fp8_fp4_gemm_spec(DType::kBFloat16, c);
    SCOPED_TRACE(spec.name);
    EXPECT_NE(spec.source.find(", true, false>(\n      params)"), std::string::npos)
        << spec.source;  // kMasked, not kMx
    ASSERT_NO_THROW(jit::get_kernel(spec));
  }
}

TEST_F(Fp8Fp4Codegen, MxFp8VariantsCompile) {
  for (int block_m : {8, 32, 64})
    for (int splits : {1, 4}) {
      Fp8Fp4GemmConfig c;
      c.block_m = block_m, c.stages = 4, c.num_splits = splits, c.mx = true;
      const jit::KernelSpec spec = kernels::sm90_fp8_fp4_gemm_spec(DType::kBFloat16, c);
      SCOPED_TRACE(spec.name);
      EXPECT_EQ(spec.entry, "sm90_mxfp8_gemm_impl");
      ASSERT_NO_THROW(jit::get_kernel(spec));
    }
}

TEST_F(Fp8Fp4Codegen, KGroupVariantsCompileWithoutSpills) {
  // ptxas (sm_90a) spills past these: four sets over 16 tokens (MXFP8: 8, unsplit), two sets at 32 tokens with the
  // split sum (FP8 x FP4).
  set("DG_JIT_PTXAS_CHECK", "1");
  struct Variant {
    bool mx;
    int block_m, groups;
    bool split_too;
  };
  for (const Variant& v : {Variant{false, 8, 4, true},
                           {false, 16, 4, true},
                           {false, 16, 2, true},
                           {false, 32, 2, false},
                           {true, 8, 4, false},
                           {true, 16, 2, true},
                           {true, 32, 2, true}}) {
    for (int splits : {1, 2}) {
      if (splits > 1 && !v.split_too) continue;
      Fp8Fp4GemmConfig c;
      c.block_m = v.block_m, c.stages = 4, c.num_splits = splits, c.mx = v.mx, c.k_groups = v.groups;
      const jit::KernelSpec spec = kernels::sm90_fp8_fp4_gemm_spec(DType::kBFloat16, c);
      SCOPED_TRACE(spec.name);
      EXPECT_NE(spec.name.find(fmt::format("_g{}_", v.groups)), std::string::npos);
      EXPECT_NE(spec.source.find(fmt::format("__launch_bounds__({}, 1)", fp8_fp4::threads(v.groups))),
                std::string::npos);
      tilegemm::testing::expect_kernel_compiles(spec);
    }
  }
  Fp8Fp4GemmConfig masked;
  masked.block_m = 16, masked.stages = 4, masked.experts = 32, masked.k_groups = 4;
  tilegemm::testing::expect_kernel_compiles(kernels::sm90_fp8_fp4_gemm_spec(DType::kBFloat16, masked));
}

TEST(Fp8Fp4Config, TokenBlocksStagesAndSplitsFillTheMachine) {
  const HardwareModel hw = hardware_preset("h200");
  // Decode: one 8-token block; N = 2112 has 33 row tiles, so four K splits put 132 CTAs on 132 SMs.
  Fp8Fp4GemmConfig c = select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms);
  EXPECT_EQ(c.block_m, 8);
  EXPECT_EQ(c.num_splits, 4);
  EXPECT_EQ(c.grid, 33 * 4);
  EXPECT_LE(c.smem_bytes, hw.smem_per_block_bytes);
  EXPECT_EQ(c.k_groups, 4);
  EXPECT_EQ(c.smem_bytes, fp8_fp4::smem_bytes(c.block_m, c.stages, false, 4));
  // 112 row tiles already fill the machine: no split. M = 100 takes two 64-token blocks.
  c = select_fp8_fp4_gemm_config(100, 7168, 2048, hw, hw.num_sms);
  EXPECT_EQ(c.block_m, 64);
  EXPECT_EQ(c.num_splits, 1);
  EXPECT_EQ(c.grid, 112 * 2);
  // A K of two stages keeps one split (each split overlaps at least two stages); set_num_sms limits the grid.
  EXPECT_EQ(select_fp8_fp4_gemm_config(16, 256, 512, hw, hw.num_sms).num_splits, 1);
  EXPECT_EQ(select_fp8_fp4_gemm_config(16, 256, 7168, hw, 8).num_splits, 2);
  EXPECT_GE(select_fp8_fp4_gemm_config(64, 4096, 7168, hw, hw.num_sms).stages, 4);
  expect_invalid([&] { select_fp8_fp4_gemm_config(16, 256, 200, hw, hw.num_sms); }, "k", "multiple of 128");
  // MXFP8 stages hold twice B's bytes and A's scales: fewer of them fit.
  const Fp8Fp4GemmConfig mx = select_fp8_fp4_gemm_config(64, 4096, 7168, hw, hw.num_sms, 0, true);
  EXPECT_TRUE(mx.mx);
  EXPECT_EQ(mx.smem_bytes, fp8_fp4::smem_bytes(64, mx.stages, true));
  EXPECT_LE(mx.smem_bytes, hw.smem_per_block_bytes);
  EXPECT_LT(mx.stages, select_fp8_fp4_gemm_config(64, 4096, 7168, hw, hw.num_sms).stages);
  // Masked experts: one CTA per (row block, expert), sized for the expected rows, never split.
  c = select_fp8_fp4_gemm_config(3, 4096, 7168, hw, hw.num_sms, 32);
  EXPECT_EQ(c.block_m, 8);
  EXPECT_EQ(c.experts, 32);
  EXPECT_EQ(c.grid, 64);
  EXPECT_EQ(c.num_splits, 1);
}

// The ledger: each operand's bytes once, the K loop's lane instructions per weight from the kernel's SASS count (45
// per 32-k step of a warp's 16 rows at 8 tokens, 11 more per 8 tokens), and the floors they set.
TEST(Fp8Fp4Config, ConfigFilterPinsKGroupsTokenBlockAndSplits) {
  const HardwareModel hw = hardware_preset("h200");
  // Unpinned: four sets for dense FP4 B up to 16 tokens (measured there), one for MXFP8, masked and 64 tokens.
  EXPECT_EQ(select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms).k_groups, 4);
  EXPECT_EQ(select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms, 0, true).k_groups, 1);
  EXPECT_EQ(select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms, 8).k_groups, 1);
  EXPECT_EQ(select_fp8_fp4_gemm_config(64, 2112, 7168, hw, hw.num_sms).k_groups, 1);
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=4,split_k=3,block_m=16");
    const Fp8Fp4GemmConfig c = select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms);
    EXPECT_EQ(c.k_groups, 4);
    EXPECT_EQ(c.num_splits, 3);
    EXPECT_EQ(c.block_m, 16);
    EXPECT_EQ(c.stages % 4, 0);
    EXPECT_EQ(c.grid, 33 * 3);
    EXPECT_EQ(c.smem_bytes, fp8_fp4::smem_bytes(16, c.stages, false, 4));
    EXPECT_GT(c.smem_bytes, fp8_fp4::smem_bytes(16, c.stages, false, 1));  // the sets' scratch
    EXPECT_NE(format_fp8_fp4_gemm_config(1, 2112, 7168, c).find("splits=3 k_groups=4"), std::string::npos);
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=4,stages=6");
    expect_invalid([&] { select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms); }, "TILEGEMM_CONFIG_FILTER",
                   "multiple of k_groups");
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=3");
    expect_invalid([&] { select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms); }, "TILEGEMM_CONFIG_FILTER",
                   "k_groups 1, 2 or 4");
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "split_k=29");
    expect_invalid([&] { select_fp8_fp4_gemm_config(1, 2112, 7168, hw, hw.num_sms); }, "TILEGEMM_CONFIG_FILTER",
                   "one per 256 k");
  }
}

TEST(Fp8Fp4Ledger, BytesInstructionsAndBound) {
  const HardwareModel hw = hardware_preset("h200");
  EXPECT_DOUBLE_EQ(fp8_fp4_ops_per_weight(8), 45.0 * 32 / 512);
  EXPECT_DOUBLE_EQ(fp8_fp4_ops_per_weight(64), (34.0 + 11 * 8) * 32 / 512);
  const Fp8Fp4Ledger l = fp8_fp4_ledger(1, 2112, 7168, 8, DType::kBFloat16, false, hw);
  // A 1 x 7168 e4m3 + its 56 scales, B 2112 x 3584 bytes + 2112 x 224 scales, D 1 x 2112 bf16.
  EXPECT_DOUBLE_EQ(l.bytes, 7168 + 56 * 4 + 2112.0 * 3584 + 2112.0 * 224 * 4 + 2112 * 2);
  EXPECT_DOUBLE_EQ(l.issue_ops, fp8_fp4_ops_per_weight(8) * 2112 * 7168);
  // A ragged N decodes its last block of 64 rows whole.
  EXPECT_DOUBLE_EQ(fp8_fp4_ledger(1, 2113, 7168, 8, DType::kBFloat16, false, hw).issue_ops,
                   fp8_fp4_ops_per_weight(8) * 2176 * 7168);
  EXPECT_STREQ(l.bound, "memory");
  // 64 tokens: the K loop outlasts B's read.
  EXPECT_STREQ(fp8_fp4_ledger(64, 2112, 7168, 64, DType::kBFloat16, false, hw).bound, "issue");
  // MXFP8 reads B at a byte per weight and A's scales per 32 k; masked experts multiply everything.
  const Fp8Fp4Ledger mx = fp8_fp4_ledger(1, 2112, 7168, 8, DType::kBFloat16, true, hw);
  EXPECT_DOUBLE_EQ(mx.bytes - l.bytes, 2112.0 * 3584 + (224 - 56) * 4);
  EXPECT_DOUBLE_EQ(fp8_fp4_ledger(1, 2112, 7168, 8, DType::kBFloat16, false, hw, 4).bytes, 4 * l.bytes);
  expect_invalid([&] { fp8_fp4_ledger(1, 2112, 7000, 8, DType::kBFloat16, false, hw); }, "k", "multiple of 128");
  expect_invalid([&] { fp8_fp4_ledger(1, 2112, 7168, 8, DType::kFloat16, false, hw); }, "d_dtype", "bf16 or fp32");
  expect_invalid([&] { fp8_fp4_ops_per_weight(12); }, "block_m", "whole n-tiles");
}

namespace {

struct Args {
  static constexpr std::int64_t m = 64, n = 256, k = 512;
  TensorView a = fake_matrix(DType::kFloat8E4M3, m, k, k), sfa = fake_matrix(DType::kFloat32, m, k / 128, k / 128);
  TensorView b = fake_matrix(DType::kInt8, n, k / 2, k / 2), sfb = fake_matrix(DType::kFloat32, n, k / 32, k / 32);
  TensorView d = fake_matrix(DType::kBFloat16, m, n, n);
  void call() const { fp8_fp4_gemm_nt(a, sfa, b, sfb, d); }
};

}  // namespace

TEST(Fp8Fp4Api, RejectsWrongDtypesShapesAndLayouts) {
  expect_edit_rejected<Args>([](Args& x) { x.a = fake_matrix(DType::kBFloat16, 64, 512, 512); }, "a", "fp8");
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(DType::kFloat8E4M3, 256, 256, 256); }, "b", "int8");
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(DType::kInt8, 256, 512, 512); }, "b", "K/2");
  expect_edit_rejected<Args>([](Args& x) { x.b = fake_matrix(DType::kInt8, 256, 256, 1, 256); }, "b",
                             "contiguous rows");
  expect_edit_rejected<Args>([](Args& x) { x.a = fake_matrix(DType::kFloat8E4M3, 64, 512, 520); }, "a", "16 bytes");
  expect_edit_rejected<Args>([](Args& x) { x.sfa = fake_matrix(DType::kFloat32, 64, 16, 16); }, "sfa", "[64, 4]");
  expect_edit_rejected<Args>([](Args& x) { x.sfa = fake_matrix(DType::kBFloat16, 64, 4, 4); }, "sfa", "fp32");
  expect_edit_rejected<Args>([](Args& x) { x.sfb = fake_matrix(DType::kFloat32, 256, 4, 4); }, "sfb", "[256, 16]");
  expect_edit_rejected<Args>([](Args& x) { x.sfb = fake_matrix(DType::kFloat32, 256, 16, 1, 256); }, "sfb",
                             "contiguous rows");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kFloat16, 64, 256, 256); }, "d", "bf16 or fp32");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kBFloat16, 64, 128, 128); }, "d", "[64, 256]");
  expect_edit_rejected<Args>([](Args& x) { x.d = fake_matrix(DType::kBFloat16, 64, 256, 1, 64); }, "d", "N contiguous");
  expect_edit_rejected<Args>(
      [](Args& x) {
        x.a = fake_matrix(DType::kFloat8E4M3, 64, 320, 320), x.b = fake_matrix(DType::kInt8, 256, 160, 160);
      },
      "a", "multiple of 128");
}

TEST(Fp8Fp4Api, EmptyOutputsLaunchNothingAndAValidCallNeedsAGpu) {
  Args empty;
  empty.a = fake_matrix(DType::kFloat8E4M3, 0, 512, 512), empty.sfa = fake_matrix(DType::kFloat32, 0, 4, 4);
  empty.d = fake_matrix(DType::kBFloat16, 0, 256, 256);
  EXPECT_NO_THROW(empty.call());
  test_util::expect_checks_pass([] { Args{}.call(); });
}

namespace {

struct Masked {
  static constexpr std::int64_t e = 4, m = 32, n = 256, k = 512;
  TensorView a = fake_batched(DType::kFloat8E4M3, e, m, k), sfa = fake_batched(DType::kFloat32, e, m, k / 128);
  TensorView b = fake_batched(DType::kInt8, e, n, k / 2), sfb = fake_batched(DType::kFloat32, e, n, k / 32);
  TensorView d = fake_batched(DType::kBFloat16, e, m, n), masked_m = fake_vector(DType::kInt32, e);
  int expected_m = 8;
  void call() const { m_grouped_fp8_fp4_gemm_nt_masked(a, sfa, b, sfb, d, masked_m, expected_m); }
};

}  // namespace

TEST(Fp8Fp4Api, MaskedRejectsWhatDoesNotMatchItsExperts) {
  expect_edit_rejected<Masked>([](Masked& x) { x.a = fake_matrix(DType::kFloat8E4M3, 32, 512, 512); }, "a", "3-D");
  expect_edit_rejected<Masked>([](Masked& x) { x.b = fake_batched(DType::kInt8, 3, 256, 256); }, "b", "4 experts");
  expect_edit_rejected<Masked>([](Masked& x) { x.sfb = fake_batched(DType::kFloat32, 4, 256, 4); }, "sfb",
                               "[4, 256, 16]");
  expect_edit_rejected<Masked>([](Masked& x) { x.sfa = fake_batched(DType::kFloat32, 4, 16, 4); }, "sfa", "[4, 32, 4]");
  expect_edit_rejected<Masked>([](Masked& x) { x.d = fake_batched(DType::kBFloat16, 4, 32, 128); }, "d",
                               "[4, 32, 256]");
  expect_edit_rejected<Masked>([](Masked& x) { x.masked_m = fake_vector(DType::kInt32, 3); }, "masked_m", "[G=4]");
  expect_edit_rejected<Masked>([](Masked& x) { x.expected_m = 0; }, "expected_m", "positive");
  expect_edit_rejected<Masked>([](Masked& x) { x.expected_m = 33; }, "expected_m", "M_max=32");
  Masked no_experts;
  no_experts.a = fake_batched(DType::kFloat8E4M3, 0, 32, 512), no_experts.b = fake_batched(DType::kInt8, 0, 256, 256);
  no_experts.sfa = fake_batched(DType::kFloat32, 0, 32, 4), no_experts.sfb = fake_batched(DType::kFloat32, 0, 256, 16);
  no_experts.d = fake_batched(DType::kBFloat16, 0, 32, 256), no_experts.masked_m = fake_vector(DType::kInt32, 0);
  EXPECT_NO_THROW(no_experts.call());
}

namespace {

struct MxArgs {
  static constexpr std::int64_t m = 64, n = 256, k = 512;
  TensorView a = fake_matrix(DType::kFloat8E4M3, m, k, k), sfa = fake_matrix(DType::kFloat32, m, k / 32, k / 32);
  TensorView b = fake_matrix(DType::kFloat8E4M3, n, k, k), sfb = fake_matrix(DType::kFloat32, n, k / 32, k / 32);
  TensorView d = fake_matrix(DType::kBFloat16, m, n, n);
  void call() const { mxfp8_gemm_nt(a, sfa, b, sfb, d); }
};

}  // namespace

TEST(Fp8Fp4Api, MxFp8RejectsWhatIsNotTheMxRecipe) {
  expect_edit_rejected<MxArgs>([](MxArgs& x) { x.b = fake_matrix(DType::kInt8, 256, 256, 256); }, "b", "fp8");
  expect_edit_rejected<MxArgs>([](MxArgs& x) { x.sfa = fake_matrix(DType::kFloat32, 64, 4, 4); }, "sfa", "[64, 16]");
  expect_edit_rejected<MxArgs>([](MxArgs& x) { x.sfa = fake_matrix(DType::kFloat32, 64, 16, 1, 64); }, "sfa",
                               "contiguous rows");
  expect_edit_rejected<MxArgs>([](MxArgs& x) { x.sfb = fake_matrix(DType::kFloat32, 256, 4, 4); }, "sfb", "[256, 16]");
  expect_edit_rejected<MxArgs>([](MxArgs& x) { x.b = fake_matrix(DType::kFloat8E4M3, 256, 256, 256); }, "b",
                               "[256, 512]");
  test_util::expect_checks_pass([] { MxArgs{}.call(); });
}
