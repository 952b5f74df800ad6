// cublaslt_fp8_gemm_nt's argument checks and the scale packing helpers run before any CUDA call, so they are
// tested without a GPU.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

using namespace tilegemm;

namespace {

// Never dereferenced: every call below fails validation before touching memory.
void* fake_device_pointer() {
  return reinterpret_cast<void*>(std::uintptr_t{0x10000});
}

TensorView view(DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                std::int64_t col_stride = 1) {
  return TensorView::matrix(fake_device_pointer(), dtype, rows, cols, row_stride, col_stride);
}
TensorView e4m3(std::int64_t rows, std::int64_t cols) {
  return view(DType::kFloat8E4M3, rows, cols, cols);
}

// A valid block-scaled problem M=64, N=256, K=384 (kb = 3, so cuBLASLt's sfb row stride is 4).
struct Blockwise {
  TensorView a = e4m3(64, 384), b = e4m3(256, 384), d = view(DType::kBFloat16, 64, 256, 256);
  TensorView sfa = view(DType::kFloat32, 64, 3, 1, 64);  // M contiguous, column stride M
  TensorView sfb = view(DType::kFloat32, 2, 3, 4);       // K blocks contiguous, row stride round_up(3, 4)
};

using test_util::expect_invalid;
constexpr auto kBlock = CublasLtFp8Scaling::kBlockwise;
constexpr auto kTensor = CublasLtFp8Scaling::kPerTensor;

}  // namespace

TEST(CublasLtFp8Arguments, OperandDtypesAndShapes) {
  Blockwise p;
  TensorView a_bf16 = p.a;
  a_bf16.dtype = DType::kBFloat16;
  TensorView d_fp32 = p.d;
  d_fp32.dtype = DType::kFloat32;
  expect_invalid([&] { cublaslt_fp8_gemm_nt(a_bf16, p.sfa, p.b, p.sfb, p.d, kBlock); }, "a", "dtype fp8");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, e4m3(256, 256), p.sfb, p.d, kBlock); }, "b", "K = 384");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, p.sfb, d_fp32, kBlock); }, "d", "dtype bf16");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, p.sfb, view(DType::kBFloat16, 64, 128, 128), kBlock); },
                 "d", "shape [64, 256]");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, p.sfb, view(DType::kBFloat16, 64, 256, 128), kBlock); },
                 "d", "row stride");
  TensorView a_null = p.a;
  a_null.data = nullptr;
  expect_invalid([&] { cublaslt_fp8_gemm_nt(a_null, p.sfa, p.b, p.sfb, p.d, kBlock); }, "a", "non-null");
  const TensorView a3 = TensorView::batched(fake_device_pointer(), DType::kFloat8E4M3, 2, 64, 384, 64 * 384, 384);
  expect_invalid([&] { cublaslt_fp8_gemm_nt(a3, p.sfa, p.b, p.sfb, p.d, kBlock); }, "a", "2-D");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, p.sfb, p.d, static_cast<CublasLtFp8Scaling>(7)); },
                 "scaling", "kPerTensor or kBlockwise");
}

TEST(CublasLtFp8Arguments, OperandsMustBeKMajor) {
  Blockwise p;
  // a stored [K,M] (MN-major) and b stored [K,N]: cuBLASLt's FP8 matmul has no such form on Hopper.
  expect_invalid(
      [&] { cublaslt_fp8_gemm_nt(view(DType::kFloat8E4M3, 64, 384, 1, 64), p.sfa, p.b, p.sfb, p.d, kBlock); }, "a",
      "K-major");
  expect_invalid(
      [&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, view(DType::kFloat8E4M3, 256, 384, 1, 256), p.sfb, p.d, kBlock); }, "b",
      "TN form");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(view(DType::kFloat8E4M3, 64, 384, 256), p.sfa, p.b, p.sfb, p.d, kBlock); },
                 "a", "row stride >= K");
}

