// Argument checks of k_grouped_bf16_gemm_tn_contiguous: they run before any device access, so these views
// point at a host buffer that is never read.
#include <gtest/gtest.h>

#include <vector>

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
