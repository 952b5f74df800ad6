#pragma once
// References: a float64 CPU GEMM for tests, DeepGEMM's calc_diff, bf16 conversions, and the
// cuBLASLt baseline used by the benchmark and as an on-device cross-check.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// bf16 is stored as its raw 16 bits on the host. Rounds to nearest, ties to even; NaN stays a (quiet) NaN
// and never rounds into an infinity.
std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);

// One element of a host view as double (bf16, fp16 or fp32 storage). `index` has view.ndim entries.
double host_element(const TensorView& view, std::span<const std::int64_t> index);

// D = C + A·Bᵀ in float64 over views of HOST memory. a: [M,K] or [B,M,K]; b: [N,K] or [B,N,K]; c: optional,
// [M,N] or [B,M,N]. Any strides (K-major, MN-major, padded). Element types: bf16, fp16 or fp32.
// Returns [B,M,N] (B = 1 for 2-D views) in row-major order. Rows are spread over `num_threads` threads
// (0 = hardware concurrency).
std::vector<double> reference_gemm(const TensorView& a, const TensorView& b, const TensorView* c = nullptr,
                                   unsigned num_threads = 0);

// The same for a subset of the rows of 2-D views only: returns [rows.size(), N], row r of the result being
// row rows[r] of D. Lets a test check a sample of a GEMM too large for a full float64 reference.
std::vector<double> reference_gemm_rows(const TensorView& a, const TensorView& b, const TensorView* c,
                                        std::span<const std::int64_t> rows, unsigned num_threads = 0);

// DeepGEMM's similarity measure: 1 − 2·Σxy / Σ(x² + y²), accumulated in double. 0 for identical inputs
// (also when both are all zero), NaN when either holds a NaN. Sizes must match (InvalidArgument "y").
double calc_diff(std::span<const double> x, std::span<const double> y);

// Reads a whole host view ([.., M, N], any strides) into a row-major vector of doubles.
std::vector<double> host_to_doubles(const TensorView& view);

// ---- cuBLASLt baseline (device memory, runs on `stream`, a cudaStream_t) ----------------------------
// D = C + A·Bᵀ with a bf16 [M,K] (or [B,M,K]) and b bf16 [N,K] (or [B,N,K]) whose strides say K-major or
// MN-major (as in gemm.hpp); d bf16 or fp32, contiguous in N; c optional with d's shape, dtype and strides
// (c may be d itself: D += A·Bᵀ). FP32 accumulation. a and b may instead both be e4m3 (DeepGEMM's
// cublaslt_gemm_* with FP8 operands: unscaled, full-precision accumulation); then both must be K-major
// (cuBLASLt's FP8 matmul takes only the TN form) with row strides and pointers 16-byte aligned, and an
// MN-major one is an InvalidArgument naming it. The handle and a 32 MiB workspace are cached per
// (device, stream) and the heuristic's algorithm per problem. Bad views throw InvalidArgument naming the
// argument; cuBLAS and CUDA failures throw RuntimeError with the status name.
void cublaslt_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr,
                   void* stream = nullptr);

// DeepGEMM's named layouts, each taking the operands in their storage shape:
// nt: a [M,K], b [N,K]; nn: a [M,K], b [K,N]; tn: a [K,M], b [K,N]; tt: a [K,M], b [N,K]
// (DeepGEMM: tn computes a.T @ b, tt computes a.T @ b.T).
void cublaslt_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr,
                      void* stream = nullptr);
void cublaslt_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr,
                      void* stream = nullptr);
void cublaslt_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr,
                      void* stream = nullptr);
void cublaslt_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c = nullptr,
                      void* stream = nullptr);

// Swaps the last two dimensions (shape and strides) of a view; the data is not touched.
TensorView transpose_last2(const TensorView& view);

// ---- cuBLASLt FP8 baseline (e4m3 A and B, bf16 D; sm_90, cuBLASLt >= 12.9 for block scaling) ----------
// D = (A · sfa) · (B · sfb)ᵀ with a e4m3 [M,K] and b e4m3 [N,K], both K-major (stride(-1) == 1: cuBLASLt's
// FP8 matmul on Hopper takes only the "TN" form), d bf16 [M,N] contiguous in N. FP32 accumulation with the
// default (non-fast) accumulation mode, as torch._scaled_mm issues it. 2-D views only.
enum class CublasLtFp8Scaling : int {
  // sfa and sfb each hold one fp32 (numel() == 1): CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER, SCALAR_32F.
  kPerTensor = 0,
  // DeepSeek's recipe: sfa 1×128 per token (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F), sfb 128×128 per block
  // (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F). kb = ceil(K / 128). The layouts cuBLASLt reads (it takes
  // only a pointer, so the strides below are exactly what it assumes; PyTorch's ATen checks its block-wise
  // scales the same way, and NVIDIA's LtBlk128x128Fp8Matmul sample sizes its buffers to match):
  //   sfa fp32 [M, kb], M contiguous ("outer-dim-major"): stride(-2) == 1 and stride(-1) == M exactly.
  //   sfb fp32 [ceil(N/128), kb], K blocks contiguous: stride(-1) == 1 and stride(-2) == round_up(kb, 4)
  //       (each row of block scales starts 16-byte aligned).
  // tilegemm's own FP8 kernels (fp8_gemm.hpp) pad differently: their sfa column stride is M rounded up to a
  // multiple of 4 and their sfb row stride is kb. The two agree when M % 4 == 0 and kb % 4 == 0 (every
  // DeepSeek shape); otherwise pack the same logical scales twice (pack_cublaslt_fp8_scales below).
  kBlockwise = 1,
};
std::string_view cublaslt_fp8_scaling_name(CublasLtFp8Scaling scaling);  // "per-tensor" / "1x128/128x128"

// The strides cuBLASLt assumes for the kBlockwise scale tensors (see above).
std::int64_t cublaslt_sfa_column_stride(std::int64_t m);  // = m
std::int64_t cublaslt_sfb_row_stride(std::int64_t k);     // = round_up(ceil(k / 128), 4)

// Packs logical scales, row-major [rows, ceil(k/128)] on the host (sfa: rows = M; sfb: rows = ceil(N/128)),
// into the buffer cuBLASLt reads for kBlockwise: sfa → [kb][M] (M contiguous), sfb → [ceil(N/128)][round_up(kb,
// 4)] (padding zero). Throws InvalidArgument("logical") when the size does not match.
std::vector<float> pack_cublaslt_sfa(std::span<const float> logical, std::int64_t m, std::int64_t k);
std::vector<float> pack_cublaslt_sfb(std::span<const float> logical, std::int64_t n, std::int64_t k);

// Bad views (dtype, shape, strides, scale layout) throw InvalidArgument naming the argument ("a", "sfa", "b",
// "sfb", "d"). cuBLAS/CUDA failures throw RuntimeError with the status name, also when the heuristic offers
// no algorithm for the problem (e.g. an alignment or K it does not support) or the cuBLASLt loaded at run
// time predates 12.9 (kBlockwise). M, N or K of 0 are handled without cuBLASLt (K = 0 writes zeros).
void cublaslt_fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                          const TensorView& d, CublasLtFp8Scaling scaling, void* stream = nullptr);

}  // namespace tilegemm
