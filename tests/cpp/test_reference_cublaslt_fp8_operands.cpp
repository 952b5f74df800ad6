// cublaslt_gemm with FP8 (e4m3) operands, as DeepGEMM's cublaslt_gemm_* take them: the argument checks run
// before any CUDA call, so they are tested without a GPU. cuBLASLt's FP8 matmul takes only the TN form, so an
// operand that is not K-major is refused naming it, whichever named layout made it so.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

using namespace tilegemm;

namespace {

// Never dereferenced: every call below fails validation (or, without a GPU, stops at the missing device).
void* fake_device_pointer(std::uintptr_t offset = 0) {
  return reinterpret_cast<void*>(std::uintptr_t{0x10000} + offset);
}

TensorView fp8(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride = 1) {
  return TensorView::matrix(fake_device_pointer(), DType::kFloat8E4M3, rows, cols, row_stride, col_stride);
}

TensorView out(DType dtype, std::int64_t rows, std::int64_t cols) {
  return TensorView::matrix(fake_device_pointer(), dtype, rows, cols, cols);
}

using test_util::expect_invalid;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace

TEST(CublasLtFp8Operands, MixedOperandDtypesNameTheSecond) {
  const auto a = fp8(64, 128, 128), b = fp8(32, 128, 128), d = out(DType::kBFloat16, 64, 32);
  TensorView b_bf16 = b;
  b_bf16.dtype = DType::kBFloat16;
  expect_invalid([&] { cublaslt_gemm(a, b_bf16, d); }, "b", "dtype fp8 like a");
  TensorView a_e5m2 = a;
  a_e5m2.dtype = DType::kFloat8E5M2;
  expect_invalid([&] { cublaslt_gemm(a_e5m2, b, d); }, "a", "bf16 or fp8 (e4m3)");
  expect_invalid([&] { cublaslt_gemm(a, b, out(DType::kFloat16, 64, 32)); }, "d", "bf16 or fp32");
  TensorView c_fp32 = out(DType::kFloat32, 64, 32);
  expect_invalid([&] { cublaslt_gemm(a, b, d, &c_fp32); }, "c", "dtype bf16");
}

TEST(CublasLtFp8Operands, MnMajorOperandsAreRefusedByName) {
  const auto a = fp8(64, 128, 128), b = fp8(32, 128, 128), d = out(DType::kFloat32, 64, 32);
  // a [M, K] stored MN-major (the transposed view of a [K, M] tensor).
  expect_invalid([&] { cublaslt_gemm(fp8(64, 128, 1, 64), b, d); }, "a", "K-major FP8 operand");
  expect_invalid([&] { cublaslt_gemm(a, fp8(32, 128, 1, 32), d); }, "b", "TN form");
  // The named layouts transpose their operands' views first: nn's b is [K, N]; stored that way (row-major)
  // its transposed view is MN-major. tn's a [K, M] row-major likewise; tt's a too. nt with K-major a and b is
  // the one form that passes.
  expect_invalid([&] { cublaslt_gemm_nn(a, fp8(128, 32, 32), d); }, "b", "K-major FP8 operand");
  expect_invalid([&] { cublaslt_gemm_tn(fp8(128, 64, 64), fp8(128, 32, 32), d); }, "a", "K-major FP8 operand");
  expect_invalid([&] { cublaslt_gemm_tt(fp8(128, 64, 64), b, d); }, "a", "K-major FP8 operand");
  // A [K, N] b that is the transposed view of a K-major [N, K] tensor is K-major again after nn's transpose.
  const TensorView b_kn = transpose_last2(b);
  if (!have_gpu()) EXPECT_THROW(cublaslt_gemm_nn(a, b_kn, d), RuntimeError);
}

TEST(CublasLtFp8Operands, RowStridesAndPointersMustBe16ByteAligned) {
  const auto b = fp8(32, 128, 128), d = out(DType::kBFloat16, 64, 32);
  expect_invalid([&] { cublaslt_gemm(fp8(64, 120, 120), fp8(32, 120, 120), d); }, "a", "multiple of 16 bytes");
  expect_invalid([&] { cublaslt_gemm(fp8(64, 128, 136), b, d); }, "a", "multiple of 16 bytes");
  expect_invalid([&] { cublaslt_gemm(fp8(64, 128, 128), fp8(32, 128, 136), d); }, "b", "multiple of 16 bytes");
  TensorView misaligned = fp8(64, 128, 128);
  misaligned.data = fake_device_pointer(8);
  expect_invalid([&] { cublaslt_gemm(misaligned, b, d); }, "a", "16-byte aligned data pointer");
}

TEST(CublasLtFp8Operands, ValidCallsWithoutGpuAreRuntimeErrors) {
  if (have_gpu()) GTEST_SKIP() << "a CUDA device is present; tests/gpu covers the valid calls";
  const auto a = fp8(64, 128, 128), b = fp8(32, 128, 128);
  for (DType d_dtype : {DType::kBFloat16, DType::kFloat32}) {
    const TensorView d = out(d_dtype, 64, 32);
    EXPECT_THROW(cublaslt_gemm(a, b, d), RuntimeError);
    EXPECT_THROW(cublaslt_gemm(a, b, d, &d), RuntimeError);
  }
  // Batched FP8 operands ([B, M, K] / [B, N, K]) pass the checks too.
  const TensorView a3 = TensorView::batched(fake_device_pointer(), DType::kFloat8E4M3, 2, 64, 128, 64 * 128, 128);
  const TensorView b3 = TensorView::batched(fake_device_pointer(), DType::kFloat8E4M3, 2, 32, 128, 32 * 128, 128);
  const TensorView d3 = TensorView::batched(fake_device_pointer(), DType::kFloat32, 2, 64, 32, 64 * 32, 32);
  EXPECT_THROW(cublaslt_gemm(a3, b3, d3), RuntimeError);
}
