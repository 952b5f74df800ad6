// The cuBLASLt FP8 baseline: e4m3 A and B, bf16 D, per-tensor or DeepSeek block scaling (1×128 A, 128×128 B).
// As in cublaslt.cpp, the row-major D[M,N] = A·Bᵀ is issued as the column-major Dᵀ[N,M] = op(B)·op(A): our b
// (K-major [N,K]) is cuBLASLt's A with TRANSA = T, our a (K-major [M,K]) is cuBLASLt's B with TRANSB = N —
// the "TN" form, the only one cuBLASLt's FP8 matmul accepts on Hopper. So our sfb (128×128 blocks) is
// cuBLASLt's A scale (BLK128x128_32F) and our sfa (1×128 per token) its B scale (VEC128_32F).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "core/int_math.hpp"
#include "reference/cublaslt_api.hpp"
#include "reference/cublaslt_context.hpp"
#include "reference/host_view.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm {

using reference_detail::pointer_alignment;
using reference_detail::view_string;

namespace {

constexpr std::int64_t kBlock = 128;

std::int64_t round_up(std::int64_t a, std::int64_t b) {
  return ceil_div(a, b) * b;
}

void check_cuda_fp8(cudaError_t status, const char* what) {
  reference_detail::check_cuda_status(status, "cublaslt_fp8_gemm_nt", what);
}

void check_cublas_fp8(cublasStatus_t status, const char* what) {
  reference_detail::check_cublas_status(status, "cublaslt_fp8_gemm_nt", what);
}

void require_view(const TensorView& v, const std::string& argument, DType dtype) {
  TILEGEMM_REQUIRE(v.ndim == 2, argument, "a 2-D view", view_string(v));
  TILEGEMM_REQUIRE(v.dtype == dtype, argument, fmt::format("dtype {}", dtype_name(dtype)), view_string(v));
  for (int i = 0; i < v.ndim; ++i) {
    TILEGEMM_REQUIRE(v.shape[i] >= 0, argument, "non-negative sizes", view_string(v));
    TILEGEMM_REQUIRE(v.strides[i] >= 0, argument, "non-negative strides", view_string(v));
  }
  TILEGEMM_REQUIRE(v.numel() == 0 || v.data != nullptr, argument, "a non-null data pointer", "nullptr");
}

// An e4m3 [X,K] operand: K contiguous, rows not overlapping.
void require_k_major(const TensorView& v, const std::string& argument) {
  const std::int64_t x = v.size(0), k = v.size(1);
  TILEGEMM_REQUIRE(v.stride(1) == 1 || k <= 1, argument,
                   "K-major storage (stride(-1) == 1): cuBLASLt's FP8 matmul takes only the TN form", view_string(v));
  TILEGEMM_REQUIRE(x <= 1 || v.stride(0) >= k, argument, "a row stride >= K", view_string(v));
}

struct Fp8Problem {
  std::int64_t m = 0, n = 0, k = 0;
};

Fp8Problem check_fp8_arguments(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, CublasLtFp8Scaling scaling) {
  TILEGEMM_REQUIRE(scaling == CublasLtFp8Scaling::kPerTensor || scaling == CublasLtFp8Scaling::kBlockwise, "scaling",
                   "kPerTensor or kBlockwise", std::to_string(static_cast<int>(scaling)));
  require_view(a, "a", DType::kFloat8E4M3);
  require_view(b, "b", DType::kFloat8E4M3);
  require_view(d, "d", DType::kBFloat16);
  const Fp8Problem p{a.size(0), b.size(0), a.size(1)};
  TILEGEMM_REQUIRE(b.size(1) == p.k, "b", fmt::format("[N, K] with K = {} (from a)", p.k), view_string(b));
  require_k_major(a, "a");
  require_k_major(b, "b");
  TILEGEMM_REQUIRE(d.size(0) == p.m && d.size(1) == p.n, "d", fmt::format("shape [{}, {}]", p.m, p.n), view_string(d));
  TILEGEMM_REQUIRE(d.stride(1) == 1 || p.n <= 1, "d", "contiguous in N (stride(-1) == 1)", view_string(d));
  TILEGEMM_REQUIRE(d.stride(0) >= p.n || p.m <= 1, "d", "a row stride >= N", view_string(d));

  if (scaling == CublasLtFp8Scaling::kPerTensor) {
    for (const auto& [sf, name] : {std::pair{&sfa, "sfa"}, std::pair{&sfb, "sfb"}}) {
      TILEGEMM_REQUIRE(sf->dtype == DType::kFloat32, name, "dtype fp32", view_string(*sf));
      TILEGEMM_REQUIRE(sf->numel() == 1 && sf->data != nullptr, name,
                       "one fp32 scale (numel() == 1) for per-tensor scaling", view_string(*sf));
    }
    return p;
  }
  const std::int64_t kb = ceil_div(p.k, kBlock), nb = ceil_div(p.n, kBlock);
  require_view(sfa, "sfa", DType::kFloat32);
  require_view(sfb, "sfb", DType::kFloat32);
  TILEGEMM_REQUIRE(sfa.size(0) == p.m && sfa.size(1) == kb, "sfa",
                   fmt::format("shape [M, ceil(K/128)] = [{}, {}]", p.m, kb), view_string(sfa));
  TILEGEMM_REQUIRE(
      (sfa.stride(0) == 1 || p.m <= 1) && (sfa.stride(1) == p.m || kb <= 1), "sfa",
      fmt::format("cuBLASLt's VEC128 layout: M contiguous, strides [1, {}] (column stride exactly M)", p.m),
      view_string(sfa));
  TILEGEMM_REQUIRE(sfb.size(0) == nb && sfb.size(1) == kb, "sfb",
                   fmt::format("shape [ceil(N/128), ceil(K/128)] = [{}, {}]", nb, kb), view_string(sfb));
  TILEGEMM_REQUIRE((sfb.stride(1) == 1 || kb <= 1) && (sfb.stride(0) == cublaslt_sfb_row_stride(p.k) || nb <= 1), "sfb",
                   fmt::format("cuBLASLt's BLK128x128 layout: K blocks contiguous, strides [{}, 1] (row stride "
                               "round_up(ceil(K/128), 4))",
                               cublaslt_sfb_row_stride(p.k)),
                   view_string(sfb));
  return p;
}

// The block-scaled modes exist from cuBLAS 12.9 on (header and library).
void set_scale_modes(reference_detail::MatmulDesc& desc, CublasLtFp8Scaling scaling) {
  if (scaling != CublasLtFp8Scaling::kBlockwise) return;
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
  if (cublaslt().cublasLtGetVersion() < 120900)
    throw RuntimeError(
        fmt::format("cublaslt_fp8_gemm_nt: 1x128/128x128 block scaling needs cuBLASLt >= 12.9, the "
                    "loaded library is {}",
                    cublaslt().cublasLtGetVersion()));
  const std::int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;  // our sfb
  const std::int32_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;      // our sfa
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode, "set A_SCALE_MODE");
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode, "set B_SCALE_MODE");
#else
  throw RuntimeError("cublaslt_fp8_gemm_nt: built against cuBLAS < 12.9, which has no 1x128/128x128 block scaling");
