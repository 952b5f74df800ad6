#pragma once
// Host side of the scaling-factor layout kernels (device/tilegemm/kernels/sf_layout.cuh): the generated
// source of each variant and the launch. Callers (sf_layout_api.cpp) validate the tensors first.
#include "tilegemm/jit.hpp"
#include <tilegemm/kernels/sf_layout.cuh>

namespace tilegemm::layout {

enum class SfKernel { kTransposeFp32, kPackUe8m0 };
inline constexpr SfKernel kAllSfKernels[] = {SfKernel::kTransposeFp32, SfKernel::kPackUe8m0};

jit::KernelSpec sf_layout_spec(SfKernel which);

// Launches over groups x ceil(mn / 32) x ceil(kb / 32) tiles. `params` must be complete.
void launch_sf_layout(SfKernel which, const SfLayoutParams& params, int groups, void* stream);

}  // namespace tilegemm::layout
