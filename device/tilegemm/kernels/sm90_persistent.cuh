#pragma once
// The persistent, warp-specialised CTA both SM90 GEMM kernels run: thread 0 prefetches the tensor maps and
// initialises the stage barriers, the CTA (and its cluster peer) syncs, PDL lets the next kernel's prologue
// start, then warpgroup 0 produces and the others consume, each with its register budget, and the CTA leaves
// together with its peer.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"

namespace tilegemm {

// Register budgets per thread with two consumer warpgroups (setmaxnreg): the producer warpgroup, which only issues
// loads, gives registers up so the consumers can hold their fp32 accumulators. 128 x 40 + 256 x 232 = 384 x 168,
// the budget the kernels' launch bounds leave a 384-thread CTA.
inline constexpr int kProducerRegisters = 40;
inline constexpr int kConsumerRegisters = 232;

// Named barriers (id 0 is __syncthreads): consumer warpgroup w's own (its epilogue, its split-K fixup) is 1 + w.
inline constexpr u32 kFirstWarpgroupBarrier = 1;
TG_DEVICE constexpr u32 warpgroup_barrier(int math_wg) {
  return kFirstWarpgroupBarrier + math_wg;
}

// init(): thread 0, before any other thread touches a barrier. produce(pair, thread_in_wg): warpgroup 0.
// consume(pair, math_wg, thread_in_wg): warpgroups 1..kMathWGs; their last TMA store is waited for here.
template <int kMathWGs, class Pair, class Init, class Produce, class Consume>
TG_DEVICE void sm90_persistent_cta(Init&& init, Produce&& produce, Consume&& consume) {
  const int warpgroup = static_cast<int>(warp_uniform(threadIdx.x / 128));
  const int thread_in_wg = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    init();
    prim::fence_barrier_init();
  }
  Pair pair;
  pair.sync_after_init();
  prim::pdl_prologue_done();

  if (warpgroup == 0) {
    if constexpr (kMathWGs == 2) prim::setmaxnreg_dec<kProducerRegisters>();
    produce(pair, thread_in_wg);
  } else {
    if constexpr (kMathWGs == 2) prim::setmaxnreg_inc<kConsumerRegisters>();
    consume(pair, warpgroup - 1, thread_in_wg);
    // Shared memory must outlive the last store's reads, and results must be visible at kernel end.
    if (thread_in_wg == 0) prim::tma_store_wait<0>();
  }
  pair.sync_before_exit();
}

}  // namespace tilegemm
