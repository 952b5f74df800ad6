// Bad input to the public GEMM API throws InvalidArgument naming the argument, before any CUDA call
// (so no GPU is needed). Pending: move to tests/cpp/test_api_validation.cpp once src/api validates.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include <cstdint>
#include <string>

#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"

using namespace tilegemm;

namespace {

// Never dereferenced: every call below must fail validation first.
void* fake() {
  return reinterpret_cast<void*>(std::uintptr_t{0x100000});
}

TensorView mat(DType t, std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs = 1) {
  return TensorView::matrix(fake(), t, rows, cols, rs, cs);
}
TensorView bat(DType t, std::int64_t b, std::int64_t rows, std::int64_t cols) {
  return TensorView::batched(fake(), t, b, rows, cols, rows * cols, cols);
}
TensorView ints(DType t, std::int64_t n) {
  TensorView v;
  v.data = fake(), v.dtype = t, v.ndim = 1, v.shape = {n, 0, 0, 0}, v.strides = {1, 0, 0, 0};
  return v;
}

using test_util::expect_invalid;

constexpr DType kBf16 = DType::kBFloat16;

}  // namespace

TEST(ApiValidation, Bf16GemmRejectsWrongDtypes) {
  const auto a = mat(kBf16, 256, 512, 512), b = mat(kBf16, 128, 512, 512), d = mat(kBf16, 256, 128, 128);
  expect_invalid([&] { bf16_gemm(mat(DType::kFloat32, 256, 512, 512), b, d, nullptr); }, "a");
  expect_invalid([&] { bf16_gemm(a, mat(DType::kFloat8E4M3, 128, 512, 512), d, nullptr); }, "b");
  expect_invalid([&] { bf16_gemm(a, b, mat(DType::kFloat16, 256, 128, 128), nullptr); }, "d");
  const auto c_fp32 = mat(DType::kFloat32, 256, 128, 128);
  expect_invalid([&] { bf16_gemm(a, b, d, &c_fp32); }, "c");
}

TEST(ApiValidation, Bf16GemmRejectsMismatchedShapesAndStrides) {
  const auto a = mat(kBf16, 256, 512, 512), b = mat(kBf16, 128, 512, 512), d = mat(kBf16, 256, 128, 128);
  expect_invalid([&] { bf16_gemm(a, mat(kBf16, 128, 256, 256), d, nullptr); }, "b");      // K differs
  expect_invalid([&] { bf16_gemm(a, b, mat(kBf16, 256, 64, 64), nullptr); }, "d");        // N differs
  expect_invalid([&] { bf16_gemm(a, b, mat(kBf16, 256, 128, 1, 256), nullptr); }, "d");   // not N-contiguous
  expect_invalid([&] { bf16_gemm(mat(kBf16, 256, 512, 1024, 2), b, d, nullptr); }, "a");  // no unit stride
  expect_invalid([&] { bf16_gemm(a, bat(kBf16, 2, 128, 512), d, nullptr); }, "b");        // 3-D b, 2-D a
  const auto c_small = mat(kBf16, 128, 128, 128);
  expect_invalid([&] { bf16_gemm(a, b, d, &c_small); }, "c");
  expect_invalid([&] { bf16_gemm(bat(kBf16, 2, 256, 512), bat(kBf16, 3, 128, 512), bat(kBf16, 2, 256, 128), nullptr); },
                 "b");  // batch differs
}

TEST(ApiValidation, ContiguousGroupedRejectsBadLayouts) {
  const auto a = mat(kBf16, 256, 512, 512), b = bat(kBf16, 4, 128, 512), d = mat(kBf16, 256, 128, 128);
  expect_invalid([&] { m_grouped_bf16_gemm_contiguous(a, b, d, ints(DType::kFloat32, 256), false); }, "grouped_layout");
  expect_invalid([&] { m_grouped_bf16_gemm_contiguous(a, b, d, ints(DType::kInt32, 255), false); }, "grouped_layout");
  expect_invalid(
      [&] { m_grouped_bf16_gemm_contiguous(a, bat(kBf16, 4, 128, 256), d, ints(DType::kInt32, 256), false); }, "b");
  expect_invalid(
      [&] {
        m_grouped_bf16_gemm_contiguous(a, b, mat(DType::kFloat16, 256, 128, 128), ints(DType::kInt32, 256), false);
      },
      "d");
  // M must be a multiple of the group alignment, so every tile belongs to one group.
  expect_invalid(
      [&] {
        m_grouped_bf16_gemm_contiguous(mat(kBf16, 200, 512, 512), b, mat(kBf16, 200, 128, 128),
                                       ints(DType::kInt32, 200), false);
      },
      "a");
  // A must be K-major: an MN-major [M, K] view is rejected.
  expect_invalid(
      [&] { m_grouped_bf16_gemm_contiguous(mat(kBf16, 256, 512, 1, 256), b, d, ints(DType::kInt32, 256), false); },
      "a");
}

