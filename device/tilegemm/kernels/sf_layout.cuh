#pragma once
// Scaling-factor layout transforms (host API in include/tilegemm/fp8_layout.hpp, CPU references in
// src/layout/). Two kernels:
//
// sf_layout_transform<kPack>: fp32 [G, rows, kb] (any strides) → MN-major TMA-aligned, per group
//   [out_cols][aligned_mn]. kPack = false writes the fp32 values (out_cols = kb); kPack = true packs four
//   consecutive K blocks' UE8M0 exponents (fp32 bits >> 23) into one int32, block 4p + b in byte b
//   (out_cols = ceil(kb / 4), the SM100 layout). A 256-thread block moves one tile of 4096 elements (2048
//   when 4096-element tiles would leave most SMs idle, sf_tile_elems_log2): 2^t K blocks by the rest in MN
//   rows, 2^t the smallest power of two >= kb, clamped to [1 (4 packed), 64], so a tile spans whole input rows
//   whenever kb <= 64 and the read of a row-major input is one contiguous run. Each thread first issues its 8
//   or 16 loads (walking the input's contiguous side, K or MN), then stores
//   them into shared memory as [K][MN] with an XOR swizzle that keeps both the stores and the 16-byte reads
//   of the output phase free of bank conflicts; the output is written 4 MN rows (16 bytes) per store. The
//   kernel writes exactly the elements of the output view: the padding rows [mn, aligned_mn) are left alone
//   (a tensor allocated for that view, like DeepGEMM's empty_strided, does not even own the last column's
//   padding); K blocks past kb become 0 bytes.
//
// sf_k_grouped_pack: the K-grouped SM100 layout of DeepGEMM's get_k_grouped_..._packed_ue8m0_tensor.
//   sf is fp32 [sf_k, mn] (MN contiguous): the K-block rows of every group one after another; out is int32
//   [packed_sf_k, mn] whose packed row P holds four consecutive K-block rows of one group (the group's last
//   word zero-padded). One block per (packed row, 1024 MN columns); its first warp finds the group that owns
//   the packed row from grouped_layout on the device (no host sync), then every thread packs 4 columns.
//
// The parameter structs are plain data shared with the host (which includes this header without a device
// compiler); the device code below them is only seen by NVRTC/NVCC.

