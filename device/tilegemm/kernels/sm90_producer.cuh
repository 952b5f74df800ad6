#pragma once
// The producer loop both SM90 GEMM kernels run on one elected thread: walk the same tiles as the consumers and,
// for every K block, wait for a free stage, announce its transaction bytes and issue its TMA loads.
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/sched/gemm_scheduler.cuh"

namespace tilegemm {

// load_stage(tile, k0, stage, full_barrier) issues the stage's loads; tx_bytes is what they deliver.
template <class Scheduler, int kStages, int BLOCK_K, class LoadStage>
TG_DEVICE void sm90_produce(const GemmParams& gemm, prim::StageBarriers<kStages>* barriers, u32 tx_bytes,
                            LoadStage&& load_stage) {
  Scheduler scheduler(gemm);
  prim::PipelineState<kStages> st;
  sched::Tile tile;
  while (scheduler.next(tile)) {
    for (int kb = 0; kb < tile.k_blocks; ++kb) {
      barriers->producer_acquire(st);
      u64* full = &barriers->inputs_arrived[st.index];
      barriers->producer_commit(st, tx_bytes);
      load_stage(tile, tile.k0 + kb * BLOCK_K, static_cast<int>(st.index), full);
      st.advance();
    }
  }
}

// A side producer: a second thread walking the same stages that fills a small part of each one by other means
// (cp.async) and arrives on its full barrier itself, so the TMA thread keeps its few registers. fill_stage(tile,
// k0, stage, full_barrier) must arrive on the barrier once (StageBarriers::init counts it).
template <class Scheduler, int kStages, int BLOCK_K, class FillStage>
TG_DEVICE void sm90_produce_side(const GemmParams& gemm, prim::StageBarriers<kStages>* barriers,
                                 FillStage&& fill_stage) {
  Scheduler scheduler(gemm);
  prim::PipelineState<kStages> st;
  sched::Tile tile;
  while (scheduler.next(tile)) {
    for (int kb = 0; kb < tile.k_blocks; ++kb) {
      barriers->producer_acquire(st);
      fill_stage(tile, tile.k0 + kb * BLOCK_K, static_cast<int>(st.index), &barriers->inputs_arrived[st.index]);
      st.advance();
    }
  }
}

}  // namespace tilegemm
