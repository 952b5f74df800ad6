// Both scaling-factor layout kernels (device/tilegemm/kernels/sf_layout.cuh) compile for sm_90a through the
// JIT on a machine without a GPU, with ptxas reporting no spills or local memory (DG_JIT_PTXAS_CHECK); and
// the GPU entry points reject bad tensors before touching CUDA.
#include <gtest/gtest.h>

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
  jit::clear_memory_cache();  // so both kernels really go through the compiler (and its ptxas check) here
  const std::int64_t compiles_before = jit::runtime_stats().compiles;
  for (layout::SfKernel which : layout::kAllSfKernels) {
    const jit::KernelSpec spec = layout::sf_layout_spec(which);
    SCOPED_TRACE(spec.name);
    EXPECT_NE(spec.source.find(which == layout::SfKernel::kPackUe8m0 ? "sf_layout_transform<true>"
                                                                     : "sf_layout_transform<false>"),
              std::string::npos);
    std::shared_ptr<const jit::CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
  }
  EXPECT_EQ(jit::runtime_stats().compiles - compiles_before, 2);
  EXPECT_NE(layout::sf_layout_spec(layout::SfKernel::kPackUe8m0).name,
            layout::sf_layout_spec(layout::SfKernel::kTransposeFp32).name);
}

// Fake device pointers: every call below must fail its argument checks before any CUDA call.
float* const kFakeSf = reinterpret_cast<float*>(0x1000);
int* const kFakeOut = reinterpret_cast<int*>(0x2000);

TensorView mn_major(void* data, DType dtype, int mn, int cols) {
  return TensorView::matrix(data, dtype, mn, cols, 1, get_tma_aligned_size(mn, 4));
}

TEST(Fp8LayoutGpuApi, MnMajorRejectsBadTensors) {
  const TensorView sf = TensorView::matrix(kFakeSf, DType::kFloat32, 7, 3, 3);
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_tensor(TensorView::matrix(kFakeSf, DType::kBFloat16, 7, 3, 3),
                                                                  mn_major(kFakeOut, DType::kFloat32, 7, 3), nullptr); },
                            "sf", "fp32");
  // Row pitch 7 instead of the TMA-aligned 8.
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_tensor(sf, TensorView::matrix(kFakeOut, DType::kFloat32, 7, 3, 1, 7),
                                                                  nullptr); },
                            "out", "strides [1, 8]");
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_tensor(sf, mn_major(kFakeOut, DType::kFloat32, 7, 4), nullptr); },
                            "out", "[7, 3]");
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_tensor(TensorView::matrix(kFakeSf, DType::kFloat32, 0, 3, 3),
                                                                  mn_major(kFakeOut, DType::kFloat32, 0, 3), nullptr); },
                            "sf", "sizes in [1");
  // out aliasing sf in a different layout.
  test_util::expect_invalid([&] { get_mn_major_tma_aligned_tensor(sf, mn_major(kFakeSf, DType::kFloat32, 7, 3), nullptr); },
                            "out", "alias");
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
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_f32, 0, k, recipe, true, 0, false, nullptr); },
                            "mn");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_f32, mn, -1, recipe, true, 0, false, nullptr); },
                            "k");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_f32, mn, k, {1, 64, 128}, false, 0, false, nullptr); },
                            "recipe", "(1, 64, 128) for sfb");
  // SFB given where SFA is expected: the shape names what the recipe implies.
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfb, out_f32, mn, k, recipe, true, 0, false, nullptr); },
                            "sf", "fp32 [300, 8]");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_f32, mn, k, recipe, true, 2, false, nullptr); },
                            "sf", "fp32 [2, 300, 8]");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_packed, mn, k, recipe, true, 0, true, nullptr); },
                            "disable_ue8m0_cast");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, mn_major(kFakeOut, DType::kBFloat16, mn, 8), mn, k,
                                                                    recipe, true, 0, false, nullptr); },
                            "out", "int32");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(TensorView::matrix(kFakeSf, DType::kFloat32, mn, 32, 32),
                                                                    out_f32, mn, k, {1, 128, 32}, true, 0, false, nullptr); },
                            "recipe", "gran_k 128");
  // Per-block SFB into fp32 must be dense and K-contiguous.
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfb, mn_major(kFakeOut, DType::kFloat32, 3, 8), mn, k,
                                                                    recipe, false, 0, false, nullptr); },
                            "out", "dense K-contiguous fp32 [3, 8]");
  test_util::expect_invalid([&] { transform_sf_into_required_layout(sfa, out_packed, mn, k, recipe, true, -1, false, nullptr); },
                            "num_groups");
}

}  // namespace
