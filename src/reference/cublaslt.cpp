// The cuBLASLt baseline: bf16 or e4m3 (unscaled) A/B, bf16 or fp32 D, optional C, fp32 accumulation.
// cuBLASLt is column-major, so the row-major D[M,N] = A·Bᵀ is computed as its transpose
// Dᵀ[N,M] (col-major, ld = D's row stride) = op(B)·op(A), with B as cuBLASLt's "A" operand. FP8 operands must
// both be K-major: that makes cuBLASLt's A transposed and its B not, the "TN" form, the only one its FP8
// matmul takes on Hopper.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "reference/cublaslt_api.hpp"
#include "reference/cublaslt_context.hpp"
#include "reference/host_view.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm {

using reference_detail::pointer_alignment;
using reference_detail::view_string;

namespace {

void check_cuda(cudaError_t status, const char* what) {
  reference_detail::check_cuda_status(status, "cublaslt_gemm", what);
}

void check_cublas(cublasStatus_t status, const char* what) {
  reference_detail::check_cublas_status(status, "cublaslt_gemm", what);
}

// A [X,K] operand as a column-major cuBLASLt matrix: K-major storage is a K×X matrix with ld = stride(X),
// MN-major storage is an X×K matrix with ld = stride(K). A dimension of size 1 accepts any stride, and an empty
// operand any strides (it holds no element to address; K = 0 never reaches cuBLASLt).
struct Operand {
  bool k_major;
  std::uint64_t rows, cols;
  std::int64_t ld;
};

Operand describe_operand(const TensorView& v, const std::string& argument) {
  const std::int64_t x = v.size(-2), k = v.size(-1), sx = v.stride(-2), sk = v.stride(-1);
  if (x == 0 || k == 0)
    return {true, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(x), std::max<std::int64_t>(k, 1)};
  if ((sk == 1 || k <= 1) && (x <= 1 || sx >= std::max<std::int64_t>(k, 1)))
    return {true, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(x),
            x <= 1 ? std::max<std::int64_t>(k, 1) : sx};
  if ((sx == 1 || x <= 1) && (k <= 1 || sk >= std::max<std::int64_t>(x, 1)))
    return {false, static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(k),
            k <= 1 ? std::max<std::int64_t>(x, 1) : sk};
  throw InvalidArgument(argument, "a K-major (stride(-1) == 1) or MN-major (stride(-2) == 1) view without overlap",
                        view_string(v));
}

struct Problem {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
};

void require_device_view(const TensorView& v, const std::string& argument, int ndim) {
  TILEGEMM_REQUIRE(v.ndim == ndim, argument, fmt::format("{} dimensions (like a)", ndim), view_string(v));
  for (int i = 0; i < v.ndim; ++i) {
    TILEGEMM_REQUIRE(v.shape[i] >= 0, argument, "non-negative sizes", view_string(v));
    TILEGEMM_REQUIRE(v.strides[i] >= 0, argument, "non-negative strides", view_string(v));
  }
  TILEGEMM_REQUIRE(v.numel() == 0 || v.data != nullptr, argument, "a non-null data pointer", "nullptr");
}

// Row-major [M,N] output check shared by d and c: contiguous in N, rows not overlapping.
void require_output(const TensorView& v, const std::string& argument, const Problem& p, DType dtype) {
  const std::string want =
      v.ndim == 3 ? fmt::format("[{}, {}, {}]", p.batch, p.m, p.n) : fmt::format("[{}, {}]", p.m, p.n);
  TILEGEMM_REQUIRE(v.dtype == dtype, argument, fmt::format("dtype {}", dtype_name(dtype)), view_string(v));
  TILEGEMM_REQUIRE(v.size(-2) == p.m && v.size(-1) == p.n && (v.ndim == 2 || v.shape[0] == p.batch), argument,
                   fmt::format("shape {}", want), view_string(v));
  TILEGEMM_REQUIRE(v.stride(-1) == 1 || p.n <= 1, argument, "contiguous in N (stride(-1) == 1)", view_string(v));
  TILEGEMM_REQUIRE(v.stride(-2) >= p.n || p.m <= 1, argument, "a row stride >= N", view_string(v));
}

Problem check_arguments(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c) {
  TILEGEMM_REQUIRE(a.ndim == 2 || a.ndim == 3, "a", "a 2-D [M,K] or 3-D [B,M,K] view", view_string(a));
  require_device_view(a, "a", a.ndim);
  require_device_view(b, "b", a.ndim);
  require_device_view(d, "d", a.ndim);
  TILEGEMM_REQUIRE(a.dtype == DType::kBFloat16 || a.dtype == DType::kFloat8E4M3, "a", "dtype bf16 or fp8 (e4m3)",
                   view_string(a));
  TILEGEMM_REQUIRE(b.dtype == a.dtype, "b", fmt::format("dtype {} like a", dtype_name(a.dtype)), view_string(b));
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32, "d", "dtype bf16 or fp32",
                   view_string(d));
  Problem p{a.ndim == 3 ? a.shape[0] : 1, a.size(-2), b.size(-2), a.size(-1)};
  TILEGEMM_REQUIRE(b.size(-1) == p.k, "b", fmt::format("[N, K] with K = {} (from a)", p.k), view_string(b));
  if (a.ndim == 3)
    TILEGEMM_REQUIRE(b.shape[0] == p.batch, "b", fmt::format("batch {} (from a)", p.batch), view_string(b));
  require_output(d, "d", p, d.dtype);
  if (c) {
    require_device_view(*c, "c", a.ndim);
    require_output(*c, "c", p, d.dtype);
    if (c->data == d.data)
      TILEGEMM_REQUIRE(c->strides == d.strides, "c", fmt::format("d's strides when c aliases d ({})", view_string(d)),
                       view_string(*c));
  }
  return p;
}

