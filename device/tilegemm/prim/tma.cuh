#pragma once
// Tensor Memory Accelerator (TMA) copies between global memory and shared memory, described by a
// TmaDescriptor (CUtensorMap) the host encoded. All take 3-D coordinates, innermost first; 2-D tensors are
// encoded with a third extent of 1. Each wrapper is one PTX instruction, documented with its form.
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// prefetch.tensormap [addr];  pulls the descriptor into the cache ahead of the first copy.   sm_90
TG_DEVICE void tma_prefetch_descriptor(const TmaDescriptor* desc) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(desc)) : "memory");
}

// cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [map, {c0,c1,c2}], [bar];
// Loads one box into shared memory; completion is counted (in bytes, including zero-filled out-of-bounds
// elements) on `bar`.                                                                              sm_90
TG_DEVICE void tma_load_3d(const TmaDescriptor* desc, u64* bar, void* smem_dst, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<u64>(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar];
// Copies `bytes` contiguous bytes (a multiple of 16, both addresses 16-byte aligned) without a tensor map;
// completion is counted on `bar`.                                                                   sm_90
TG_DEVICE void bulk_load(void* smem_dst, const void* src, u32 bytes, u64* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(smem_dst)),
               "l"(reinterpret_cast<u64>(src)), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// Same, delivered to the same offset in every CTA of the cluster named in `cta_mask`, each CTA's barrier
// at the same offset receiving the bytes.  .multicast::cluster                                      sm_90
TG_DEVICE void tma_load_3d_multicast(const TmaDescriptor* desc, u64* bar, void* smem_dst, int c0, int c1, int c2,
                                     u16 cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<u64>(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

// cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [map, {c0,c1,c2}], [src];
// Stores one box; elements outside the tensor's extents are not written.                        sm_90
TG_DEVICE void tma_store_3d(const TmaDescriptor* desc, const void* smem_src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<u64>(desc)),
               "r"(smem_addr(smem_src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [map, {c0,c1,c2}], [src];
// global += shared for one box (fp32, fp16, bf16 element types).                                 sm_90
TG_DEVICE void tma_reduce_add_3d(const TmaDescriptor* desc, const void* smem_src, int c0, int c1, int c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<u64>(desc)),
               "r"(smem_addr(smem_src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// cp.async.bulk.commit_group;  closes the group of bulk stores issued by this thread.           sm_90
TG_DEVICE void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group.read N;  waits until at most N groups still read their shared-memory source.
template <int N>
TG_DEVICE void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group N;  waits until at most N groups are pending (writes visible).        sm_90
template <int N>
TG_DEVICE void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tilegemm::prim
