#pragma once
// Scaling-factor layout transforms (host API in include/tilegemm/fp8_layout.hpp, CPU references in
// src/layout/). One kernel, two variants:
//   kPack = false: fp32 [G, rows, kb] (any strides) → MN-major TMA-aligned fp32, per group [kb][aligned_mn].
//   kPack = true : the same transpose, then four consecutive K blocks' UE8M0 exponents (fp32 bits >> 23) go
//                  into one int32 (block 4p + b in byte b), per group [ceil(kb/4)][aligned_mn] (SM100 layout).
// Each 32x8-thread block stages a 32 (MN) x 32 (K) tile in shared memory, so both the reads (along K) and
// the writes (along MN) are coalesced. The kernel writes exactly the elements of the output view: the
// padding rows [mn, aligned_mn) are left alone (a tensor allocated for that view, like DeepGEMM's
// empty_strided, does not even own the last column's padding); K blocks past kb become 0 bytes.
//
// The parameter struct is plain data shared with the host (which includes this header without a device
// compiler); the device code below it is only seen by NVRTC/NVCC.

namespace tilegemm {

struct SfLayoutParams {
  const float* in;               // fp32 scales, element (g, r, k) at g·in_group_stride + r·in_row_stride + k·in_k_stride
  void* out;                     // fp32 or int32, element (g, c, m) at (g·out_cols + c)·aligned_mn + m
  long long in_group_stride, in_row_stride, in_k_stride;
  int mn;                        // output rows (MN)
  int aligned_mn;                // output column pitch: mn rounded up to 4 (16 bytes)
  int kb;                        // scale blocks along K
  int out_cols;                  // kb (fp32) or ceil(kb / 4) (packed)
  int rows_in;                   // input rows per group
  int row_div;                   // output row m reads input row m / row_div (128 broadcasts per-block scales)
  unsigned long long* first_bad; // packed only, may be null: min over non-UE8M0 inputs of (g·rows_in + r)·kb + k
};

inline constexpr int kSfTileMn = 32;      // MN rows per tile (= threads along x)
inline constexpr int kSfTileK = 32;       // K blocks per tile
inline constexpr int kSfThreadsY = 8;     // threads along y; each loads kSfTileMn / kSfThreadsY rows

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// A positive normal float with a zero mantissa (the only values UE8M0 can hold).
__device__ __forceinline__ bool sf_is_ue8m0(unsigned int bits) {
  return (bits & 0x807FFFFFu) == 0 && (bits >> 23) - 1u < 254u;
}

template <bool kPack>
__device__ __forceinline__ void sf_layout_transform(const SfLayoutParams& p) {
  // +1 column so that the transposed reads (tile[tx][...]) hit 32 different banks.
  __shared__ float tile[kSfTileMn][kSfTileK + 1];
  const int g = blockIdx.z;
  const int m0 = blockIdx.x * kSfTileMn, k0 = blockIdx.y * kSfTileK;
  const int tx = threadIdx.x, ty = threadIdx.y;

#pragma unroll
  for (int j = 0; j < kSfTileMn / kSfThreadsY; ++j) {
    const int m = m0 + ty + j * kSfThreadsY, k = k0 + tx;
    float v = 0.0f;
    if (m < p.mn && k < p.kb) {
      const long long r = m / p.row_div;
      v = p.in[g * p.in_group_stride + r * p.in_row_stride + k * p.in_k_stride];
      if (kPack && p.first_bad != nullptr && !sf_is_ue8m0(__float_as_uint(v)))
        atomicMin(p.first_bad, static_cast<unsigned long long>((static_cast<long long>(g) * p.rows_in + r) * p.kb + k));
    }
    tile[ty + j * kSfThreadsY][tx] = v;
  }
  __syncthreads();

  const int m = m0 + tx;
  if (m >= p.mn) return;
  if constexpr (!kPack) {
    float* out = static_cast<float*>(p.out);
#pragma unroll
    for (int j = 0; j < kSfTileK / kSfThreadsY; ++j) {
      const int k = k0 + ty + j * kSfThreadsY;
      if (k < p.kb) out[(static_cast<long long>(g) * p.out_cols + k) * p.aligned_mn + m] = tile[tx][ty + j * kSfThreadsY];
    }
  } else {
    // kSfThreadsY words of 4 K blocks each cover the tile's 32 K blocks.
    static_assert(kSfTileK == 4 * kSfThreadsY, "one packed word per thread row");
    const int word = k0 / 4 + ty;
    if (word < p.out_cols) {
      unsigned int packed = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) packed |= ((__float_as_uint(tile[tx][4 * ty + b]) >> 23) & 0xFFu) << (8 * b);
      static_cast<unsigned int*>(p.out)[(static_cast<long long>(g) * p.out_cols + word) * p.aligned_mn + m] = packed;
    }
  }
}

#endif

}  // namespace tilegemm
