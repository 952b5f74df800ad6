#pragma once
// Host side of the SM90 BF16 GEMM family (which also runs int8 x int8) (device/tilegemm/kernels/sm90_bf16_gemm.cuh):
// generated source, tensor maps and the launch. Callers (src/api) validate arguments first.
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::kernels {

// wgmma groups a consumer keeps in flight before releasing a stage: 1 (measured best);
// TILEGEMM_MMA_IN_FLIGHT overrides it for tuning experiments. Always below the stage count.
int mma_groups_in_flight(const GemmConfig& config);

// The kernel for one (desc, config) pair: a unique name and a short source that fills the kernel's Config.
jit::KernelSpec sm90_bf16_gemm_spec(const GemmDesc& desc, const GemmConfig& config);

// Operands as 3-D views [batch, rows, cols]: a [B, M, K], b [B, N, K], d [B, M, N] (B = 1 for plain and
// contiguous-grouped A/D; B = groups for batched, masked, and grouped B). Strides say which dim is contiguous.
struct Sm90GemmOperands {
  TensorView a, b, d;
  const int* grouped_layout = nullptr;  // device pointer: per-row group index or masked_m
  bool accumulate = false;              // D += A·Bᵀ through TMA reduce-add
  // int8 x int8 only (device pointers, fp32): D = scale_a[m] · scale_b[n] · Σ a·b.
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
};

void launch_sm90_bf16_gemm(const GemmDesc& desc, const GemmConfig& config, const Sm90GemmOperands& ops, void* stream);

}  // namespace tilegemm::kernels
