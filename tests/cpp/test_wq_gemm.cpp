// The weight-only GEMM without a GPU: every kernel variant compiles for sm_90a without spills, the plan follows the
// ledger (fused at small M, dequantise + dense at large M, splits only where tiles leave SMs idle), and every bad
// argument is named before any CUDA call.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "expect_invalid.hpp"
#include "kernels/sm90_wq_gemm.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/weight_quant.hpp"

using namespace tilegemm;

namespace {

struct Packing {
  WeightFormat format;
  int group;
  bool zeros;
  DType act;
};

const Packing kPackings[] = {
    {WeightFormat::kInt4, 32, true, DType::kBFloat16},   {WeightFormat::kInt4, 64, false, DType::kBFloat16},
    {WeightFormat::kInt4, 128, true, DType::kFloat16},   {WeightFormat::kInt4, 128, false, DType::kBFloat16},
    {WeightFormat::kInt8, 0, false, DType::kBFloat16},   {WeightFormat::kInt8, 0, false, DType::kFloat16},
    {WeightFormat::kMxfp4, 32, false, DType::kBFloat16},
};

WeightLayout layout_of(const Packing& p, int n, int k) {
  return make_weight_layout(p.format, n, k, p.group, p.zeros, p.act);
}

class WqGemmCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(WqGemmCodegen, EveryPackingCompilesWithoutSpills) {
  set("DG_JIT_PTXAS_CHECK", "1");
  for (const Packing& p : kPackings) {
    const WeightLayout w = layout_of(p, 4096, 4096);
    for (int block_m : {8, 16, 64}) {
      for (int splits : {1, 2}) {
        WqGemmConfig c;
        c.block_m = block_m, c.stages = 4, c.num_splits = splits;
        const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, DType::kBFloat16, c);
        SCOPED_TRACE(spec.name);
        tilegemm::testing::expect_kernel_compiles(spec);
      }
    }
    const jit::KernelSpec dequant = kernels::sm90_wq_dequant_spec(w);
    SCOPED_TRACE(dequant.name);
    tilegemm::testing::expect_kernel_compiles(dequant);
  }
}

TEST_F(WqGemmCodegen, KGroupVariantsCompileWithoutSpills) {
  // Four sets of consumer warps (17 warps) cap a thread near 96 registers; ptxas used 42-96 (sm_90a), two sets
  // at 64 tokens 110-147.
  set("DG_JIT_PTXAS_CHECK", "1");
  for (const Packing& p : {kPackings[0], kPackings[2], kPackings[4], kPackings[6]}) {
    const WeightLayout w = layout_of(p, 4096, 4096);
    for (const auto& [block_m, groups] : {std::pair{8, 4}, {16, 4}, {32, 4}, {16, 2}, {64, 2}}) {
      for (int splits : {1, 2}) {
        WqGemmConfig c;
        c.block_m = block_m, c.stages = 4, c.num_splits = splits, c.k_groups = groups;
        const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, DType::kBFloat16, c);
        SCOPED_TRACE(spec.name);
        EXPECT_NE(spec.name.find(fmt::format("_g{}_", groups)), std::string::npos);
        EXPECT_NE(spec.source.find(fmt::format("__launch_bounds__({}, 1)", wq::threads(groups))), std::string::npos);
        tilegemm::testing::expect_kernel_compiles(spec);
      }
    }
  }
  WqGemmConfig masked;
  masked.block_m = 16, masked.stages = 4, masked.k_groups = 4;
  tilegemm::testing::expect_kernel_compiles(kernels::sm90_wq_gemm_spec(
      layout_of(kPackings[4], 4096, 4096), DType::kBFloat16, masked, GemmType::kMGroupedMasked));
}