namespace tilegemm {

struct SfLayoutParams {
  const float* in;  // fp32 scales, element (g, r, k) at g·in_group_stride + r·in_row_stride + k·in_k_stride
  void* out;        // fp32 or int32, element (g, c, m) at (g·out_cols + c)·aligned_mn + m
  long long in_group_stride, in_row_stride, in_k_stride;
  int mn;                         // output rows (MN)
  int aligned_mn;                 // output column pitch: mn rounded up to 4 (16 bytes)
  int kb;                         // scale blocks along K
  int out_cols;                   // kb (fp32) or ceil(kb / 4) (packed)
  int rows_in;                    // input rows per group
  int row_div_log2;               // output row m reads input row m >> row_div_log2 (7 broadcasts 128-row scales)
  int tile_k_log2;                // log2 of the K blocks per tile (sf_tile_k_log2)
  int tile_elems_log2;            // log2 of the elements per tile (sf_tile_elems_log2)
  int mn_fast_loads;              // 1: the input is MN-contiguous, so the loads walk MN first (else K first)
  int vector_stores;              // 1: out is 16-byte aligned, so 4 MN rows go out in one 16-byte store
  unsigned long long* first_bad;  // packed only, may be null: min over non-UE8M0 inputs of (g·rows_in + r)·kb + k
  // Packed only, may be null: DeepGEMM's prefix-sum layout of an M-grouped A. Row m is valid when it lies in
  // [align(psum_layout[g - 1], m_alignment), psum_layout[g]) of some group g (group 0 starts at 0); the rows
  // in the gaps between groups are never read and pack to 0.
  const int* psum_layout;
  int psum_groups, m_alignment;
};

struct SfKGroupedPackParams {
  const float* in;            // fp32 [sf_k, mn], contiguous, 16-byte aligned
  unsigned int* out;          // int32 [packed_sf_k, mn], contiguous, 16-byte aligned
  const int* grouped_layout;  // [num_groups]: group K sizes, or (use_psum) the groups' prefix-sum K ends
  int mn;                     // a multiple of 4
  int sf_k, packed_sf_k, num_groups, gran_k, k_alignment, use_psum;
};

inline constexpr int kSfThreads = 256;
inline constexpr int kSfTileElemsLog2 = 12;     // at most 4096 elements (16 KiB of shared memory) per tile
inline constexpr int kSfMinTileElemsLog2 = 11;  // at least 2048, so a tile keeps >= 32 MN rows (the swizzle's span)
inline constexpr int kSfItemsPerThread = (1 << kSfTileElemsLog2) / kSfThreads;
inline constexpr int kSfMaxTileKLog2 = 6;  // at most 64 K blocks per tile (so at least 32 MN rows)
// Below this many 4096-element tiles a launch would leave SMs idle (an H100/H200 has 132), so tiles halve.
inline constexpr long long kSfFewTiles = 256;
inline constexpr int kSfMaxKGroups = 128;  // a warp reads the group sizes, four per lane
inline constexpr int kSfKGroupedColumnsPerBlock = 4 * kSfThreads;

// The tile's K extent for kb K blocks: the smallest power of two >= kb (>= 4 when packing: a packed word
// spans four), at most 2^kSfMaxTileKLog2. Host (grid) and device (indexing) share it.
inline constexpr int sf_tile_k_log2(int kb, bool pack) {
  int t = pack ? 2 : 0;
  while (t < kSfMaxTileKLog2 && (1 << t) < kb) ++t;
  return t;
}

// log2 of the elements per tile for `tiles` 4096-element tiles: 4096, or 2048 when that makes too few blocks
// to spread over the SMs (small scale tensors, e.g. 4096 x 56). Host (grid) and device (indexing) share it.
inline constexpr int sf_tile_elems_log2(long long tiles) {
  return tiles < kSfFewTiles ? kSfMinTileElemsLog2 : kSfTileElemsLog2;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// A positive normal float with a zero mantissa (the only values UE8M0 can hold).
__device__ __forceinline__ bool sf_is_ue8m0(unsigned int bits) {
  return (bits & 0x807FFFFFu) == 0 && (bits >> 23) - 1u < 254u;
}

// The UE8M0 exponent byte of a scale (its fp32 biased exponent; sign and mantissa are dropped).
__device__ __forceinline__ unsigned int sf_ue8m0_byte(float scale) {
  return (__float_as_uint(scale) >> 23) & 0xFFu;
}

// Shared-memory column of tile element (K block c, MN row r): r XOR a function of c chosen so that a warp's
// 32 stores (32 consecutive K blocks of a row, or 32 / 2^t rows of 2^t K blocks, or 32 MN rows of one K
// block) hit 32 different banks. `rows_per_warp_log2` = log2 of the MN rows a K-first warp spans.
__device__ __forceinline__ int sf_swizzle(int c, int rows_per_warp_log2) {
  return (c << rows_per_warp_log2) & 31;
}

// Whether row m belongs to a group of the prefix-sum layout (binary search for the first group ending past
// m).
__device__ __forceinline__ bool sf_psum_row_valid(const SfLayoutParams& p, int m) {
  int lo = 0, hi = p.psum_groups;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (__ldg(p.psum_layout + mid) > m)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo == p.psum_groups) return false;
  const int previous_end = lo == 0 ? 0 : __ldg(p.psum_layout + lo - 1);
  const int start = (previous_end + p.m_alignment - 1) / p.m_alignment * p.m_alignment;
  return m >= start;
}

// Four tile elements of K block c, MN rows 4q .. 4q + 3, in MN order. The swizzle's bits above 1 keep the
// four in one aligned 16-byte word; its low two bits permute them inside it, undone here with selects.
__device__ __forceinline__ float4 sf_read4(const float* tile, int tile_mn, int c, int q, int swizzle) {
  const float4 w = *reinterpret_cast<const float4*>(tile + c * tile_mn + ((4 * q) ^ (swizzle & ~3)));
  float x0 = w.x, x1 = w.y, x2 = w.z, x3 = w.w, t;
  if (swizzle & 1) t = x0, x0 = x1, x1 = t, t = x2, x2 = x3, x3 = t;
  if (swizzle & 2) t = x0, x0 = x2, x2 = t, t = x1, x1 = x3, x3 = t;
  return make_float4(x0, x1, x2, x3);
}

// Four consecutive MN rows of one output column: one 16-byte store when all four exist and the output is
// 16-byte aligned, else one store per existing row.
__device__ __forceinline__ void sf_store4(float* out, long long offset, int valid, bool vector, float4 x) {
  if (valid == 4 && vector) {
    *reinterpret_cast<float4*>(out + offset) = x;
    return;
  }
  const float v[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < valid) out[offset + j] = v[j];
}

__device__ __forceinline__ void sf_store4(unsigned int* out, long long offset, int valid, bool vector, uint4 x) {
  if (valid == 4 && vector) {
    *reinterpret_cast<uint4*>(out + offset) = x;
    return;
  }
  const unsigned int v[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < valid) out[offset + j] = v[j];
}

// Loads one tile into shared memory: element i of this thread is tile element e = threadIdx.x + i·kSfThreads,
// split into (row, K block) with the input's contiguous side fastest, so a warp reads consecutive addresses.
// Reading K first (row-major scales, the common case), a thread keeps one K block and steps kSfThreads / tk rows
// per element, so its addresses are one base plus a row offset each (no per-element division).
template <bool kPack, bool kMnFast>
__device__ __forceinline__ void sf_load_tile(const SfLayoutParams& p, const float* in, float* tile,
                                             const unsigned char* row_valid, bool psum, int m0, int k0) {
  const int tk_log2 = p.tile_k_log2, tmn_log2 = p.tile_elems_log2 - tk_log2;
  const int tk = 1 << tk_log2, tmn = 1 << tmn_log2, items = (1 << p.tile_elems_log2) / kSfThreads;
  const int rows_per_warp_log2 = tk_log2 >= 5 ? 0 : 5 - tk_log2;
  const int kc = threadIdx.x & (tk - 1), r_first = threadIdx.x >> tk_log2, r_step = kSfThreads >> tk_log2;
  const float* k_column = in + static_cast<long long>(k0 + kc) * p.in_k_stride;
  // Tile row and K block of this thread's element i, and whether the input holds it.
  const int t = static_cast<int>(threadIdx.x);
  const auto row_of = [&](int i) { return kMnFast ? (t + i * kSfThreads) & (tmn - 1) : r_first + i * r_step; };
  const auto col_of = [&](int i) { return kMnFast ? (t + i * kSfThreads) >> tmn_log2 : kc; };
  const auto in_input = [&](int r, int c) { return m0 + r < p.mn && k0 + c < p.kb && (!psum || row_valid[r]); };
  float v[kSfItemsPerThread];
#pragma unroll
  for (int i = 0; i < kSfItemsPerThread; ++i) {
    if (i >= items) break;
    const int r = row_of(i), c = col_of(i);
    const long long row = (m0 + r) >> p.row_div_log2;
    v[i] = !in_input(r, c) ? 0.0f
           : kMnFast       ? __ldg(in + row * p.in_row_stride + (k0 + c) * p.in_k_stride)
                           : __ldg(k_column + row * p.in_row_stride);
  }
  // The UE8M0 check after every load is in flight: an atomic between two loads would hold the second one back.
  if (kPack && p.first_bad != nullptr) {
#pragma unroll
    for (int i = 0; i < kSfItemsPerThread; ++i) {
      if (i >= items) break;
      const int r = row_of(i), c = col_of(i);
      if (in_input(r, c) && !sf_is_ue8m0(__float_as_uint(v[i])))
        atomicMin(p.first_bad,
                  static_cast<unsigned long long>(
                      (static_cast<long long>(blockIdx.z) * p.rows_in + ((m0 + r) >> p.row_div_log2)) * p.kb + k0 + c));
    }
  }
#pragma unroll
  for (int i = 0; i < kSfItemsPerThread; ++i) {
    if (i >= items) break;
    const int r = row_of(i), c = col_of(i);
    tile[c * tmn + (r ^ sf_swizzle(c, rows_per_warp_log2))] = v[i];
  }
}

template <bool kPack>
__device__ __forceinline__ void sf_layout_transform(const SfLayoutParams& p) {
  __shared__ __align__(16) float tile[1 << kSfTileElemsLog2];
  __shared__ unsigned char row_valid[kPack ? (1 << (kSfTileElemsLog2 - 2)) : 1];
  const int tk_log2 = p.tile_k_log2, tmn_log2 = p.tile_elems_log2 - tk_log2;
  const int tk = 1 << tk_log2, tmn = 1 << tmn_log2;
  const int rows_per_warp_log2 = tk_log2 >= 5 ? 0 : 5 - tk_log2;
  const int g = blockIdx.z, m0 = blockIdx.x * tmn, k0 = blockIdx.y * tk;
  const float* in = p.in + g * p.in_group_stride;

  const bool psum = kPack && p.psum_layout != nullptr;
  if (psum) {
    for (int r = threadIdx.x; r < tmn; r += kSfThreads) row_valid[r] = m0 + r < p.mn && sf_psum_row_valid(p, m0 + r);
    __syncthreads();
  }

  if (p.mn_fast_loads)
    sf_load_tile<kPack, true>(p, in, tile, row_valid, psum, m0, k0);
  else
    sf_load_tile<kPack, false>(p, in, tile, row_valid, psum, m0, k0);
  __syncthreads();

  // Stores: units of 4 MN rows (q) of one output column, q fastest so a warp writes 512 contiguous bytes.
  const int quads_log2 = tmn_log2 - 2, quads = 1 << quads_log2;
  const bool vector = p.vector_stores != 0;
  if constexpr (!kPack) {
    float* out = static_cast<float*>(p.out);
    for (int u = threadIdx.x; u < (tk << quads_log2); u += kSfThreads) {
      const int q = u & (quads - 1), c = u >> quads_log2;
      const int m = m0 + 4 * q, k = k0 + c;
      if (k >= p.kb || m >= p.mn) continue;
      const float4 x = sf_read4(tile, tmn, c, q, sf_swizzle(c, rows_per_warp_log2));
      sf_store4(out, (static_cast<long long>(g) * p.out_cols + k) * p.aligned_mn + m, min(4, p.mn - m), vector, x);
    }
  } else {
    unsigned int* out = static_cast<unsigned int*>(p.out);
    for (int u = threadIdx.x; u < ((tk / 4) << quads_log2); u += kSfThreads) {
      const int q = u & (quads - 1), word = k0 / 4 + (u >> quads_log2);
      const int m = m0 + 4 * q;
      if (word >= p.out_cols || m >= p.mn) continue;
      uint4 packed = make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int c = 4 * (word - k0 / 4) + b;
        const float4 x = sf_read4(tile, tmn, c, q, sf_swizzle(c, rows_per_warp_log2));
        packed.x |= sf_ue8m0_byte(x.x) << (8 * b);
        packed.y |= sf_ue8m0_byte(x.y) << (8 * b);
        packed.z |= sf_ue8m0_byte(x.z) << (8 * b);
        packed.w |= sf_ue8m0_byte(x.w) << (8 * b);
      }
      sf_store4(out, (static_cast<long long>(g) * p.out_cols + word) * p.aligned_mn + m, min(4, p.mn - m), vector,
                packed);
    }
  }
}

