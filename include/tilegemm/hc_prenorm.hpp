#pragma once
// The mHC pre-norm GEMM of DeepSeek-V3.2 (DeepGEMM's tf32_hc_prenorm_gemm) on SM90:
//   D = A·Bᵀ with TF32 products (fp32 B's low 13 mantissa bits ignored, as cuBLAS's TF32 GEMMs do) and
//   sqr_sum[m] = Σ_k A[m, k]², both from one pass over A.
// A bf16 [M, K], B fp32 [N, K] (both K contiguous, rows 16-byte aligned), N in {8, 16, 24, 32}.
// Without num_splits, D is fp32 [M, N] (N contiguous) and sqr_sum fp32 [M]: the library picks the K split and sums it
// inside the kernel. With num_splits = S, D is [S, M, N] and sqr_sum [S, M], each split's partial sums in its own
// slice (DeepGEMM's contract: the caller adds them).
#include <optional>
#include <string>
#include <vector>

#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// How one HC-prenorm call runs, with the model numbers behind the split.
struct HcPrenormConfig {
  int m = 0, n = 0, k = 0;
  int block_m = 64;               // rows of A per CTA: 16 or 64, whichever the model finds faster
  int num_splits = 1;             // K slices per row block
  bool caller_splits = false;     // num_splits came from the caller (partials in D's slices)
  bool reduce_in_kernel = false;  // the library's splits > 1, summed in the kernel
  int cluster = 1;                // CTAs per cluster, summing their splits in distributed shared memory first
  int stages = 0;
  int smem_bytes = 0;
  int grid = 0;             // CTAs: row blocks × splits
  double bytes = 0;         // DRAM bytes: A, B once, D and sqr_sum (and the partials, reduce_in_kernel)
  double floor_us = 0;      // bytes at the DRAM bandwidth
  double predicted_us = 0;  // the split model's time for the chosen split
};

// The configuration for (m, n, k) on `hw` with `num_sms` SMs: num_splits as given, or (nullopt) the split the
// model predicts fastest. Throws InvalidArgument for sizes the kernel does not take.
HcPrenormConfig select_hc_prenorm_config(int m, int n, int k, std::optional<int> num_splits, const HardwareModel& hw,
                                         int num_sms);

// One line for DG_PRINT_CONFIGS and `tilegemm plan`.
std::string format_hc_prenorm_config(const HcPrenormConfig& config);

// The model's microseconds for one call in row blocks of `block_m` (16 or 64) rows and `splits` K slices, summed in
// the kernel or not (in clusters of `cluster` CTAs, which divides splits): what select_hc_prenorm_config compares.
double hc_prenorm_model_us(int m, int n, int k, int block_m, int splits, bool reduce_in_kernel, const HardwareModel& hw,
                           int num_sms, int cluster = 1);

// deep_gemm.precompile: the distinct kernels the calls of every M in `ms` with (n, k, num_splits) launch on `hw` with
// `num_sms` SMs (0, or more than hw has: all of hw's, as the call), in first-use order: the configuration and the
// kernel spec of the call's own path, so the same JIT cache keys. M = 0 launches nothing. Throws InvalidArgument
// naming m, n, k, num_splits or hw as select_hc_prenorm_config does.
std::vector<jit::KernelSpec> hc_prenorm_kernel_specs(const std::vector<int>& ms, int n, int k,
                                                     std::optional<int> num_splits, const HardwareModel& hw,
                                                     int num_sms);

// The operation. Checks every argument (InvalidArgument naming it) before touching the GPU; M = 0 does nothing.
void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          std::optional<int> num_splits, const GemmOptions& options = {});

}  // namespace tilegemm
