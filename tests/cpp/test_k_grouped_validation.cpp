// Argument checks of the K-grouped GEMMs (BF16 tn, FP8 nt): they run before any device access, so these views
// point at a host buffer that is never read.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "api/launch_plan.hpp"
#include "expect_invalid.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"

using namespace tilegemm;

namespace {

struct Views {
  std::vector<char> storage = std::vector<char>(1 << 16);
  TensorView a = TensorView::matrix(storage.data(), DType::kBFloat16, 128, 64, 64);  // [ΣK=128, M=64]
  TensorView b = TensorView::matrix(storage.data(), DType::kBFloat16, 128, 32, 32);  // [ΣK=128, N=32]
  TensorView d = TensorView::batched(storage.data(), DType::kFloat32, 2, 64, 32, 64 * 32, 32);
  TensorView ks = [&] {
    TensorView v;
    v.data = storage.data(), v.dtype = DType::kInt32, v.ndim = 1, v.shape = {2, 0, 0, 0}, v.strides = {1, 0, 0, 0};
    return v;
  }();
};

std::string rejected_argument(const Views& v, const std::vector<int>& ks, const TensorView* c = nullptr) {
  try {
    k_grouped_bf16_gemm_tn_contiguous(v.a, v.b, v.d, ks, v.ks, c);
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "(accepted)";
}

}  // namespace

TEST(KGroupedValidation, GroupSizesMustBeBlockMultiplesAndSumToK) {
  Views v;
  EXPECT_EQ(rejected_argument(v, {64, 36}), "ks[1]");
  EXPECT_EQ(rejected_argument(v, {64, -64}), "ks[1]");
  EXPECT_EQ(rejected_argument(v, {64, 128}), "ks");  // sums to 192, a has 128 rows
  EXPECT_EQ(rejected_argument(v, {128}), "ks");      // one size for two groups
}

TEST(KGroupedValidation, DtypesAndShapesAreChecked) {
  Views v;
  v.d.dtype = DType::kBFloat16;
  EXPECT_EQ(rejected_argument(v, {64, 64}), "d");  // weight gradients accumulate in fp32
  Views w;
  w.b.shape[0] = 96;
  EXPECT_EQ(rejected_argument(w, {64, 64}), "b");
  Views x;
  TensorView c = x.d;
  c.shape[2] = 16;
  EXPECT_EQ(rejected_argument(x, {64, 64}, &c), "c");
}

// ---- k_grouped_fp8_gemm_contiguous on DeepGEMM's 1-D operand layout (each group's K-major block in turn) ----
namespace {

struct Fp8Views {
  static constexpr std::int64_t kM = 64, kN = 32, kSumK = 384;  // ks {128, 256}
  std::vector<char> storage = std::vector<char>(1 << 20);
  char* base = storage.data() + (16 - reinterpret_cast<std::uintptr_t>(storage.data()) % 16) % 16;
  TensorView flat(std::int64_t numel) const {
    TensorView v;
    v.data = base, v.dtype = DType::kFloat8E4M3, v.ndim = 1, v.shape = {numel, 0, 0, 0}, v.strides = {1, 0, 0, 0};
    return v;
  }
  TensorView a = flat(kSumK * kM), b = flat(kSumK * kN);
  TensorView sfa = TensorView::matrix(base, DType::kFloat32, kM, kSumK / 128, 1, kM);  // MN-major, as DeepGEMM's
  TensorView sfb = TensorView::matrix(base, DType::kFloat32, kN, kSumK / 128, 1, kN);
  TensorView d = TensorView::batched(base, DType::kFloat32, 2, kM, kN, kM* kN, kN);
  TensorView ks = [&] {
    TensorView v;
    v.data = base, v.dtype = DType::kInt32, v.ndim = 1, v.shape = {2, 0, 0, 0}, v.strides = {1, 0, 0, 0};
    return v;
  }();
  api::Plan plan(const std::vector<int>& group_ks) const {
    return api::plan_k_grouped_fp8_gemm_contiguous(a, sfa, b, sfb, d, group_ks, ks, nullptr, 0);
  }
};

}  // namespace

TEST(KGroupedFp8Validation, OneDimensionalOperandsTakePerGroupMaps) {
  const Fp8Views v;
  EXPECT_EQ(v.plan({128, 256})->desc.k_group_maps, 4);  // two groups: the 4-map kernel
  // The [rows, ΣK] form keeps the one map over all groups.
  Fp8Views w;
  w.a = TensorView::matrix(w.base, DType::kFloat8E4M3, Fp8Views::kM, Fp8Views::kSumK, Fp8Views::kSumK);
  w.b = TensorView::matrix(w.base, DType::kFloat8E4M3, Fp8Views::kN, Fp8Views::kSumK, Fp8Views::kSumK);
  EXPECT_EQ(w.plan({128, 256})->desc.k_group_maps, 0);
}

TEST(KGroupedFp8Validation, OneDimensionalOperandsAreCheckedByName) {
  const Fp8Views v;
  // ΣK comes from the group sizes: a (ΣK = 384 of 64 rows) then has the wrong number of elements.
  test_util::expect_invalid([&] { v.plan({128, 128}); }, "a", "16384 elements (ΣK=256 times 64 rows");
  test_util::expect_invalid([&] { v.plan({128, 200}); }, "ks[1]", "multiple of 128");
  Fp8Views short_b;
  short_b.b = short_b.flat(Fp8Views::kSumK * Fp8Views::kN - 128);
  test_util::expect_invalid([&] { short_b.plan({128, 256}); }, "b", "12288 elements");
  Fp8Views odd;
  odd.a.data = odd.base + 8;
  odd.b.data = odd.base + 8;
  test_util::expect_invalid([&] { odd.plan({128, 256}); }, "a", "16-byte aligned");
  Fp8Views strided;
  strided.a.strides[0] = 2;
  test_util::expect_invalid([&] { strided.plan({128, 256}); }, "a", "K-major");
  Fp8Views mixed;  // a 1-D, b 2-D
  mixed.b = TensorView::matrix(mixed.base, DType::kFloat8E4M3, Fp8Views::kN, Fp8Views::kSumK, Fp8Views::kSumK);
  test_util::expect_invalid([&] { mixed.plan({128, 256}); }, "b");
  Fp8Views cube;
  cube.a = TensorView::batched(cube.base, DType::kFloat8E4M3, 1, Fp8Views::kM, Fp8Views::kSumK,
                               Fp8Views::kM * Fp8Views::kSumK, Fp8Views::kSumK);
  test_util::expect_invalid([&] { cube.plan({128, 256}); }, "a", "1-D one of");
}