TEST(CublasLtFp8Arguments, BlockScaleLayoutsAreCuBlasLts) {
  Blockwise p;
  // tilegemm's sfa pads the column stride of M = 66 to 68; cuBLASLt wants exactly 66.
  const TensorView a66 = e4m3(66, 384), d66 = view(DType::kBFloat16, 66, 256, 256);
  expect_invalid([&] { cublaslt_fp8_gemm_nt(a66, view(DType::kFloat32, 66, 3, 1, 68), p.b, p.sfb, d66, kBlock); },
                 "sfa", "column stride exactly M");
  EXPECT_THROW(cublaslt_fp8_gemm_nt(a66, view(DType::kFloat32, 66, 3, 1, 68), p.b, p.sfb, d66, kBlock),
               InvalidArgument);
  // K-major sfa ([M, kb] with kb contiguous) is the wrong orientation.
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, view(DType::kFloat32, 64, 3, 3), p.b, p.sfb, p.d, kBlock); }, "sfa",
                 "M contiguous");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, view(DType::kFloat32, 64, 2, 1, 64), p.b, p.sfb, p.d, kBlock); },
                 "sfa", "[64, 3]");
  // tilegemm's sfb is [ceil(N/128), kb] with row stride kb = 3; cuBLASLt wants round_up(3, 4) = 4.
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, view(DType::kFloat32, 2, 3, 3), p.d, kBlock); }, "sfb",
                 "strides [4, 1]");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, view(DType::kFloat32, 256, 3, 4), p.d, kBlock); }, "sfb",
                 "[2, 3]");
  TensorView sfb_bf16 = p.sfb;
  sfb_bf16.dtype = DType::kBFloat16;
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, sfb_bf16, p.d, kBlock); }, "sfb", "dtype fp32");
}

TEST(CublasLtFp8Arguments, PerTensorScalesAreSingleFloats) {
  Blockwise p;
  const TensorView one = view(DType::kFloat32, 1, 1, 1);
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, one, p.d, kTensor); }, "sfa", "numel() == 1");
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, one, p.b, p.sfb, p.d, kTensor); }, "sfb", "numel() == 1");
  TensorView one_bf16 = one;
  one_bf16.dtype = DType::kBFloat16;
  expect_invalid([&] { cublaslt_fp8_gemm_nt(p.a, one_bf16, p.b, one, p.d, kTensor); }, "sfa", "fp32");
}

TEST(CublasLtFp8Arguments, ValidCallWithoutGpuIsARuntimeError) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
    GTEST_SKIP() << "a CUDA device is present; tests/gpu/test_cublaslt_fp8.cpp covers the valid call";
  Blockwise p;
  EXPECT_THROW(cublaslt_fp8_gemm_nt(p.a, p.sfa, p.b, p.sfb, p.d, kBlock), RuntimeError);
  const TensorView one = view(DType::kFloat32, 1, 1, 1);
  EXPECT_THROW(cublaslt_fp8_gemm_nt(p.a, one, p.b, one, p.d, kTensor), RuntimeError);
}

TEST(CublasLtFp8Scales, StridesCuBlasLtAssumes) {
  EXPECT_EQ(cublaslt_sfa_column_stride(65), 65);
  EXPECT_EQ(cublaslt_sfb_row_stride(7168), 56);  // 56 K blocks, already a multiple of 4
  EXPECT_EQ(cublaslt_sfb_row_stride(320), 4);    // 3 K blocks (the last one partial) padded to 4
  EXPECT_EQ(cublaslt_sfb_row_stride(128 * 5), 8);
  EXPECT_EQ(cublaslt_fp8_scaling_name(CublasLtFp8Scaling::kBlockwise), "1x128/128x128");
}

TEST(CublasLtFp8Scales, PackingTransposesSfaAndPadsSfb) {
  // sfa: logical row-major [M=3, kb=2] → cuBLASLt's [kb][M].
  const std::vector<float> sfa = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(pack_cublaslt_sfa(sfa, 3, 256), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  // sfb: logical [nb=2, kb=3] (N = 200, K = 300) → rows padded to 4 with zeros.
  const std::vector<float> sfb = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(pack_cublaslt_sfb(sfb, 200, 300), (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0}));
  expect_invalid([&] { pack_cublaslt_sfa(sfa, 4, 256); }, "logical", "8 scales");
  expect_invalid([&] { pack_cublaslt_sfb(sfb, 200, 600); }, "logical", "[ceil(N/128)=2, ceil(K/128)=5]");
}
