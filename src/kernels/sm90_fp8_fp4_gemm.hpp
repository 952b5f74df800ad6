#pragma once
// Host side of the SM90 FP8 x FP4 GEMM (device/tilegemm/kernels/sm90_fp8_fp4_gemm.cuh): its generated source and
// launch.
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/fp8_fp4_params.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

// The kernel of D's dtype and `config` (block_m, stages, splits > 1 summed in the kernel).
jit::KernelSpec sm90_fp8_fp4_gemm_spec(DType d_dtype, const Fp8Fp4GemmConfig& config);

// Launches `config`'s kernel with `params` (filled by the caller) on `stream`.
void launch_sm90_fp8_fp4_gemm(DType d_dtype, const Fp8Fp4GemmConfig& config, const Fp8Fp4GemmParams& params,
                              void* stream);

}  // namespace tilegemm::kernels
