#pragma once
// Global-memory accesses with explicit caching and memory-order semantics, used where CTAs of one kernel
// hand data to each other through a workspace (split-K / stream-K fix-up). Each wrapper is one PTX
// instruction; the comment names its form and what it orders.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"  // named_barrier_sync

namespace tilegemm::prim {

// st.global.v4.f32 [addr], {a, b, c, d};  a weak 16-byte store (addr 16-byte aligned).              sm_70+
TG_DEVICE void st_global_f32x4(float* addr, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

// ld.global.cg.v4.f32 {a, b, c, d}, [addr];  cached in L2 only: never a stale L1 line of data another SM
// wrote during this kernel (L1 is not coherent across SMs).                                          sm_70+
TG_DEVICE void ld_global_cg_f32x4(const float* addr, float& a, float& b, float& c, float& d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(addr)
               : "memory");
}

// red.global.add.v4.f32 [addr], {a, b, c, d};  four relaxed gpu-scope fp32 atomic adds performed in L2,
// no value returned (16-byte aligned addr).                                                        sm_90
TG_DEVICE void red_add_global_f32x4(float* addr, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

// atom.acq_rel.gpu.global.add.s32 old, [addr], v;  returns the previous value. Release: this thread's
// earlier writes (and, after a barrier, those of the threads it synchronised with) are visible to whoever
// acquires the counter later; acquire: the writes released by earlier increments are visible to us.  sm_70+
TG_DEVICE int atomic_add_acq_rel_gpu(int* addr, int v) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  return old;
}

// st.relaxed.gpu.global.s32 [addr], v;  a strong store other CTAs (and the next launch) see.          sm_70+
TG_DEVICE void st_relaxed_gpu(int* addr, int v) {
  asm volatile("st.relaxed.gpu.global.s32 [%0], %1;" ::"l"(addr), "r"(v) : "memory");
}

// bar.red.or.pred p, id, count, pred;  named barrier over `count` threads that also returns, in every
// participating thread, whether any of them passed `pred` = true (a barrier plus a broadcast).       sm_70+
TG_DEVICE bool named_barrier_or(u32 id, u32 count, bool pred) {
  u32 result;
  asm volatile(
      "{\n"
      ".reg .pred p, q;\n"
      "setp.ne.u32 p, %1, 0;\n"
      "bar.red.or.pred q, %2, %3, p;\n"
      "selp.u32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(result)
      : "r"(static_cast<u32>(pred)), "r"(id), "r"(count)
      : "memory");
  return result != 0;
}

// Called by all `threads` threads of named barrier `barrier_id` after each wrote its part of this CTA's partial
// tile: counts the CTA's arrival on `counter` and returns, in every one of them, whether it is the last of `splits`
// to arrive (then the other CTAs' partials are visible to it). `flag` is one int of shared memory.
// NOTE: the fence and the barrier before the release increment make every thread's partial visible to the CTA that
// acquires the counter last; the fence after makes theirs visible to this one's loads.
TG_DEVICE bool last_split_arrived(int* counter, int splits, int* flag, u32 barrier_id, u32 threads) {
  __threadfence();
  named_barrier_sync(barrier_id, threads);
  if (threadIdx.x == 0) *flag = atomic_add_acq_rel_gpu(counter, 1) == splits - 1;
  named_barrier_sync(barrier_id, threads);
  const bool last = *flag;
  if (last) __threadfence();
  return last;
}

TG_DEVICE void accumulate(float& sum, float x) {
  sum += x;
}
TG_DEVICE void accumulate(float4& sum, const float4& x) {
  sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
}

// What the CTA last_split_arrived() picked does with the splits' partial slices (slice s at first + s·stride): sums
// them in split order (the same bits on every run) and zeroes each slot it read, leaving the workspace as found.
// This thread owns kW slots: slot(w) is slot w's offset inside a slice; store(w, sum) takes each sum. __ldcg/__stcg
// stay in program order, so a load behind a store waits for it: the loads of kBatch splits go out before their adds
// and stores, one L2 round trip per batch of splits rather than one per split.
template <int kW, int kBatch, class T, class Slot, class Store>
TG_DEVICE void sum_split_partials(T* first, int splits, long long stride, const Slot& slot, const Store& store) {
  int offset[kW];
  T sum[kW];
#pragma unroll
  for (int w = 0; w < kW; ++w) offset[w] = slot(w), sum[w] = T{};
  for (int s0 = 0; s0 < splits; s0 += kBatch) {
    T x[kBatch][kW];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int w = 0; w < kW; ++w)
        if (s0 + b < splits) x[b][w] = __ldcg(first + (s0 + b) * stride + offset[w]);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int w = 0; w < kW; ++w) {
        if (s0 + b >= splits) continue;
        __stcg(first + (s0 + b) * stride + offset[w], T{});
        accumulate(sum[w], x[b][w]);
      }
  }
#pragma unroll
  for (int w = 0; w < kW; ++w) store(w, sum[w]);
}

}  // namespace tilegemm::prim