// The owner of packed row P: (first K-block row of sf it packs, how many of its four exist), or rows = 0 when
// no group owns it (an upper-bound row count from unsynced sizes). Run by one whole warp.
__device__ __forceinline__ void sf_k_grouped_owner(const SfKGroupedPackParams& p, int P, int lane, int& row0,
                                                   int& rows) {
  int n[4], packs[4], n_total = 0, pack_total = 0;
  int previous = lane > 0 && 4 * lane - 1 < p.num_groups ? __ldg(p.grouped_layout + 4 * lane - 1) : 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int group = 4 * lane + i;
    int group_k = 0;
    if (group < p.num_groups) {
      const int value = __ldg(p.grouped_layout + group);
      const int start = p.use_psum ? (previous + p.k_alignment - 1) / p.k_alignment * p.k_alignment : 0;
      group_k = value - start;
      previous = value;
    }
    n[i] = group_k > 0 ? (group_k + p.gran_k - 1) / p.gran_k : 0;
    packs[i] = (n[i] + 3) / 4;
    n_total += n[i], pack_total += packs[i];
  }
  // Inclusive prefix sums over the lanes, then each lane's exclusive start.
  int n_before = n_total, packs_before = pack_total;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int n_up = __shfl_up_sync(0xFFFFFFFFu, n_before, offset);
    const int packs_up = __shfl_up_sync(0xFFFFFFFFu, packs_before, offset);
    if (lane >= offset) n_before += n_up, packs_before += packs_up;
  }
  n_before -= n_total, packs_before -= pack_total;
  int my_row0 = -1, my_rows = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (my_row0 < 0 && P >= packs_before && P < packs_before + packs[i]) {
      const int local = 4 * (P - packs_before);
      my_row0 = n_before + local;
      my_rows = min(4, n[i] - local);
    }
    n_before += n[i], packs_before += packs[i];
  }
  const unsigned owner = __ballot_sync(0xFFFFFFFFu, my_row0 >= 0);
  if (owner == 0) {
    row0 = 0, rows = 0;
    return;
  }
  const int src = __ffs(owner) - 1;
  row0 = __shfl_sync(0xFFFFFFFFu, my_row0, src);
  rows = __shfl_sync(0xFFFFFFFFu, my_rows, src);
}