// cuBLASLt's FP8 matmul on Hopper: both operands K-major (the TN form) with rows starting on 16-byte
// boundaries (its tensor-core alignment; an fp8 element is one byte, so the row stride in elements is in
// bytes).
void require_fp8_operand(const TensorView& v, const Operand& op, const std::string& argument) {
  TILEGEMM_REQUIRE(op.k_major, argument,
                   "a K-major FP8 operand (stride(-1) == 1): cuBLASLt's FP8 matmul takes only the TN form, both "
                   "operands K-major",
                   view_string(v));
  TILEGEMM_REQUIRE(
      op.ld % 16 == 0, argument,
      fmt::format("an FP8 row stride that is a multiple of 16 bytes (cuBLASLt's FP8 alignment; K = {})", v.size(-1)),
      view_string(v));
  TILEGEMM_REQUIRE(v.numel() == 0 || pointer_alignment(v.data) >= 16, argument,
                   "a 16-byte aligned data pointer (cuBLASLt's FP8 alignment)", view_string(v));
}

// K == 0: D = C (or zeros), which cuBLASLt does not accept as a matmul.
void fill_without_k(const TensorView& d, const TensorView* c, const Problem& p, cudaStream_t stream) {
  const std::size_t elem = d.dtype == DType::kFloat32 ? 4 : 2;
  for (std::int64_t g = 0; g < p.batch; ++g) {
    char* dst = static_cast<char*>(d.data) + (d.ndim == 3 ? g * d.strides[0] : 0) * elem;
    const std::size_t pitch = static_cast<std::size_t>(std::max<std::int64_t>(d.stride(-2), p.n)) * elem;
    if (c && c->data == d.data) continue;
    if (c) {
      const char* src = static_cast<const char*>(c->data) + (c->ndim == 3 ? g * c->strides[0] : 0) * elem;
      const std::size_t src_pitch = static_cast<std::size_t>(std::max<std::int64_t>(c->stride(-2), p.n)) * elem;
      check_cuda(cudaMemcpy2DAsync(dst, pitch, src, src_pitch, p.n * elem, p.m, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpy2DAsync");
    } else {
      check_cuda(cudaMemset2DAsync(dst, pitch, 0, p.n * elem, p.m, stream), "cudaMemset2DAsync");
    }
  }
}

}  // namespace

TensorView transpose_last2(const TensorView& view) {
  TILEGEMM_REQUIRE(view.ndim >= 2, "view", "at least 2 dimensions", view_string(view));
  TensorView t = view;
  std::swap(t.shape[view.ndim - 2], t.shape[view.ndim - 1]);
  std::swap(t.strides[view.ndim - 2], t.strides[view.ndim - 1]);
  return t;
}

void cublaslt_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c, void* stream) {
  const Problem p = check_arguments(a, b, d, c);
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  const Operand op_b = describe_operand(b, "b");  // cuBLASLt's A: must become N×K
  const Operand op_a = describe_operand(a, "a");  // cuBLASLt's B: must become K×M
  const bool fp8 = a.dtype == DType::kFloat8E4M3;
  if (fp8) {
    require_fp8_operand(a, op_a, "a");
    require_fp8_operand(b, op_b, "b");
  }

  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice (is there a CUDA device?)");
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (p.k == 0) return fill_without_k(d, c, p, cuda_stream);
  reference_detail::CublasLtContext& ctx = reference_detail::cublaslt_context(device, stream, "cublaslt_gemm");

  const cudaDataType in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  const cudaDataType out_type = d.dtype == DType::kFloat32 ? CUDA_R_32F : CUDA_R_16BF;
  const std::int64_t batch_a = a.ndim == 3 ? a.strides[0] : 0, batch_b = b.ndim == 3 ? b.strides[0] : 0;
  const std::int64_t batch_d = d.ndim == 3 ? d.strides[0] : 0;
  const TensorView& c_view = c ? *c : d;
  const std::int64_t batch_c = c_view.ndim == 3 ? c_view.strides[0] : 0;
  const std::int64_t ld_d = p.m <= 1 ? std::max<std::int64_t>(p.n, 1) : d.stride(-2);
  const std::int64_t ld_c = p.m <= 1 ? std::max<std::int64_t>(p.n, 1) : c_view.stride(-2);
  const cublasOperation_t trans_a = op_b.k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = op_a.k_major ? CUBLAS_OP_N : CUBLAS_OP_T;

  reference_detail::MatmulDesc desc("cublaslt_gemm", trans_a, trans_b);
  if (fp8) {
    // Full-precision accumulation (DeepGEMM sets it too; fast accumulation keeps fewer bits between K
    // slices).
    const std::int8_t fast_accumulate = 0;
    desc.set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accumulate, "set FAST_ACCUM");
  }
  using reference_detail::MatrixLayout;
  const MatrixLayout layout_a("cublaslt_gemm", in_type, op_b.rows, op_b.cols, op_b.ld, p.batch, batch_b);
  const MatrixLayout layout_b("cublaslt_gemm", in_type, op_a.rows, op_a.cols, op_a.ld, p.batch, batch_a);
  const MatrixLayout layout_c("cublaslt_gemm", out_type, p.n, p.m, ld_c, p.batch, batch_c);
  const MatrixLayout layout_d("cublaslt_gemm", out_type, p.n, p.m, ld_d, p.batch, batch_d);
  const std::uint32_t alignments[4] = {pointer_alignment(b.data), pointer_alignment(a.data),
                                       pointer_alignment(c_view.data), pointer_alignment(d.data)};

  // The heuristic query costs more than a small GEMM, so its answer is cached per problem.
  const std::string key =
      fmt::format("{}|{}{}|{},{}|{}x{}x{}x{}|{},{},{},{}|{},{},{},{}|{},{},{},{}", device, static_cast<int>(trans_a),
                  static_cast<int>(trans_b), static_cast<int>(in_type), static_cast<int>(out_type), p.batch, p.m, p.n,
                  p.k, op_b.ld, op_a.ld, ld_c, ld_d, batch_b, batch_a, batch_c, batch_d, alignments[0], alignments[1],
                  alignments[2], alignments[3]);
  cublasLtMatmulAlgo_t algo;
  cublasStatus_t status;
  if (!reference_detail::cached_heuristic_algo(ctx, "cublaslt_gemm", key, desc.handle, layout_a.handle, layout_b.handle,
                                               layout_c.handle, layout_d.handle, alignments, &algo, &status)) {
    check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
    throw RuntimeError(fmt::format("cublaslt_gemm: cuBLASLt has no algorithm for a {} b {} d {}", view_string(a),
                                   view_string(b), view_string(d)));
  }

  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  check_cublas(cublaslt().cublasLtMatmul(ctx.handle, desc.handle, &alpha, b.data, layout_a.handle, a.data,
                                         layout_b.handle, &beta, c_view.data, layout_c.handle, d.data, layout_d.handle,
                                         &algo, ctx.workspace, reference_detail::kCublasLtWorkspaceBytes, cuda_stream),
               "cublasLtMatmul");
}

void cublaslt_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                      void* stream) {
  cublaslt_gemm(a, b, d, c, stream);
}
void cublaslt_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                      void* stream) {
  cublaslt_gemm(a, transpose_last2(b), d, c, stream);
}
void cublaslt_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                      void* stream) {
  cublaslt_gemm(transpose_last2(a), transpose_last2(b), d, c, stream);
}
void cublaslt_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                      void* stream) {
  cublaslt_gemm(transpose_last2(a), b, d, c, stream);
}

}  // namespace tilegemm
