#pragma once
// Ampere-style asynchronous global -> shared copies (cp.async, sm_80+). The ladder's rungs 2-3 track them in
// commit groups (a CTA barrier after the wait makes them visible to the other threads); the FP8 producer
// signals a stage's mbarrier with them instead, so small loads ride in the same pipeline as its TMA loads.
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// cp.async.cg.shared.global [dst], [src], 16, src_bytes;
// Copies src_bytes (0 or 16) and zero-fills the rest of the 16 bytes: a tile row past the end of the matrix
// becomes zeros without a branch around the copy. `.cg` caches in L2 only (the data is reused through
// shared memory, not L1).
TG_DEVICE void cp_async_16(void* smem_dst, const void* global_src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(smem_dst)), "l"(global_src),
               "r"(valid ? 16 : 0)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 4;  one 4-byte copy (both addresses 4-byte aligned).
TG_DEVICE void cp_async_4(void* smem_dst, const void* global_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(smem_dst)), "l"(global_src) : "memory");
}

// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];  one arrival on the barrier once every cp.async this
// thread issued before it has landed. .noinc: the arrival counts against the barrier's expected count, so the
// barrier must have been initialised with this thread's arrival included.
TG_DEVICE void cp_async_mbarrier_arrive_noinc(u64* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// cp.async.commit_group: closes the group of this thread's copies issued since the last commit.
TG_DEVICE void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// cp.async.wait_group N: waits until at most N of this thread's committed groups are still in flight.
template <int N>
TG_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tilegemm::prim
