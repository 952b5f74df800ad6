// Every scaling-factor layout kernel (device/tilegemm/kernels/sf_layout.cuh) compiles for sm_90a through the
// JIT on a machine without a GPU, with ptxas reporting no spills or local memory (DG_JIT_PTXAS_CHECK), under
// the entry name profilers find it by; and the GPU entry points reject bad tensors before touching CUDA.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "expect_invalid.hpp"
#include "layout/sf_layout_kernel.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/fp8_quant.hpp"

using namespace tilegemm;

namespace {

class Fp8LayoutCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(Fp8LayoutCodegen, EveryVariantCompilesWithoutSpills) {
  set("DG_JIT_PTXAS_CHECK", "1");
  jit::clear_memory_cache();  // so every kernel really goes through the compiler (and its ptxas check) here
  const std::int64_t compiles_before = jit::runtime_stats().compiles;
  std::set<std::string> names;
  for (layout::SfKernel which : layout::kAllSfKernels) {
    const jit::KernelSpec spec = layout::sf_layout_spec(which);
    SCOPED_TRACE(spec.name);
    const char* body = which == layout::SfKernel::kKGroupedPackUe8m0 ? "sf_k_grouped_pack(params)"
                       : which == layout::SfKernel::kPackUe8m0       ? "sf_layout_transform<true>"
                                                                     : "sf_layout_transform<false>";
    EXPECT_NE(spec.source.find(body), std::string::npos);
    std::shared_ptr<const jit::CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
    names.insert(spec.name);
  }
  EXPECT_EQ(jit::runtime_stats().compiles - compiles_before, 3);
  EXPECT_EQ(names.size(), 3u);
}

// DeepGEMM's tests time these kernels with bench_kineto, which matches substrings of the kernel names in the
// profiler table ('transpose' for the fp32 layout, 'pack_fp32_into_ue8m0' for both packers), and its GEMM
// tests count the kernels whose names contain 'gemm_'. The generated source must define the entry the spec
// names.
TEST(Fp8LayoutKernelNames, EntryPointsCarryDeepGemmsKernelNames) {
  const std::vector<std::pair<layout::SfKernel, std::string>> wanted = {
      {layout::SfKernel::kTransposeFp32, "transpose"},
      {layout::SfKernel::kPackUe8m0, "pack_fp32_into_ue8m0"},
      {layout::SfKernel::kKGroupedPackUe8m0, "pack_fp32_into_ue8m0"}};
  for (const auto& [which, substring] : wanted) {
    const jit::KernelSpec spec = layout::sf_layout_spec(which);
    SCOPED_TRACE(spec.entry);
    EXPECT_NE(spec.entry.find(substring), std::string::npos);
    EXPECT_EQ(spec.entry.find("gemm_"), std::string::npos);
    EXPECT_NE(spec.source.find("\n" + spec.entry + "("), std::string::npos) << spec.source;
  }
  // Only the fp32 layout matches 'transpose', so timing it finds exactly one kernel.
  EXPECT_EQ(layout::sf_layout_spec(layout::SfKernel::kPackUe8m0).entry.find("transpose"), std::string::npos);
  EXPECT_EQ(layout::sf_layout_spec(layout::SfKernel::kKGroupedPackUe8m0).entry.find("transpose"), std::string::npos);
}

// The tile's K extent: whole rows of a row-major input up to 64 K blocks, at least 4 when packing.
TEST(Fp8LayoutKernelNames, TileKExtent) {
  EXPECT_EQ(sf_tile_k_log2(1, false), 0);
  EXPECT_EQ(sf_tile_k_log2(1, true), 2);
  EXPECT_EQ(sf_tile_k_log2(5, false), 3);
  EXPECT_EQ(sf_tile_k_log2(56, false), 6);
  EXPECT_EQ(sf_tile_k_log2(57, true), 6);
  EXPECT_EQ(sf_tile_k_log2(1000, false), kSfMaxTileKLog2);
}

// Tiles halve when 4096-element tiles would be too few to spread over the SMs, never below 32 MN rows at 64 K
// blocks (the span of the shared-memory swizzle).
TEST(Fp8LayoutKernelNames, TileElementsFillTheGpu) {
  EXPECT_EQ(sf_tile_elems_log2(64), kSfMinTileElemsLog2);  // 4096 x 56 scales: 64 tiles of 64 rows
  EXPECT_EQ(sf_tile_elems_log2(kSfFewTiles - 1), kSfMinTileElemsLog2);
  EXPECT_EQ(sf_tile_elems_log2(kSfFewTiles), kSfTileElemsLog2);
  EXPECT_GE((1 << kSfMinTileElemsLog2) >> kSfMaxTileKLog2, 32);
}

// Fake device pointers: every call below must fail its argument checks before any CUDA call.
float* const kFakeSf = reinterpret_cast<float*>(0x1000);
int* const kFakeOut = reinterpret_cast<int*>(0x2000);

TensorView mn_major(void* data, DType dtype, int mn, int cols) {
  return TensorView::matrix(data, dtype, mn, cols, 1, get_tma_aligned_size(mn, 4));
}

TEST(Fp8LayoutGpuApi, MnMajorRejectsBadTensors) {
  const TensorView sf = TensorView::matrix(kFakeSf, DType::kFloat32, 7, 3, 3);
  test_util::expect_invalid(
      [&] {
        get_mn_major_tma_aligned_tensor(TensorView::matrix(kFakeSf, DType::kBFloat16, 7, 3, 3),
                                        mn_major(kFakeOut, DType::kFloat32, 7, 3), nullptr);
      },
      "sf", "fp32");
  // Row pitch 7 instead of the TMA-aligned 8.
  test_util::expect_invalid(
      [&] { get_mn_major_tma_aligned_tensor(sf, TensorView::matrix(kFakeOut, DType::kFloat32, 7, 3, 1, 7), nullptr); },
      "out", "strides [1, 8]");
  test_util::expect_invalid(
      [&] { get_mn_major_tma_aligned_tensor(sf, mn_major(kFakeOut, DType::kFloat32, 7, 4), nullptr); }, "out",
      "[7, 3]");
  test_util::expect_invalid(
      [&] {
        get_mn_major_tma_aligned_tensor(TensorView::matrix(kFakeSf, DType::kFloat32, 0, 3, 3),
                                        mn_major(kFakeOut, DType::kFloat32, 0, 3), nullptr);
      },
      "sf", "sizes in [1");
  // out aliasing sf in a different layout.
  test_util::expect_invalid(
      [&] { get_mn_major_tma_aligned_tensor(sf, mn_major(kFakeSf, DType::kFloat32, 7, 3), nullptr); }, "out", "alias");
}

TEST(Fp8LayoutGpuApi, PackedRejectsBadTensors) {
  const TensorView sf = TensorView::batched(kFakeSf, DType::kFloat32, 2, 5, 6, 30, 6);
  // Packed K is ceil(6/4) = 2 words; a fp32 out or one with 6 columns is wrong.
  TensorView out = TensorView::batched(kFakeOut, DType::kInt32, 2, 5, 2, 16, 1, 8);
  TensorView wrong_cols = TensorView::batched(kFakeOut, DType::kInt32, 2, 5, 6, 48, 1, 8);
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, wrong_cols, nullptr); }, "out",
                            "packed UE8M0 int32[2, 5, 2] with strides [16, 1, 8]");
  out.strides[0] = 17;
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, out, nullptr); }, "out");
}

