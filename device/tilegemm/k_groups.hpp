#pragma once
// K groups of the small-M mma.sync kernels (weight-only, FP8 x FP4; kernels/k_group_sum.cuh): a CTA runs 1, 2 or 4
// sets of consumer warps that take turns at the ring's stages, plus one producer warp. Its threads and the shared
// memory the sets' sum needs, for the host's launch and the kernels' checks alike. Plain data only.
#include "tilegemm/gemm_params.hpp"  // TG_HOST_DEVICE

namespace tilegemm {

TG_HOST_DEVICE constexpr int k_group_threads(int consumer_warps, int k_groups) {
  return (consumer_warps * k_groups + 1) * 32;
}

// Sets 1.. hand their accumulators (BLOCK_M / 2 floats a lane) to set 0 through [set - 1][warp][float][lane].
TG_HOST_DEVICE constexpr int k_group_scratch_bytes(int consumer_warps, int block_m, int k_groups) {
  return (k_groups - 1) * consumer_warps * (block_m / 2) * 32 * 4;
}

}  // namespace tilegemm
