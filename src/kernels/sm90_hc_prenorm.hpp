#pragma once
// Host side of the SM90 HC-prenorm kernel (device/tilegemm/kernels/sm90_tf32_hc_prenorm_gemm.cuh): its generated
// source and its launch.
#include "tilegemm/hc_prenorm.hpp"
#include "tilegemm/hc_prenorm_params.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

// The kernel of (N, stages, splits summed in the kernel or not, rows of A per CTA, CTAs per cluster).
jit::KernelSpec sm90_hc_prenorm_spec(int n, int stages, bool reduce_in_kernel, int block_m, int cluster);

// The kernel `config`'s launch runs: the one launch_sm90_hc_prenorm JITs and hc_prenorm_kernel_specs precompiles.
jit::KernelSpec sm90_hc_prenorm_spec(const HcPrenormConfig& config);

// Launches `config`'s kernel with `params` (tensor maps and pointers filled by the caller) on `stream`.
void launch_sm90_hc_prenorm(const HcPrenormConfig& config, const HcPrenormParams& params, void* stream);

}  // namespace tilegemm::kernels
