#pragma once
// Host side of the scaling-factor layout kernels (device/tilegemm/kernels/sf_layout.cuh): the generated
// source of each variant and the launches. Callers (sf_layout_api.cpp) validate the tensors first.
//
// Each kernel's extern "C" entry point is named for what it does, because profilers (DeepGEMM's tests time
// these with bench_kineto) find kernels by substrings of their names: "transpose" and
// "pack_fp32_into_ue8m0" as DeepGEMM's own kernels are called. No name contains "gemm_", which the GEMM
// tests count kernels by.
#include <tilegemm/kernels/sf_layout.cuh>
#include "tilegemm/jit.hpp"

namespace tilegemm::layout {

enum class SfKernel { kTransposeFp32, kPackUe8m0, kKGroupedPackUe8m0 };
inline constexpr SfKernel kAllSfKernels[] = {SfKernel::kTransposeFp32, SfKernel::kPackUe8m0,
                                             SfKernel::kKGroupedPackUe8m0};

jit::KernelSpec sf_layout_spec(SfKernel which);

// kTransposeFp32 / kPackUe8m0 over groups x tiles (sf_layout.cuh). `params` must be complete, tile_k_log2
// included.
void launch_sf_layout(SfKernel which, const SfLayoutParams& params, int groups, void* stream);

// kKGroupedPackUe8m0 over packed_sf_k rows x ceil(mn / 1024) column blocks.
void launch_sf_k_grouped_pack(const SfKGroupedPackParams& params, void* stream);

}  // namespace tilegemm::layout