TEST_F(WqGemmCodegen, GroupedVariantsCompile) {
  set("DG_JIT_PTXAS_CHECK", "1");
  for (const Packing& p : {kPackings[1], kPackings[4], kPackings[6]}) {
    const WeightLayout w = layout_of(p, 4096, 4096);
    for (GemmType type : {GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
      WqGemmConfig c;
      c.block_m = type == GemmType::kMGroupedMasked ? 16 : 64, c.stages = 4, c.num_splits = 1;
      const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, DType::kBFloat16, c, type);
      SCOPED_TRACE(spec.name);
      tilegemm::testing::expect_kernel_compiles(spec);
    }
  }
}

TEST_F(WqGemmCodegen, OutputDtypesCompile) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const WeightLayout w = layout_of(kPackings[0], 4096, 4096);
  for (DType d : {DType::kFloat16, DType::kFloat32}) {
    WqGemmConfig c;
    c.block_m = 16, c.stages = 4, c.num_splits = 1;
    const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, d, c);
    SCOPED_TRACE(spec.name);
    tilegemm::testing::expect_kernel_compiles(spec);
  }
}

const HardwareModel kH200 = hardware_preset("h200");

TEST(WqLedger, PackedBytesAndFloors) {
  // int4 g128 4096 x 4096: codes 4096·4096/2 = 8 MiB, bf16 scales 4096·32·2 = 256 KiB; the dense weight 32 MiB.
  const WeightLayout w = layout_of(kPackings[3], 4096, 4096);
  const WqLedger l = wq_ledger(1, w, DType::kBFloat16, kH200);
  EXPECT_DOUBLE_EQ(l.packed_bytes, 8.0 * 1024 * 1024 + 256 * 1024);
  EXPECT_DOUBLE_EQ(l.dense_weight_bytes, 32.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(l.flops, 2.0 * 4096 * 4096);
  EXPECT_NEAR(l.dense_memory_floor_us / l.memory_floor_us, 3.88, 0.01);  // the speed-up reading fewer bytes allows
  // int8 adds its fp32 channel scales; MXFP4's exponents are one byte per 32 weights.
  EXPECT_DOUBLE_EQ(wq_ledger(1, layout_of(kPackings[4], 4096, 4096), DType::kBFloat16, kH200).packed_bytes,
                   16.0 * 1024 * 1024 + 4 * 4096);
  EXPECT_DOUBLE_EQ(wq_ledger(1, layout_of(kPackings[6], 4096, 4096), DType::kBFloat16, kH200).packed_bytes,
                   8.0 * 1024 * 1024 + 4096 * 128);
  // The decode costs instructions per weight; scaling products per chunk saves the per-weight multiply.
  EXPECT_LT(wq_decode_ops_per_weight(WeightFormat::kInt4, false), wq_decode_ops_per_weight(WeightFormat::kInt4, true));
  EXPECT_GT(l.decode_floor_us, 0);
}

TEST(WqGemmConfig, SmallMDecodesInRegistersLargeMDequantises) {
  const WeightLayout w = layout_of(kPackings[3], 4096, 4096);
  const WqGemmConfig decode = select_wq_gemm_config(1, w, DType::kBFloat16, kH200, kH200.num_sms);
  EXPECT_TRUE(decode.fused);
  EXPECT_EQ(decode.block_m, 8);
  EXPECT_EQ(decode.grid, 64 * decode.num_splits);
  EXPECT_LT(decode.fused_us, decode.dequant_us);
  // 16 row blocks of 64 cannot keep enough bytes in flight to pull the bandwidth: a K split adds CTAs.
  const WeightLayout narrow = layout_of(kPackings[3], 1024, 4096);
  const WqGemmConfig split = select_wq_gemm_config(1, narrow, DType::kBFloat16, kH200, kH200.num_sms);
  EXPECT_GT(split.num_splits, 1);
  EXPECT_EQ(split.grid, 16 * split.num_splits);
  // Never faster than the DRAM floor of the packed bytes.
  EXPECT_GT(decode.fused_us, wq_ledger(1, w, DType::kBFloat16, kH200).memory_floor_us);

  const WqGemmConfig prefill = select_wq_gemm_config(4096, w, DType::kBFloat16, kH200, kH200.num_sms);
  EXPECT_FALSE(prefill.fused);
  EXPECT_LT(prefill.dequant_us, prefill.fused_us);
  // fp16 activations have no dense path (the BF16 GEMM takes bf16 only): fused at every M.
  const WeightLayout half = layout_of(kPackings[2], 4096, 4096);
  const WqGemmConfig fp16 = select_wq_gemm_config(4096, half, DType::kFloat16, kH200, kH200.num_sms);
  EXPECT_TRUE(fp16.fused);
  EXPECT_EQ(fp16.dequant_us, 0);
  EXPECT_EQ(fp16.block_m, 64);
}

TEST(WqGemmConfig, GroupedRunFusedWithoutSplitsOneCtaRowPerMaskedExpert) {
  const WeightLayout w = layout_of(kPackings[6], 2048, 7168);  // MXFP4 experts, 32 row blocks of 64
  const WqGemmConfig masked =
      select_wq_gemm_config(8, w, DType::kBFloat16, kH200, kH200.num_sms, GemmType::kMGroupedMasked, 32);
  EXPECT_TRUE(masked.fused);
  EXPECT_EQ(masked.num_splits, 1);
  EXPECT_EQ(masked.block_m, 8);
  EXPECT_EQ(masked.grid, 32);
  EXPECT_EQ(masked.grid_y, 32);
  EXPECT_DOUBLE_EQ(masked.packed_bytes, 32 * wq_ledger(8, w, DType::kBFloat16, kH200).packed_bytes);
  // Contiguous: 8 experts of 512 rows each: 64-row token blocks, one CTA per (token block, row block).
  const WqGemmConfig contiguous =
      select_wq_gemm_config(4096, w, DType::kBFloat16, kH200, kH200.num_sms, GemmType::kMGroupedContiguous, 8);
  EXPECT_TRUE(contiguous.fused);
  EXPECT_EQ(contiguous.block_m, 64);
  EXPECT_EQ(contiguous.grid, 32 * 64);
  EXPECT_EQ(contiguous.grid_y, 1);
  test_util::expect_invalid(
      [&] { select_wq_gemm_config(8, w, DType::kBFloat16, kH200, 132, GemmType::kKGroupedContiguous, 2); }, "type");
  test_util::expect_invalid([&] { select_wq_gemm_config(8, w, DType::kInt8, kH200, 132); }, "d_dtype");
}

TEST(WqGemmConfig, DecodeSpreadsOverEverySmAtTheResidentWarpsIssueRate) {
  // ncu (H100): a launch of 64 CTAs, one consumer warp per scheduler, issued once per ~3.35 cycles and drew 46% of
  // DRAM. The model prices that, so at decode sizes the plan takes splits until every SM streams.
  const HardwareModel h100 = hardware_preset("h100-sxm");
  const WeightLayout w = layout_of(kPackings[4], 4096, 7168);  // int8, 64 row blocks
  test_util::ScopedEnv one_split("TILEGEMM_CONFIG_FILTER", "split_k=1");
  const WqGemmConfig unsplit = select_wq_gemm_config(1, w, DType::kBFloat16, h100, h100.num_sms);
  EXPECT_EQ(unsplit.grid, 64);
  EXPECT_GT(unsplit.fused_us, 17.0);  // measured 19.4 µs; the issue-blind model had said 8.1
  EXPECT_LT(unsplit.fused_us, 23.0);
  test_util::ScopedEnv none("TILEGEMM_CONFIG_FILTER", nullptr);
  const WqGemmConfig decode = select_wq_gemm_config(1, w, DType::kBFloat16, h100, h100.num_sms);
  EXPECT_GE(decode.grid, h100.num_sms - 4);
  EXPECT_GT(decode.num_splits, 1);
  EXPECT_LT(decode.fused_us, 0.75 * unsplit.fused_us);
  EXPECT_LE(decode.grid, h100.num_sms);  // a second CTA per SM was slower (heuristics.hpp)
}

TEST(WqGemmConfig, ConfigFilterPinsTokenBlockStagesSplitsAndKGroups) {
  const WeightLayout w = layout_of(kPackings[6], 2112, 7168);  // MXFP4
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=4,split_k=2");
    const WqGemmConfig c = select_wq_gemm_config(16, w, DType::kBFloat16, kH200, kH200.num_sms);
    EXPECT_TRUE(c.fused);
    EXPECT_EQ(c.k_groups, 4);
    EXPECT_EQ(c.num_splits, 2);
    EXPECT_EQ(c.stages % 4, 0);
    EXPECT_EQ(c.smem_bytes, wq::smem_bytes(w.format, w.group_size, w.has_zeros, 16, c.stages, 4));
    EXPECT_GT(c.smem_bytes, wq::smem_bytes(w.format, w.group_size, w.has_zeros, 16, c.stages, 1));  // the scratch
    EXPECT_NE(format_wq_gemm_config(16, w, c).find("splits=2 k_groups=4"), std::string::npos);
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "block_m=32,stages=4,k_groups=2");
    const WqGemmConfig c =
        select_wq_gemm_config(1, w, DType::kBFloat16, kH200, kH200.num_sms, GemmType::kMGroupedMasked, 8);
    EXPECT_EQ(c.block_m, 32);
    EXPECT_EQ(c.stages, 4);
    EXPECT_EQ(c.k_groups, 2);
    EXPECT_EQ(c.num_splits, 1);  // grouped GEMMs never split
  }
  // Four sets hold a thread to ~96 registers: 64-token blocks take two at most; rings of whole turns.
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=4");
    test_util::expect_invalid([&] { select_wq_gemm_config(64, w, DType::kBFloat16, kH200, kH200.num_sms); },
                              "TILEGEMM_CONFIG_FILTER", "K groups 4 up to 32 tokens");
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "k_groups=4,stages=6");
    test_util::expect_invalid([&] { select_wq_gemm_config(8, w, DType::kBFloat16, kH200, kH200.num_sms); },
                              "TILEGEMM_CONFIG_FILTER", "stages a multiple of k_groups");
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "block_m=24");
    test_util::expect_invalid([&] { select_wq_gemm_config(8, w, DType::kBFloat16, kH200, kH200.num_sms); },
                              "TILEGEMM_CONFIG_FILTER", "block_m 8, 16, 32 or 64");
  }
}

