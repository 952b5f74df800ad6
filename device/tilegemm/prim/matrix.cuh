#pragma once
// Warp-collective 8x8 b16 matrix moves between registers and shared memory, and register conversions used
// by epilogues.
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {r0, r1, r2, r3};                         sm_90
// Lane l gives the address of row (l % 8) of matrix (l / 8); register i of every lane holds two b16 of
// matrix i at row (lane / 4), columns 2·(lane % 4) and +1 — the mma accumulator fragment layout.
TG_DEVICE void stmatrix_x4(void* smem_row, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(smem_row)), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.shared.b16 [addr], {r0, r1};  (lanes 0-15 give addresses)      sm_90
TG_DEVICE void stmatrix_x2(void* smem_row, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(smem_addr(smem_row)), "r"(r0), "r"(r1)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16: as stmatrix_x4, each 8x8 matrix transposed on the way: lane l
// addresses row (l % 8) of stored matrix (l / 8), which receives column (l % 8) of the fragment.          sm_90
TG_DEVICE void stmatrix_x4_trans(void* smem_row, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(smem_row)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [addr], {r0, r1};  (lanes 0-15 give addresses)  sm_90
TG_DEVICE void stmatrix_x2_trans(void* smem_row, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(smem_addr(smem_row)), "r"(r0),
               "r"(r1)
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 {r0, r1, r2, r3}, [addr];  the inverse of stmatrix_x4. sm_75
TG_DEVICE void ldmatrix_x4(const void* smem_row, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_addr(smem_row))
               : "memory");
}

// cvt.rn.bf16x2.f32 d, hi, lo;  packs two floats as bf16 (round to nearest even), `lo` in the low half.
TG_DEVICE u32 pack_bf16x2(float lo, float hi) {
  u32 packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

// st.shared.v2.f32 [addr], {a, b};
TG_DEVICE void st_shared_f32x2(void* smem, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(smem_addr(smem)), "f"(a), "f"(b) : "memory");
}

}  // namespace tilegemm::prim
