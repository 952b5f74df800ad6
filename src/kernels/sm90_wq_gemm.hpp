#pragma once
// Host side of the weight-only quantised GEMM's kernels: the fused small-M GEMM
// (device/tilegemm/kernels/sm90_wq_gemm.cuh) and the dequantise kernel (sm90_wq_dequant.cuh), their generated
// sources and launches.
#include "tilegemm/jit.hpp"
#include "tilegemm/weight_quant.hpp"
#include "tilegemm/wq_params.hpp"

namespace tilegemm::kernels {

// The fused kernel of a weight layout, D's dtype, `config` (block_m, stages, splits > 1 summed in the kernel) and the
// GEMM type (normal, m_grouped_contiguous or m_grouped_masked).
jit::KernelSpec sm90_wq_gemm_spec(const WeightLayout& w, DType d_dtype, const WqGemmConfig& config,
                                  GemmType type = GemmType::kNormal);

// The dequantise kernel of a weight layout.
jit::KernelSpec sm90_wq_dequant_spec(const WeightLayout& w);

// Launches `config`'s fused kernel with `params` (filled by the caller) on `stream`.
void launch_sm90_wq_gemm(const WeightLayout& w, DType d_dtype, const WqGemmConfig& config, GemmType type,
                         const WqGemmParams& params, void* stream);

// Decodes the weight `params` describes into `out` [N][ldo] on `stream`.
void launch_sm90_wq_dequant(const WeightLayout& w, const WqGemmParams& params, void* out, long long ldo, void* stream);

}  // namespace tilegemm::kernels
