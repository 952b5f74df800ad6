#pragma once
// What rungs 1-3 share: the 128x128x32 CTA tile, the warp layout, the shared-memory tile layouts, the
// tensor-core inner loop over one staged K-slice (ldmatrix + mma.sync m16n8k16) and the epilogue. The rungs
// differ only in how a K-slice reaches shared memory (rung 1: registers, one slice; rung 2: cp.async into a
// ring of stages), which layout it has there (rung 3: swizzled) and which output tile a CTA takes (rung 3:
// rasterised), so each rung's file shows exactly its one idea.
#include "tilegemm/kernels/ladder/ladder_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/mma_sync.cuh"

namespace tilegemm::ladder {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
constexpr int kThreads = 256;  // 8 warps: 2 along M x 4 along N
constexpr int kWarpsN = 4;
constexpr int kWarpTileM = 64, kWarpTileN = 32;
constexpr int kMmaTilesM = kWarpTileM / 16;      // 4 m16 tiles per warp
constexpr int kMmaTilesN = kWarpTileN / 8;       // 4 n8 tiles per warp
constexpr int kRowBytes = kBlockK * 2;           // 64 bytes of one tile row (bf16)
constexpr int kChunksPerRow = kRowBytes / 16;    // 4 16-byte chunks
constexpr int kTileBytes = kBlockM * kRowBytes;  // 8 KiB; A and B tiles have the same size (BM == BN)
constexpr int kChunksPerThread = kBlockM * kChunksPerRow / kThreads;  // 2 chunks of A and 2 of B
static_assert(kBlockM == kBlockN, "A and B tiles share one size and one loader");
static_assert(kMmaTilesN % 2 == 0, "B fragments are loaded two n8 tiles per ldmatrix.x4");

// A [128 rows][32 k] bf16 tile, row after row: the 8 rows an ldmatrix 8x8 block reads are 64 bytes apart,
// so rows r and r+2 fall on the same 4 banks and every ldmatrix phase is a 4-way bank conflict.
struct RowMajorTile {
  static TG_DEVICE u32 offset(int row, int chunk) { return row * kRowBytes + chunk * 16; }
};

// The same tile with the 16-byte chunk index XOR-ed by (row / 2) % 4. Two 64-byte rows share a 128-byte
// bank line; across 8 consecutive rows the pair (row % 2, chunk ^ (row / 2) % 4) takes all 8 values, so the
// 8 addresses of one ldmatrix phase hit 8 different 16-byte bank groups: no conflict. Writes of a whole
// row stay contiguous (the XOR permutes chunks within a row).
struct SwizzledTile {
  static TG_DEVICE u32 offset(int row, int chunk) { return row * kRowBytes + ((chunk ^ ((row >> 1) & 3)) * 16); }
};

// Output tile and warp of this thread.
struct TileCoord {
  int m0, n0;          // first row / column of the CTA's output tile
  int warp_m, warp_n;  // warp position in the 2x4 warp grid
  int lane;
};

TG_DEVICE TileCoord tile_coord(int m_block, int n_block) {
  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32));
  return {m_block * kBlockM, n_block * kBlockN, warp / kWarpsN, warp % kWarpsN, static_cast<int>(threadIdx.x % 32)};
}

// The c-th 16-byte chunk of this thread (c < kChunksPerThread) of a 128x32 tile: its row and chunk. 32
// consecutive threads cover 8 whole rows, so global reads are 64-byte runs and shared writes 512-byte runs.
TG_DEVICE int chunk_row(int c) {
  return (static_cast<int>(threadIdx.x) + c * kThreads) / kChunksPerRow;
}
TG_DEVICE int chunk_col(int c) {
  return (static_cast<int>(threadIdx.x) + c * kThreads) % kChunksPerRow;
}

// Element (row, k) of a K-major operand with `rows` rows, or nullptr when the 16-byte chunk starting there
// lies outside the matrix (K % 8 == 0: a chunk is wholly in or wholly out).
TG_DEVICE const u16* operand_chunk(const void* base, long long ld, int rows, int k, int row, int kk) {
  if (row >= rows || kk >= k) return nullptr;
  return static_cast<const u16*>(base) + row * ld + kk;
}

using Accumulators = float[kMmaTilesM][kMmaTilesN][4];

TG_DEVICE void zero(Accumulators& acc) {
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
}

// acc += A_tile · B_tileᵀ over one 32-wide K-slice in shared memory: per 16-wide step, each warp loads its
// 4 A fragments (one ldmatrix.x4 each: rows lane % 16, k-half lane / 16) and 4 B fragments (two n8 tiles per
// ldmatrix.x4: rows lane % 8 + 8·(lane / 16), k-half (lane / 8) % 2), then issues 16 mma.sync.
template <class Layout>
TG_DEVICE void mma_k_slice(const u8* a_tile, const u8* b_tile, const TileCoord& t, Accumulators& acc) {
#pragma unroll
  for (int ks = 0; ks < kBlockK / 16; ++ks) {
    u32 a[kMmaTilesM][4];
    u32 b[kMmaTilesN][2];
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
      const int row = t.warp_m * kWarpTileM + i * 16 + t.lane % 16;
      prim::ldmatrix_x4(a_tile + Layout::offset(row, 2 * ks + t.lane / 16), a[i][0], a[i][1], a[i][2], a[i][3]);
    }
#pragma unroll
    for (int j = 0; j < kMmaTilesN; j += 2) {
      const int row = t.warp_n * kWarpTileN + j * 8 + t.lane % 8 + 8 * (t.lane / 16);
      prim::ldmatrix_x4(b_tile + Layout::offset(row, 2 * ks + (t.lane / 8) % 2), b[j][0], b[j][1], b[j + 1][0],
                        b[j + 1][1]);
    }
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaTilesN; ++j) prim::mma_m16n8k16_bf16(acc[i][j], a[i], b[j]);
  }
}

// D = bf16(acc), straight from the fragments to global memory: each thread owns pairs of adjacent columns
// and writes them as one 4-byte store when D's row stride and base allow it. Rows and columns past M/N are
// skipped (the tiles computed zeros there).
TG_DEVICE void store_tile(const LadderParams& p, const TileCoord& t, const Accumulators& acc) {
  auto* d = static_cast<u16*>(p.d);
  const bool pairs = (p.ldd % 2 == 0) && ((reinterpret_cast<u64>(p.d) & 3) == 0);
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = t.m0 + t.warp_m * kWarpTileM + i * 16 + t.lane / 4 + 8 * half;
        const int col = t.n0 + t.warp_n * kWarpTileN + j * 8 + 2 * (t.lane % 4);
        if (row >= p.m || col >= p.n) continue;
        const u32 packed = prim::pack_bf16x2(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
        u16* out = d + row * p.ldd + col;
        if (pairs && col + 1 < p.n) {
          *reinterpret_cast<u32*>(out) = packed;
        } else {
          out[0] = static_cast<u16>(packed & 0xffffu);
          if (col + 1 < p.n) out[1] = static_cast<u16>(packed >> 16);
        }
      }
}

}  // namespace tilegemm::ladder