#endif
}

}  // namespace

std::string_view cublaslt_fp8_scaling_name(CublasLtFp8Scaling scaling) {
  return scaling == CublasLtFp8Scaling::kPerTensor ? "per-tensor" : "1x128/128x128";
}

std::int64_t cublaslt_sfa_column_stride(std::int64_t m) {
  return m;
}
std::int64_t cublaslt_sfb_row_stride(std::int64_t k) {
  return round_up(ceil_div(k, kBlock), 4);
}

std::vector<float> pack_cublaslt_sfa(std::span<const float> logical, std::int64_t m, std::int64_t k) {
  const std::int64_t kb = ceil_div(k, kBlock);
  TILEGEMM_REQUIRE(m >= 0 && k >= 0 && static_cast<std::int64_t>(logical.size()) == m * kb, "logical",
                   fmt::format("{} scales (row-major [M={}, ceil(K/128)={}])", m * kb, m, kb),
                   std::to_string(logical.size()));
  std::vector<float> packed(logical.size());
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t j = 0; j < kb; ++j) packed[j * m + r] = logical[r * kb + j];
  return packed;
}

std::vector<float> pack_cublaslt_sfb(std::span<const float> logical, std::int64_t n, std::int64_t k) {
  const std::int64_t kb = ceil_div(k, kBlock), nb = ceil_div(n, kBlock), ld = cublaslt_sfb_row_stride(k);
  TILEGEMM_REQUIRE(n >= 0 && k >= 0 && static_cast<std::int64_t>(logical.size()) == nb * kb, "logical",
                   fmt::format("{} scales (row-major [ceil(N/128)={}, ceil(K/128)={}])", nb * kb, nb, kb),
                   std::to_string(logical.size()));
  std::vector<float> packed(static_cast<std::size_t>(nb * ld), 0.0f);
  for (std::int64_t r = 0; r < nb; ++r)
    for (std::int64_t j = 0; j < kb; ++j) packed[r * ld + j] = logical[r * kb + j];
  return packed;
}

