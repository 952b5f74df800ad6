#pragma once
// Warpgroup MMA (wgmma) support: shared-memory matrix descriptors, the fence/commit/wait protocol and the
// per-shape MMA wrappers (generated into wgmma_ops.cuh). Minimum target: sm_90a.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/wgmma_ops.cuh"

namespace tilegemm::prim {

// Shared-memory layouts a descriptor can name (bits 62-63 of the descriptor).
enum class SmemSwizzle : u32 { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };

// The 64-bit wgmma matrix descriptor:
//   bits  0-13 start address >> 4      bits 16-29 leading-dimension byte offset >> 4
//   bits 32-45 stride byte offset >> 4 bits 49-51 base offset (0: atoms are 1024-byte aligned)
//   bits 62-63 swizzle mode
// With 128-byte swizzle and a K-major tile (rows of 64 bf16 along K): SBO = 1024 (8 rows × 128 B between
// 8-row core-matrix groups) and LBO is unused. With an MN-major tile stored as 64-element-wide column
// panels of BLOCK_K rows: SBO = 1024 (8 K-rows) and LBO = the byte size of one panel.
TG_DEVICE u64 make_smem_desc(u32 smem_byte_addr, u32 leading_byte_offset, u32 stride_byte_offset, SmemSwizzle swizzle) {
  u64 desc = 0;
  desc |= static_cast<u64>((smem_byte_addr & 0x3FFFF) >> 4);
  desc |= static_cast<u64>((leading_byte_offset >> 4) & 0x3FFF) << 16;
  desc |= static_cast<u64>((stride_byte_offset >> 4) & 0x3FFF) << 32;
  desc |= static_cast<u64>(swizzle) << 62;
  return desc;
}

// Moves a descriptor's start address by `bytes` (a multiple of 16), leaving the other fields: one 32-bit add on the
// low word, since a shared-memory address (< 256 KB) never carries out of the 14-bit start-address field.
TG_DEVICE u64 advance_smem_desc(u64 desc, u32 bytes) {
  const u32 lo = static_cast<u32>(desc) + (bytes >> 4);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

// Makes the compiler compute `value` before the next volatile asm statement (a barrier wait, say) instead of
// sinking it to its first use after it.
TG_DEVICE void compute_before_next_asm(u64& value) {
  asm volatile("" : "+l"(value));
}

// wgmma.fence.sync.aligned;  orders register/shared accesses before the next wgmma.        sm_90a
TG_DEVICE void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

// wgmma.commit_group.sync.aligned;  closes the group of wgmma issued since the last commit.  sm_90a
TG_DEVICE void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// wgmma.wait_group.sync.aligned N;  waits until at most N committed groups are in flight.     sm_90a
template <int N>
TG_DEVICE void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Tells the compiler the accumulator register is live across an in-flight wgmma (no reordering).
TG_DEVICE void wgmma_fence_operand(float& reg) {
  asm volatile("" : "+f"(reg)::"memory");
}
TG_DEVICE void wgmma_fence_operand(int& reg) {
  asm volatile("" : "+r"(reg)::"memory");
}

}  // namespace tilegemm::prim
