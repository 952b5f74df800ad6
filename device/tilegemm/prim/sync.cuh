#pragma once
// Barriers and fences.
//  - mbarrier wrappers: arrive / expect-tx / parity wait on a 64-bit shared-memory barrier (sm_90).
//  - PipelineState: the (stage, phase) pair of a ring of barriers, advanced by one call, so kernels never
//    do phase arithmetic by hand (CUTLASS's PipelineState idea).
//  - Named barriers for a subset of warps, fences between the generic and async proxies.
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// mbarrier.init.shared::cta.b64 [addr], count;                        sm_80+
TG_DEVICE void mbarrier_init(u64* bar, u32 arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrive_count) : "memory");
}

// fence.mbarrier_init.release.cluster;  makes initialised barriers visible to the async proxy.  sm_90
TG_DEVICE void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [addr];                          sm_80+
TG_DEVICE void mbarrier_arrive(u64* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx_bytes;      sm_90
// Arrives once and tells the barrier to also wait for `bytes` of TMA transactions.
TG_DEVICE void mbarrier_arrive_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;         sm_90
// Spins until the phase with the given parity has completed.
TG_DEVICE void mbarrier_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Position in a ring of kStages barrier pairs. `phase` flips each time the ring wraps.
template <int kStages>
struct PipelineState {
  u32 index = 0;
  u32 phase = 0;
  TG_DEVICE void advance() {
    if (++index == kStages) {
      index = 0;
      phase ^= 1;
    }
  }
};

// A full/empty barrier pair per stage: the producer fills stage s and the consumers release it.
//   inputs_arrived[s]:  1 producer arrival + TMA bytes.      inputs_consumed[s]: one arrival per consumer warp.
template <int kStages>
struct StageBarriers {
  u64 inputs_arrived[kStages];
  u64 inputs_consumed[kStages];

  // producer_arrivals: 1 (the thread that announces the TMA bytes) plus any side producer's arrival.
  TG_DEVICE void init(u32 consumer_arrivals, u32 producer_arrivals = 1) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&inputs_arrived[s], producer_arrivals);
      mbarrier_init(&inputs_consumed[s], consumer_arrivals);
    }
  }
  // Producer: wait until the consumers released the stage (the first pass through the ring does not wait:
  // a fresh barrier counts as having completed the phase before phase 0).
  TG_DEVICE void producer_acquire(const PipelineState<kStages>& st) {
    mbarrier_wait(&inputs_consumed[st.index], st.phase ^ 1);
  }
  TG_DEVICE void consumer_wait(const PipelineState<kStages>& st) {
    mbarrier_wait(&inputs_arrived[st.index], st.phase);
  }
  TG_DEVICE void consumer_release(u32 index) {
    mbarrier_arrive(&inputs_consumed[index]);
  }
};

// bar.sync id, count;  a barrier over `count` threads (a multiple of 32) using hardware barrier `id`.  sm_70+
TG_DEVICE void named_barrier_sync(u32 id, u32 count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// fence.proxy.async.shared::cta;  orders this thread's generic-proxy shared-memory writes before later
// async-proxy (TMA, wgmma) accesses.                                   sm_90
TG_DEVICE void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// fence.acq_rel.gpu / threadfence analogue kept explicit for readability.
TG_DEVICE void fence_acq_rel_gpu() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

// elect.sync _|p, membermask;  true in exactly one active lane of the warp.          sm_90
TG_DEVICE bool elect_one_sync() {
  u32 pred = 0;
  asm volatile(
      "{\n"
      ".reg .b32 laneid;\n"
      ".reg .pred p;\n"
      "elect.sync laneid|p, 0xffffffff;\n"
      "selp.b32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(pred));
  return pred != 0;
}

// setmaxnreg.{inc,dec}.sync.aligned.u32 N;  moves registers between warpgroups. sm_90a. Requires a
// register cap at kernel entry (__launch_bounds__(threads, 1)); each warpgroup role must be one branch.
template <u32 kRegs>
TG_DEVICE void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <u32 kRegs>
TG_DEVICE void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// griddepcontrol.wait / launch_dependents: programmatic dependent launch (PDL).      sm_90
TG_DEVICE void grid_dependency_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
TG_DEVICE void grid_dependency_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" :::);
}

// Where a GEMM kernel's prologue (barrier init, tensor-map prefetch: nothing another kernel writes) ends. Launched
// with PDL, the kernel may have started while the previous kernel in the stream still runs: it waits here until
// that kernel has finished and its writes are visible, before any tensor is read or written. Without PDL it does
// nothing.
// The GEMMs do not release their own dependents early (launch_dependents): the next PDL launch then starts as this
// kernel's CTAs exit. Released at the start or after the producer's last load, back-to-back GEMMs ran 1-2.6 µs
// slower on long-K and some BF16 shapes, while the gains elsewhere were at most 0.3 µs over this.
TG_DEVICE void pdl_prologue_done() {
  grid_dependency_wait();
}

}  // namespace tilegemm::prim

namespace tilegemm::prim {

// %cluster_ctarank: this CTA's rank inside its cluster.                                        sm_90
TG_DEVICE u32 cluster_cta_rank() {
  u32 rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// barrier.cluster.arrive.release.aligned + barrier.cluster.wait.acquire.aligned: every thread of every CTA
// in the cluster meets here (all threads of each warp must execute it).                          sm_90
TG_DEVICE void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// mapa.shared::cluster.u32 + mbarrier.arrive.shared::cluster.b64 _, [addr];
// Arrives on the barrier at the same shared-memory offset in CTA `rank` of the cluster.          sm_90
// NOTE: no `.release.cluster` qualifier: ptxas turns it into MEMBAR.ALL.GPU before every arrive, which made
// the 2-CTA kernel 1.3-3x slower (ncu: 37% of warp cycles stalled on a memory barrier, on the H200).
// Releasing a stage orders nothing but our own wgmma reads of shared memory (already complete after
// wgmma.wait_group), so the default release.cta semantics suffice — as CUTLASS's ClusterBarrier::arrive does.
TG_DEVICE void mbarrier_arrive_cluster(u64* bar, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// mapa.shared::cluster.u32 + ld.shared::cluster.v4.f32: the float4 at the same shared-memory offset as `ptr` in CTA
// `rank` of the cluster (distributed shared memory; that CTA must not have exited).                 sm_90
TG_DEVICE float4 ld_shared_cluster_f4(const void* ptr, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(ptr)), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

}  // namespace tilegemm::prim