void cublaslt_fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                          const TensorView& d, CublasLtFp8Scaling scaling, void* stream) {
  const Fp8Problem p = check_fp8_arguments(a, sfa, b, sfb, d, scaling);
  if (p.m == 0 || p.n == 0) return;
  int device = 0;
  check_cuda_fp8(cudaGetDevice(&device), "cudaGetDevice (is there a CUDA device?)");
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  const std::int64_t ld_d = p.m <= 1 ? std::max<std::int64_t>(p.n, 1) : d.stride(0);
  if (p.k == 0) {
    check_cuda_fp8(cudaMemset2DAsync(d.data, static_cast<std::size_t>(ld_d) * 2, 0, static_cast<std::size_t>(p.n) * 2,
                                     static_cast<std::size_t>(p.m), cuda_stream),
                   "cudaMemset2DAsync");
    return;
  }
  reference_detail::CublasLtContext& ctx = reference_detail::cublaslt_context(device, stream, "cublaslt_fp8_gemm_nt");
  const std::int64_t ld_a = p.m <= 1 ? p.k : a.stride(0), ld_b = p.n <= 1 ? p.k : b.stride(0);

  reference_detail::MatmulDesc desc("cublaslt_fp8_gemm_nt", CUBLAS_OP_T, CUBLAS_OP_N);
  set_scale_modes(desc, scaling);
  const void* scale_a = sfb.data;  // cuBLASLt's A is our b
  const void* scale_b = sfa.data;
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale_a, "set A_SCALE_POINTER");
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale_b, "set B_SCALE_POINTER");

  using reference_detail::MatrixLayout;
  const MatrixLayout layout_a("cublaslt_fp8_gemm_nt", CUDA_R_8F_E4M3, p.k, p.n, ld_b);
  const MatrixLayout layout_b("cublaslt_fp8_gemm_nt", CUDA_R_8F_E4M3, p.k, p.m, ld_a);
  const MatrixLayout layout_d("cublaslt_fp8_gemm_nt", CUDA_R_16BF, p.n, p.m, ld_d);
  const std::uint32_t alignments[4] = {pointer_alignment(b.data), pointer_alignment(a.data), pointer_alignment(d.data),
                                       pointer_alignment(d.data)};

  const std::string key = fmt::format("{}|{}|{}x{}x{}|{},{},{}|{},{},{}", device, static_cast<int>(scaling), p.m, p.n,
                                      p.k, ld_a, ld_b, ld_d, alignments[0], alignments[1], alignments[3]);
  cublasLtMatmulAlgo_t algo;
  cublasStatus_t status;
  // cuBLASLt answers NOT_SUPPORTED (or success with no result) when nothing fits the problem.
  if (!reference_detail::cached_heuristic_algo(ctx, "cublaslt_fp8_gemm_nt", key, desc.handle, layout_a.handle,
                                               layout_b.handle, layout_d.handle, layout_d.handle, alignments, &algo,
                                               &status))
    throw RuntimeError(
        fmt::format("cublaslt_fp8_gemm_nt: cuBLASLt {} has no algorithm for {} scaling of a {} b {} d {} "
                    "(cublasLtMatmulAlgoGetHeuristic: {})",
                    cublaslt().cublasLtGetVersion(), cublaslt_fp8_scaling_name(scaling), view_string(a), view_string(b),
                    view_string(d), cublaslt().cublasLtGetStatusName(status)));

  const float alpha = 1.0f, beta = 0.0f;
  check_cublas_fp8(
      cublaslt().cublasLtMatmul(ctx.handle, desc.handle, &alpha, b.data, layout_a.handle, a.data, layout_b.handle,
                                &beta, d.data, layout_d.handle, d.data, layout_d.handle, &algo, ctx.workspace,
                                reference_detail::kCublasLtWorkspaceBytes, cuda_stream),
      "cublasLtMatmul");
}

}  // namespace tilegemm
