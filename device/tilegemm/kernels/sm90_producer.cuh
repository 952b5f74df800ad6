#pragma once
// The producer loops both SM90 GEMM kernels run on elected threads: walk the same tiles as the consumers and,
// for every K block, wait for a free stage, announce its transaction bytes and issue its TMA loads (and, FP8
// 1D2D, copy its B scales from a second thread).
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"

namespace tilegemm {

// Walks this CTA's tiles (the consumers walk the same ones) and, for every K block, waits until the stage is
// free and calls on_stage(tile, k0, stage, full_barrier). Also the loop of a side producer: a second thread
// that fills a small part of each stage by other means (cp.async) and arrives on its full barrier itself
// (StageBarriers::init counts it), so the TMA thread keeps its few registers.
template <class Scheduler, int kStages, int BLOCK_K, class OnStage>
TG_DEVICE void sm90_walk_stages(const GemmParams& gemm, prim::StageBarriers<kStages>* barriers, OnStage&& on_stage) {
  Scheduler scheduler(gemm);
  prim::PipelineState<kStages> st;
  sched::Tile tile;
  while (scheduler.next(tile)) {
    for (int kb = 0; kb < tile.k_blocks; ++kb) {
      barriers->producer_acquire(st);
      on_stage(tile, tile.k0 + kb * BLOCK_K, static_cast<int>(st.index), &barriers->inputs_arrived[st.index]);
      st.advance();
    }
  }
}

// The TMA producer: announces each stage's transaction bytes (tx_bytes(tile): a tail tile's A boxes are shorter),
// then load_stage(tile, k0, stage, full_barrier) issues the loads that deliver them.
template <class Scheduler, int kStages, int BLOCK_K, class TxBytes, class LoadStage>
TG_DEVICE void sm90_produce(const GemmParams& gemm, prim::StageBarriers<kStages>* barriers, TxBytes&& tx_bytes,
                            LoadStage&& load_stage) {
  sm90_walk_stages<Scheduler, kStages, BLOCK_K>(gemm, barriers,
                                                [&](const sched::Tile& tile, int k0, int stage, u64* full) {
                                                  prim::mbarrier_arrive_expect_tx(full, tx_bytes(tile));
                                                  load_stage(tile, k0, stage, full);
                                                });
}

}  // namespace tilegemm