TEST(Fp8LayoutGpuApi, TransformChecksRecipeShapesAndCast) {
  const int mn = 300, k = 1000;  // sfa [300, 8], sfb [3, 8]
  const TensorView sfa = TensorView::matrix(kFakeSf, DType::kFloat32, mn, 8, 8);
  const TensorView sfb = TensorView::matrix(kFakeSf, DType::kFloat32, 3, 8, 8);
  const TensorView out_f32 = mn_major(kFakeOut, DType::kFloat32, mn, 8);
  const TensorView out_packed = mn_major(kFakeOut, DType::kInt32, mn, 2);
  const SfRecipe recipe{1, 128, 128};
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfa, out_f32, 0, k, recipe, true, 0, false, nullptr); }, "mn");
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfa, out_f32, mn, -1, recipe, true, 0, false, nullptr); }, "k");
  test_util::expect_invalid(
      [&] {
        transform_sf_into_required_layout(sfa, out_f32, mn, k, {1, 64, 128}, false, 0, false, nullptr);
      },
      "recipe", "(1, 64, 128) for sfb");
  // SFB given where SFA is expected: the shape names what the recipe implies.
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfb, out_f32, mn, k, recipe, true, 0, false, nullptr); }, "sf",
      "fp32 [300, 8]");
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfa, out_f32, mn, k, recipe, true, 2, false, nullptr); }, "sf",
      "fp32 [2, 300, 8]");
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfa, out_packed, mn, k, recipe, true, 0, true, nullptr); },
      "disable_ue8m0_cast");
  test_util::expect_invalid(
      [&] {
        transform_sf_into_required_layout(sfa, mn_major(kFakeOut, DType::kBFloat16, mn, 8), mn, k, recipe, true, 0,
                                          false, nullptr);
      },
      "out", "int32");
  test_util::expect_invalid(
      [&] {
        transform_sf_into_required_layout(TensorView::matrix(kFakeSf, DType::kFloat32, mn, 32, 32), out_f32, mn, k,
                                          {1, 128, 32}, true, 0, false, nullptr);
      },
      "recipe", "gran_k 128");
  // Per-block SFB into fp32 must be dense and K-contiguous.
  test_util::expect_invalid(
      [&] {
        transform_sf_into_required_layout(sfb, mn_major(kFakeOut, DType::kFloat32, 3, 8), mn, k, recipe, false, 0,
                                          false, nullptr);
      },
      "out", "dense K-contiguous fp32 [3, 8]");
  test_util::expect_invalid(
      [&] { transform_sf_into_required_layout(sfa, out_packed, mn, k, recipe, true, -1, false, nullptr); },
      "num_groups");
}