TEST(WqGemmConfig, PrintsItsPlan) {
  const WeightLayout w = layout_of(kPackings[0], 4096, 7168);
  const std::string line = format_wq_gemm_config(16, w, select_wq_gemm_config(16, w, DType::kBFloat16, kH200, 132));
  for (const char* part : {"m=16", "n=4096", "k=7168", "int4 g32 zeros", "bf16", "fused", "block_m=16"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
}

// Arguments are checked before any CUDA call: fake (aligned) pointers, no GPU needed.
struct FakeWeight {
  WeightLayout layout = make_weight_layout(WeightFormat::kInt4, 256, 512, 128, true, DType::kBFloat16);
  PackedWeightView view() const {
    return {layout, reinterpret_cast<void*>(0x100000), reinterpret_cast<void*>(0x200000),
            reinterpret_cast<void*>(0x300000), nullptr};
  }
};

TensorView fake_matrix(DType dtype, std::int64_t rows, std::int64_t cols, std::uintptr_t at = 0x400000) {
  return TensorView::contiguous(reinterpret_cast<void*>(at), dtype, {rows, cols});
}

TEST(WqGemmValidation, NamesEachBadArgument) {
  const FakeWeight fw;
  const TensorView a = fake_matrix(DType::kBFloat16, 8, 512), d = fake_matrix(DType::kBFloat16, 8, 256, 0x500000);
  using test_util::expect_invalid;
  expect_invalid([&] { wq_gemm_nt(fake_matrix(DType::kFloat16, 8, 512), fw.view(), d); }, "a", "bf16");
  expect_invalid([&] { wq_gemm_nt(fake_matrix(DType::kBFloat16, 8, 256), fw.view(), d); }, "a", "[M, 512]");
  expect_invalid([&] { wq_gemm_nt(a, fw.view(), fake_matrix(DType::kBFloat16, 8, 255)); }, "d", "[8, 256]");
  expect_invalid([&] { wq_gemm_nt(a, fw.view(), fake_matrix(DType::kInt32, 8, 256)); }, "d", "fp32");
  PackedWeightView v = fw.view();
  v.data = reinterpret_cast<void*>(0x100008);
  expect_invalid([&] { wq_gemm_nt(a, v, d); }, "w.data", "16-byte aligned");
  v = fw.view(), v.zeros = nullptr;
  expect_invalid([&] { wq_gemm_nt(a, v, d); }, "w.zeros");
  v = fw.view(), v.channel_scales = reinterpret_cast<const float*>(0x600000);
  expect_invalid([&] { wq_gemm_nt(a, v, d); }, "w.channel_scales", "only int8");
  v = fw.view(), v.layout.k_pad = 640;
  expect_invalid([&] { wq_gemm_nt(a, v, d); }, "w", "k_pad 512");
  v = fw.view(), v.layout.group_size = 48;
  expect_invalid([&] { wq_gemm_nt(a, v, d); }, "group_size");
  expect_invalid([&] { wq_dequantize(fw.view(), fake_matrix(DType::kBFloat16, 256, 511)); }, "out", "[256, 512]");
}

TEST(WqGemmValidation, GroupedNameEachBadArgument) {
  FakeWeight fw;
  PackedWeightView v = fw.view();
  v.num_experts = 4;
  using test_util::expect_invalid;
  const TensorView a2 = fake_matrix(DType::kBFloat16, 256, 512), d2 = fake_matrix(DType::kBFloat16, 256, 256, 0x500000);
  const TensorView layout = TensorView::contiguous(reinterpret_cast<void*>(0x700000), DType::kInt32, {256});
  expect_invalid([&] { wq_m_grouped_gemm_nt_contiguous(a2, v, d2, fake_matrix(DType::kInt32, 1, 256)); },
                 "grouped_layout");
  expect_invalid([&] { wq_m_grouped_gemm_nt_contiguous(fake_matrix(DType::kBFloat16, 200, 512), v, d2, layout); }, "d");
  expect_invalid([&] { wq_gemm_nt(a2, v, d2); }, "w.num_experts");
  TensorView a3 = TensorView::contiguous(reinterpret_cast<void*>(0x400000), DType::kBFloat16, {4, 32, 512});
  TensorView d3 = TensorView::contiguous(reinterpret_cast<void*>(0x500000), DType::kBFloat16, {4, 32, 256});
  const TensorView masked = TensorView::contiguous(reinterpret_cast<void*>(0x700000), DType::kInt32, {4});
  expect_invalid([&] { wq_m_grouped_gemm_nt_masked(a3, v, d3, masked, 0); }, "expected_m");
  expect_invalid(
      [&] {
        wq_m_grouped_gemm_nt_masked(
            TensorView::contiguous(reinterpret_cast<void*>(0x400000), DType::kBFloat16, {3, 32, 512}), v, d3, masked,
            8);
      },
      "a", "[4, M_max, 512]");
  expect_invalid(
      [&] {
        wq_m_grouped_gemm_nt_masked(
            a3, v, TensorView::contiguous(reinterpret_cast<void*>(0x500000), DType::kBFloat16, {4, 31, 256}), masked,
            8);
      },
      "d", "[4, 32, 256]");
  expect_invalid([&] { wq_m_grouped_gemm_nt_masked(a3, v, d3, layout, 8); }, "masked_m");
}

TEST(WqGemmValidation, AValidCallWithoutAGpuSaysSo) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) GTEST_SKIP() << "a GPU is present (fake pointers)";
  const FakeWeight fw;
  EXPECT_THROW(
      wq_gemm_nt(fake_matrix(DType::kBFloat16, 8, 512), fw.view(), fake_matrix(DType::kBFloat16, 8, 256, 0x500000)),
      RuntimeError);
}

}  // namespace
