#pragma once
// References (F11): a float64 CPU GEMM for tests, DeepGEMM's calc_diff, bf16 conversions, and the
// cuBLASLt baseline used by the benchmark and as an on-device cross-check.
#include <cstdint>
#include <span>
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
// (c may be d itself: D += A·Bᵀ). FP32 accumulation. The handle and a 32 MiB workspace are cached per
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

}  // namespace tilegemm
