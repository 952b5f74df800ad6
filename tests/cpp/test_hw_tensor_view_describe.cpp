// describe(TensorView): the tensor text every argument error prints.
#include <gtest/gtest.h>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm {
namespace {

TEST(HwTensorViewDescribe, MatrixBatchedAndEmpty) {
  EXPECT_EQ(describe(TensorView::matrix(nullptr, DType::kBFloat16, 4096, 7168, 7168)),
            "bf16[4096, 7168] strides [7168, 1]");
  EXPECT_EQ(describe(TensorView::matrix(nullptr, DType::kFloat8E4M3, 128, 64, 1, 128)),
            "fp8[128, 64] strides [1, 128]");
  EXPECT_EQ(describe(TensorView::batched(nullptr, DType::kFloat32, 8, 64, 32, 2048, 32)),
            "fp32[8, 64, 32] strides [2048, 32, 1]");
  EXPECT_EQ(describe(TensorView{}), "bf16[] strides []");
}

}  // namespace
}  // namespace tilegemm