__device__ __forceinline__ void sf_k_grouped_pack(const SfKGroupedPackParams& p) {
  __shared__ int owner[2];
  const int P = blockIdx.x;
  if (threadIdx.x < 32) {
    int row0, rows;
    sf_k_grouped_owner(p, P, threadIdx.x, row0, rows);
    if (threadIdx.x == 0) owner[0] = row0, owner[1] = rows;
  }
  __syncthreads();
  const int row0 = owner[0], rows = min(owner[1], p.sf_k - owner[0]);
  if (owner[1] == 0) return;  // no group owns this row: left as allocated, as DeepGEMM does
  const int col = (blockIdx.y * kSfThreads + threadIdx.x) * 4;
  if (col >= p.mn) return;
  uint4 x[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    x[j] = j < rows ? __ldg(reinterpret_cast<const uint4*>(p.in + static_cast<long long>(row0 + j) * p.mn + col))
                    : make_uint4(0, 0, 0, 0);
  uint4 packed = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    packed.x |= sf_ue8m0_byte(__uint_as_float(x[j].x)) << (8 * j);
    packed.y |= sf_ue8m0_byte(__uint_as_float(x[j].y)) << (8 * j);
    packed.z |= sf_ue8m0_byte(__uint_as_float(x[j].z)) << (8 * j);
    packed.w |= sf_ue8m0_byte(__uint_as_float(x[j].w)) << (8 * j);
  }
  *reinterpret_cast<uint4*>(p.out + static_cast<long long>(P) * p.mn + col) = packed;
}

#endif

}  // namespace tilegemm
