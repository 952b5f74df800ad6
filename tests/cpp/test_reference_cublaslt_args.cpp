// cublaslt_gemm's argument checks run before any CUDA call, so they are tested without a GPU.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

using namespace tilegemm;

namespace {

// Never dereferenced: every call below fails validation before touching memory.
void* fake_device_pointer() {
  return reinterpret_cast<void*>(std::uintptr_t{0x10000});
}

TensorView bf16(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride = 1) {
  return TensorView::matrix(fake_device_pointer(), DType::kBFloat16, rows, cols, row_stride, col_stride);
}

using test_util::expect_invalid;

}  // namespace

TEST(CublasLtArguments, WrongDtypesNameTheOperand) {
  const auto a = bf16(64, 128, 128), b = bf16(32, 128, 128), d = bf16(64, 32, 32);
  TensorView a_fp32 = a;
  a_fp32.dtype = DType::kFloat32;
  TensorView b_fp8 = b;
  b_fp8.dtype = DType::kFloat8E4M3;
  TensorView d_fp16 = d;
  d_fp16.dtype = DType::kFloat16;
  TensorView c_fp32 = d;
  c_fp32.dtype = DType::kFloat32;
  expect_invalid([&] { cublaslt_gemm(a_fp32, b, d); }, "a", "bf16");
  expect_invalid([&] { cublaslt_gemm(a, b_fp8, d); }, "b", "bf16");
  expect_invalid([&] { cublaslt_gemm(a, b, d_fp16); }, "d", "bf16 or fp32");
  expect_invalid([&] { cublaslt_gemm(a, b, d, &c_fp32); }, "c", "dtype bf16");
}

TEST(CublasLtArguments, MismatchedShapesAndStrides) {
  const auto a = bf16(64, 128, 128), b = bf16(32, 128, 128), d = bf16(64, 32, 32);
  expect_invalid([&] { cublaslt_gemm(a, bf16(32, 96, 96), d); }, "b", "K = 128");
  expect_invalid([&] { cublaslt_gemm(a, b, bf16(64, 16, 16)); }, "d", "shape [64, 32]");
  expect_invalid([&] { cublaslt_gemm(a, b, bf16(64, 32, 1, 64)); }, "d", "contiguous in N");
  expect_invalid([&] { cublaslt_gemm(a, b, bf16(64, 32, 16)); }, "d", "row stride");
  expect_invalid([&] { cublaslt_gemm(bf16(64, 128, 256, 2), b, d); }, "a", "K-major");
  const auto c_other_strides = bf16(64, 32, 40);
  TensorView c_alias = c_other_strides;
  c_alias.data = d.data;
  expect_invalid([&] { cublaslt_gemm(a, b, d, &c_alias); }, "c", "strides");
  const auto a3 = TensorView::batched(fake_device_pointer(), DType::kBFloat16, 2, 64, 128, 64 * 128, 128);
  expect_invalid([&] { cublaslt_gemm(a3, b, d); }, "b", "3 dimensions");
  TensorView a_null = a;
  a_null.data = nullptr;
  expect_invalid([&] { cublaslt_gemm(a_null, b, d); }, "a", "non-null");
}

TEST(CublasLtArguments, NamedLayoutsTransposeTheirOperands) {
  // nn takes b as [K,N]: a [64,128] with b stored [128,32] is valid, b stored [32,128] is not.
  const auto a = bf16(64, 128, 128), d = bf16(64, 32, 32);
  expect_invalid([&] { cublaslt_gemm_nn(a, bf16(32, 128, 128), d); }, "b", "K = 128");
  expect_invalid([&] { cublaslt_gemm_tn(bf16(64, 128, 128), bf16(32, 128, 128), d); }, "b", "K = 64");
  EXPECT_EQ(transpose_last2(bf16(128, 32, 32)).stride(-1), 32);
}

TEST(CublasLtArguments, ValidCallWithoutGpuIsARuntimeError) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
    GTEST_SKIP() << "a CUDA device is present; tests/gpu covers the valid call";
  const auto a = bf16(64, 128, 128), b = bf16(32, 128, 128), d = bf16(64, 32, 32);
  EXPECT_THROW(cublaslt_gemm(a, b, d), RuntimeError);
  // K = 0: empty operands hold no element, so any strides pass the checks (a stride of 0 included); only the fill
  // of d, which needs the GPU, fails here.
  for (const auto& [ea, eb] :
       {std::pair{bf16(64, 0, 0), bf16(32, 0, 0)}, std::pair{bf16(64, 0, 1, 64), bf16(32, 0, 5, 3)}}) {
    try {
      cublaslt_gemm(ea, eb, d);
      ADD_FAILURE() << "expected the fill of d to fail without a GPU";
    } catch (const InvalidArgument& e) {
      ADD_FAILURE() << "empty operands refused: " << e.what();
    } catch (const RuntimeError&) {
    }
  }
}
