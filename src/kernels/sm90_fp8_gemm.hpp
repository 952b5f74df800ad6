#pragma once
// Host side of the SM90 FP8 GEMM family (device/tilegemm/kernels/sm90_fp8_gemm.cuh): generated source,
// tensor maps and the launch. Callers (src/api/fp8_gemm.cpp) validate arguments first.
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::kernels {

// The kernel for one (desc, config) pair: a unique name and a short source that fills the kernel's Config.
// The recipe follows desc.d_dtype: bf16 D → 1D2D, fp32 D → 1D1D.
jit::KernelSpec sm90_fp8_gemm_spec(const GemmDesc& desc, const GemmConfig& config);

// Operands as 3-D views: a [B, M, K], b [B, N, K], d [B, M, N]; sfa [B, M, K/128] per token; sfb [B, N, K/128] per
// token (1D1D) or [B, ceil(N/128), K/128] per block (1D2D); scales in any strides.
struct Sm90Fp8Operands {
  TensorView a, sfa, b, sfb, d;
  const int* grouped_layout = nullptr;  // device pointer: per-row group index, prefix sums, masked_m or ks
};

// Groups per launch of a K-grouped problem of `groups` groups on per-group maps: the smallest of 4, 8, 16 and 32 that
// holds them all, else 32 (launched in chunks).
int sm90_fp8_group_maps_per_launch(int groups);

void launch_sm90_fp8_gemm(const GemmDesc& desc, const GemmConfig& config, const Sm90Fp8Operands& ops, void* stream);

}  // namespace tilegemm::kernels
