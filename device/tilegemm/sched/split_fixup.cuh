#pragma once
// The reduction of a cut tile (split-K / stream-K), done by one consumer warpgroup on its own rows of the
// tile, straight from its wgmma accumulator registers (no shared memory):
//
//   1. publish this part:  deterministic → store the fp32 partial into its own workspace slot;
//                          otherwise     → reduce-add it (red.global.add.v4.f32, in L2) into the tile's slot;
//   2. arrive: a barrier over the warpgroup, then one acq_rel increment of the (tile, warpgroup) counter;
//   3. the part that arrives last owns the tile: it resets the counter to 0 for the next launch and loads
//      the sum into its accumulators — deterministic: part 0 + part 1 + … in that fixed order; otherwise the
//      reduced slot, which it zeroes again — then runs the ordinary epilogue. The others move on.
//
// No CTA ever waits for another, so any grid size and any mix of parts per CTA is deadlock-free.
// Workspace values are kept in accumulator-fragment order: thread t's float4 chunk j of 64-row sub-block s
// sits at ((s · BLOCK_N/8 + j) · 128 + t) · 4, so each warp moves 512 contiguous bytes per access.
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/global_memory.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"

namespace tilegemm::sched {

template <int kSubM, int BLOCK_N, int kMathWGs, bool kDeterministic>
struct SplitFixup {
  static constexpr int kChunks = BLOCK_N / 8;               // float4 chunks per 64-row sub-block per thread
  static constexpr int kWgFloats = kSubM * 64 * BLOCK_N;    // one warpgroup's rows of a tile
  static constexpr int kTileFloats = kWgFloats * kMathWGs;  // one workspace slot
  static_assert(BLOCK_N % 8 == 0, "accumulator chunks of 4 floats");

  TG_DEVICE static int offset(int s, int j, int thread) { return ((s * kChunks + j) * 128 + thread) * 4; }

  // Returns true when this warpgroup now holds the whole tile's sum in `acc` and must store it.
  // `barrier_id` is the warpgroup's own named barrier (128 threads).
  template <class Scheduler>
  TG_DEVICE static bool reduce(const GemmParams& p, const Scheduler& scheduler, const Tile& tile,
                               float (&acc)[kSubM][BLOCK_N / 2], int math_wg, int thread, u32 barrier_id) {
    const i64 wg_offset = static_cast<i64>(math_wg) * kWgFloats;
    auto slot_base = [&](int slot) { return p.workspace + static_cast<i64>(slot) * kTileFloats + wg_offset; };
    const int cut = scheduler.cut_index(tile.tile_index);
    float* shared_sum = slot_base(cut);  // non-deterministic mode: one slot per tile that can be cut

    // 1. publish
    float* mine = kDeterministic ? slot_base(scheduler.slot(tile.tile_index, tile.part)) : shared_sum;
#pragma unroll
    for (int s = 0; s < kSubM; ++s)
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        const float* a = &acc[s][4 * j];
        if constexpr (kDeterministic)
          prim::st_global_f32x4(mine + offset(s, j, thread), a[0], a[1], a[2], a[3]);
        else
          prim::red_add_global_f32x4(mine + offset(s, j, thread), a[0], a[1], a[2], a[3]);
      }

    // 2. arrive. NOTE: the barrier orders every thread's writes before thread 0's release (the CUTLASS
    // semaphore pattern: barrier, fence, atomic); the acquire half makes the other parts' writes visible
    // to the last arriver, and the second barrier passes that on to its warpgroup.
    prim::named_barrier_sync(barrier_id, 128);
    bool last = false;
    if (thread == 0) {
      int* counter = p.tile_counters + static_cast<i64>(cut) * kMathWGs + math_wg;
      prim::fence_acq_rel_gpu();
      last = prim::atomic_add_acq_rel_gpu(counter, 1) == tile.parts - 1;
      if (last) prim::st_relaxed_gpu(counter, 0);  // no other part touches it again this launch
    }
    if (!prim::named_barrier_or(barrier_id, 128, last)) return false;

    // 3. sum
    if constexpr (kDeterministic) {
      // acc holds part `tile.part`; part 0 must come first, so reload unless we are part 0 ourselves.
      if (tile.part != 0) load(slot_base(scheduler.slot(tile.tile_index, 0)), acc, thread, false);
      for (int q = 1; q < tile.parts; ++q) load(slot_base(scheduler.slot(tile.tile_index, q)), acc, thread, true);
      // NOTE: the atomic mode reduce-adds into these same bytes in a later launch and relies on finding zeros.
      for (int q = 0; q < tile.parts; ++q) zero(slot_base(scheduler.slot(tile.tile_index, q)), thread);
    } else {
      load(shared_sum, acc, thread, false);
      zero(shared_sum, thread);
    }
    return true;
  }

  // Leaves this warpgroup's part of a slot zeroed for the next launch (the workspace invariant).
  TG_DEVICE static void zero(float* dst, int thread) {
#pragma unroll
    for (int s = 0; s < kSubM; ++s)
#pragma unroll
      for (int j = 0; j < kChunks; ++j) prim::st_global_f32x4(dst + offset(s, j, thread), 0.f, 0.f, 0.f, 0.f);
  }

  // acc = slot (add = false) or acc += slot (add = true); the loads do not depend on each other, so the
  // whole slot is in flight at once.
  TG_DEVICE static void load(const float* src, float (&acc)[kSubM][BLOCK_N / 2], int thread, bool add) {
#pragma unroll
    for (int s = 0; s < kSubM; ++s)
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        float v[4];
        prim::ld_global_cg_f32x4(src + offset(s, j, thread), v[0], v[1], v[2], v[3]);
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[s][4 * j + e] = add ? acc[s][4 * j + e] + v[e] : v[e];
      }
  }
};

}  // namespace tilegemm::sched