TEST(ApiValidation, MaskedGroupedRejectsBadMaskedM) {
  const auto a = bat(kBf16, 4, 128, 512), b = bat(kBf16, 4, 256, 512), d = bat(kBf16, 4, 128, 256);
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, b, d, ints(DType::kInt32, 5), 64); },
                 "masked_m");  // longer than G
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, b, d, ints(DType::kInt32, 3), 64); }, "masked_m");
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, b, d, ints(DType::kFloat32, 4), 64); }, "masked_m");
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, b, d, ints(DType::kInt32, 4), 0); }, "expected_m");
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, b, bat(kBf16, 4, 64, 256), ints(DType::kInt32, 4), 64); }, "d");
  expect_invalid([&] { m_grouped_bf16_gemm_masked(a, bat(kBf16, 3, 256, 512), d, ints(DType::kInt32, 4), 64); }, "b");
}

// What TMA needs is checked when the plan is made (not at the first launch's tensor-map encode, which a machine
// without a GPU never reaches): a 16-byte aligned address and rows 16 bytes apart, for every TMA tensor.
TEST(ApiValidation, TmaAddressesAndRowStridesAreCheckedBeforeAnyLaunch) {
  const auto a = mat(kBf16, 256, 512, 512), b = mat(kBf16, 128, 512, 512), d = mat(kBf16, 256, 128, 128);
  TensorView off = a;
  off.data = static_cast<char*>(off.data) + 8;  // 4 bf16 elements in: element-aligned, not 16-byte aligned
  expect_invalid([&] { bf16_gemm(off, b, d, nullptr); }, "a", "16-byte aligned address");
  // Rows 1032 bytes apart (516 bf16): the view is valid, TMA cannot walk it.
  expect_invalid([&] { bf16_gemm(a, mat(kBf16, 128, 512, 516), d, nullptr); }, "b", "multiples of 16 bytes");
  TensorView d_off = d;
  d_off.data = static_cast<char*>(d_off.data) + 2;
  expect_invalid([&] { bf16_gemm(a, b, d_off, nullptr); }, "d", "16-byte aligned address");
  // Negative strides pass a modulo test (-8 bf16 = -16 bytes) but not TMA; overlapping rows of D would be written
  // twice.
  expect_invalid([&] { bf16_gemm(a, mat(kBf16, 128, 512, -512), d, nullptr); }, "b", "positive strides");
  expect_invalid([&] { bf16_gemm(a, b, mat(kBf16, 256, 128, 64), nullptr); }, "d", "elements do not overlap");
  const TensorView d_batched = TensorView::batched(fake(), kBf16, 2, 256, 128, 128 * 128, 128);  // batch 2 in 1.5
  expect_invalid([&] { bf16_gemm(bat(kBf16, 2, 256, 512), bat(kBf16, 2, 128, 512), d_batched, nullptr); }, "d",
                 "elements do not overlap");
  // The grouped families check theirs too.
  const TensorView d_masked = TensorView::batched(static_cast<char*>(fake()) + 4, kBf16, 2, 64, 128, 64 * 128, 128);
  expect_invalid(
      [&] {
        m_grouped_bf16_gemm_masked(bat(kBf16, 2, 64, 512), bat(kBf16, 2, 128, 512), d_masked, ints(DType::kInt32, 2),
                                   64);
      },
      "d", "16-byte aligned address");
}

// C at D's address is D += A·Bᵀ in place: only D's own view may be there. A C with other strides over the same memory
// would be read from one place and written to another; with no K to reduce it passed as "already done" (fuzz seed 5).
TEST(ApiValidation, CAtDsAddressMustBeDsView) {
  const auto a = mat(kBf16, 256, 512, 512), b = mat(kBf16, 128, 512, 512), d = mat(DType::kFloat32, 256, 128, 128);
  const auto c_other_rows = mat(DType::kFloat32, 256, 128, 132);
  expect_invalid([&] { bf16_gemm(a, b, d, &c_other_rows); }, "c", "d itself");
  const TensorView d3 = TensorView::batched(fake(), DType::kFloat32, 1, 64, 64, 64 * 65, 65);
  const TensorView c3 = TensorView::batched(fake(), DType::kFloat32, 1, 64, 64, 64 * 64, 64);
  const auto ak = mat(kBf16, 0, 64, 64), bk = mat(kBf16, 0, 64, 64);
  expect_invalid([&] { k_grouped_bf16_gemm_tn_contiguous(ak, bk, d3, {0}, ints(DType::kInt32, 1), &c3); }, "c",
                 "d itself");
}