TEST(Fp8LayoutGpuApi, PsumPackRejectsBadTensors) {
  const TensorView sf = TensorView::matrix(kFakeSf, DType::kFloat32, 300, 8, 8);
  const TensorView out = mn_major(kFakeOut, DType::kInt32, 300, 2);
  const TensorView psum = TensorView::matrix(kFakeOut + 4096, DType::kInt32, 1, 4, 4);
  TensorView psum_1d = psum;
  psum_1d.ndim = 1, psum_1d.shape = {4, 0, 0, 0}, psum_1d.strides = {1, 0, 0, 0};
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, out, psum, 128, nullptr); },
                            "psum_layout", "1-D int32");
  TensorView psum_fp32 = psum_1d;
  psum_fp32.dtype = DType::kFloat32;
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, out, psum_fp32, 128, nullptr); },
                            "psum_layout");
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, out, psum_1d, 0, nullptr); },
                            "m_alignment");
  const TensorView grouped = TensorView::batched(kFakeSf, DType::kFloat32, 2, 300, 8, 2400, 8);
  test_util::expect_invalid(
      [&] {
        get_mn_major_tma_aligned_packed_ue8m0_tensor(
            grouped, TensorView::batched(kFakeOut, DType::kInt32, 2, 300, 2, 600, 1, 300), psum_1d, 128, nullptr);
      },
      "sf", "one group");
}

TEST(Fp8LayoutGpuApi, KGroupedPackRejectsBadTensors) {
  const int sf_k = 40, mn = 256;
  const TensorView sf = TensorView::matrix(kFakeSf, DType::kFloat32, sf_k, mn, mn);
  const TensorView out = TensorView::matrix(kFakeOut, DType::kInt32, 10, mn, mn);
  TensorView layout = TensorView::matrix(kFakeOut + 65536, DType::kInt32, 4, 1, 1);
  layout.ndim = 1, layout.shape = {4, 0, 0, 0}, layout.strides = {1, 0, 0, 0};
  auto call = [&](const TensorView& s, const TensorView& o, const TensorView& l, int gran_k, int k_alignment,
                  bool psum) {
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(s, o, l, gran_k, k_alignment, psum, nullptr);
  };
  test_util::expect_invalid([&] { call(sf, out, layout, 64, 128, false); }, "gran_k", "32 or 128");
  test_util::expect_invalid([&] { call(sf, out, layout, 128, 100, false); }, "k_alignment", "multiple of 32");
  test_util::expect_invalid([&] { call(sf, out, layout, 128, 0, true); }, "k_alignment", "positive");
  test_util::expect_invalid(
      [&] { call(TensorView::matrix(kFakeSf, DType::kFloat32, sf_k, 254, 254), out, layout, 128, 128, false); }, "sf",
      "mn a multiple of 4");
  test_util::expect_invalid(
      [&] { call(TensorView::matrix(kFakeSf, DType::kFloat32, sf_k, mn, 1, sf_k), out, layout, 128, 128, false); },
      "sf", "contiguous");
  test_util::expect_invalid(
      [&] { call(TensorView::matrix(kFakeSf + 1, DType::kFloat32, sf_k, mn, mn), out, layout, 128, 128, false); }, "sf",
      "16-byte aligned");
  TensorView too_many = layout;
  too_many.shape[0] = 129;
  test_util::expect_invalid([&] { call(sf, out, too_many, 128, 128, false); }, "grouped_layout", "1 to 128");
  TensorView float_layout = layout;
  float_layout.dtype = DType::kFloat32;
  test_util::expect_invalid([&] { call(sf, out, float_layout, 128, 128, false); }, "grouped_layout", "int32");
  test_util::expect_invalid(
      [&] { call(sf, TensorView::matrix(kFakeOut, DType::kInt32, 10, mn + 4, mn + 4), layout, 128, 128, false); },
      "out", "[packed_sf_k, 256]");
  test_util::expect_invalid(
      [&] { call(sf, TensorView::matrix(kFakeSf, DType::kInt32, 10, mn, mn), layout, 128, 128, false); }, "out",
      "not aliasing sf");
}

}  // namespace
