#pragma once
// K groups of the small-M mma.sync kernels (sm90_wq_gemm.cuh, sm90_fp8_fp4_gemm.cuh): a CTA runs kKGroups sets of
// kConsumerWarps consumer warps, set i decoding the stages in ring slots i, i + kKGroups, ... At the end of a token
// block the sets' accumulators meet in shared memory: sets 1.. store theirs, set 0 adds them in set order (the same
// sum on every run) and goes on to store the tile while the other sets start the next token block.
#include "tilegemm/k_groups.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"

namespace tilegemm {

template <int kConsumerWarps, int kKGroups, int kNTiles>
struct KGroupSum {
  static constexpr int kLanes = 32, kAccFloats = kNTiles * 4;
  static constexpr int kSetFloats = kConsumerWarps * kAccFloats * kLanes;  // one set's accumulators
  // Shared memory the sum needs: [set - 1][warp][float][lane] (lane-fastest: no bank conflicts).
  static constexpr int kScratchBytes = k_group_scratch_bytes(kConsumerWarps, kNTiles * 8, kKGroups);

  // Whether slot `index` of a ring of a multiple of kKGroups stages belongs to set `set`.
  TG_DEVICE static bool owns(u32 index, int set) { return kKGroups == 1 || static_cast<int>(index) % kKGroups == set; }

  // Every consumer thread calls this once per token block (`barrier`: a named barrier none of them uses otherwise);
  // true for set 0, whose `acc` then holds the sum of all sets.
  TG_DEVICE static bool sum(float (&acc)[kNTiles][4], float* scratch, int set, int warp_in_set, int lane, u32 barrier) {
    if constexpr (kKGroups == 1) return true;
    float* lane_scratch = scratch + warp_in_set * kAccFloats * kLanes + lane;
    if (set > 0) {
      float* to = lane_scratch + (set - 1) * kSetFloats;
#pragma unroll
      for (int i = 0; i < kAccFloats; ++i) to[i * kLanes] = acc[i / 4][i % 4];
    }
    prim::named_barrier_sync(barrier, kKGroups * kConsumerWarps * 32);
    if (set == 0) {
#pragma unroll
      for (int other = 1; other < kKGroups; ++other) {
        const float* from = lane_scratch + (other - 1) * kSetFloats;
#pragma unroll
        for (int i = 0; i < kAccFloats; ++i) acc[i / 4][i % 4] += from[i * kLanes];
      }
    }
    prim::named_barrier_sync(barrier, kKGroups * kConsumerWarps * 32);  // the scratch is free for the next block
    return set == 0;
  }
};

}  // namespace tilegemm
