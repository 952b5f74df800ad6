#pragma once
// Warp-level tensor-core MMA (sm_80+), used by the ladder's rungs 1-3 and by the memory-bound HC-prenorm kernel
// (its A comes from registers after a bf16 -> fp32 conversion). The GEMM kernels use wgmma (wgmma.cuh).
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32  d = a·b + d
// Fragments (g = lane / 4, t = lane % 4), each u32 holding two bf16 with the lower column in the low half:
//   a[0]: A[g][2t..2t+1]   a[1]: A[g+8][2t..]   a[2]: A[g][2t+8..]   a[3]: A[g+8][2t+8..]   (A is 16x16, MxK)
//   b[0]: B[2t..2t+1][g]   b[1]: B[2t+8..][g]                                             (B is 16x8,  KxN)
//   d[0..1]: D[g][2t..2t+1]   d[2..3]: D[g+8][2t..2t+1]                                    (D is 16x8,  MxN)
// With B stored N-major ([n][k], K contiguous), ldmatrix of an 8x8 block of rows n, columns k yields b[i].
TG_DEVICE void mma_m16n8k16_bf16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32  d = a·b + d  (fragments as the bf16 form's)         sm_80
TG_DEVICE void mma_m16n8k16_f16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The 16-bit-input m16n8k16 of kHalf: fp16 (true) or bf16 (false).
template <bool kHalf>
TG_DEVICE void mma_m16n8k16(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  if constexpr (kHalf)
    mma_m16n8k16_f16(d, a, b);
  else
    mma_m16n8k16_bf16(d, a, b);
}

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32  d = a·b + d                                       sm_89
// Fragments (g = lane / 4, t = lane % 4), each u32 holding four e4m3 with the lowest column in the low byte:
//   a[0]: A[g][4t..4t+3]   a[1]: A[g+8][4t..]   a[2]: A[g][4t+16..]   a[3]: A[g+8][4t+16..]   (A is 16x32, MxK)
//   b[0]: B[4t..4t+3][g]   b[1]: B[4t+16..][g]                                                 (B is 32x8,  KxN)
//   d[0..1]: D[g][2t..2t+1]   d[2..3]: D[g+8][2t..2t+1]                                        (D is 16x8,  MxN)
TG_DEVICE void mma_m16n8k32_e4m3(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32  d = a·b + d
// Fragments (g = lane / 4, t = lane % 4), each register one fp32 whose low 13 mantissa bits the tensor core
// ignores (TF32, as cuBLAS's TF32 GEMMs and wgmma read fp32 operands):
//   a[0]: A[g][t]   a[1]: A[g+8][t]   a[2]: A[g][t+4]   a[3]: A[g+8][t+4]                    (A is 16x8, MxK)
//   b[0]: B[t][g]   b[1]: B[t+4][g]                                                            (B is 8x8,  KxN)
//   d[0..1]: D[g][2t..2t+1]   d[2..3]: D[g+8][2t..2t+1]                                        (D is 16x8, MxN)
TG_DEVICE void mma_m16n8k8_tf32(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace tilegemm::prim
