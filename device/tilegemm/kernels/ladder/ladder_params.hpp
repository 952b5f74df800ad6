#pragma once
// The one argument of every ladder kernel (rungs 0-3), shared by the host launch code and the device code,
// so it uses only builtin types (NVRTC compiles device code without a C++ standard library).
//
// D[M,N] = A[M,K] · B[N,K]ᵀ with A and B bf16 and K-major (the "nt" layout) and D bf16, row-major. Strides
// are in elements. The host checks K % 8 == 0, lda/ldb % 8 == 0 and 16-byte aligned A/B, so every 16-byte
// chunk along K is either wholly inside or wholly outside the matrix.
namespace tilegemm::ladder {

struct LadderParams {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  int m = 0, n = 0, k = 0;
  long long lda = 0, ldb = 0, ldd = 0;
  int raster_group = 1;  // rung 3: m-blocks per rasterisation panel
};

}  // namespace tilegemm::ladder
