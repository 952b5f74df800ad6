#pragma once
// Rung 1: reuse on chip. A CTA computes a 128x128 output tile; per 32-wide K-slice its 256 threads copy the
// A and B tiles into shared memory once, and every warp then reads its operands from there (ldmatrix) into
// tensor-core MMAs (mma.sync m16n8k16). Global traffic drops from 2·M·N·K to M·N·K·(1/128 + 1/128)
// elements and the math moves from CUDA-core FMAs to tensor cores.
// What is left: load and compute are serial — each slice is loaded (through registers), the CTA waits for
// it, computes, and waits again before the next load may overwrite the tile. The tensor cores idle for a
// full global-memory latency every slice.
#include "tilegemm/kernels/ladder/tile_common.cuh"

namespace tilegemm::ladder {

// Global -> registers -> shared: one 128x32 tile of a K-major operand, zeros outside the matrix.
TG_DEVICE void load_tile_sync(u8* tile, const void* base, long long ld, int rows, int k, int row0, int k0) {
#pragma unroll
  for (int c = 0; c < kChunksPerThread; ++c) {
    const int row = chunk_row(c), chunk = chunk_col(c);
    const u16* src = operand_chunk(base, ld, rows, k, row0 + row, k0 + chunk * 8);
    uint4 v = {0u, 0u, 0u, 0u};
    if (src) v = *reinterpret_cast<const uint4*>(src);
    *reinterpret_cast<uint4*>(tile + RowMajorTile::offset(row, chunk)) = v;
  }
}

// grid (ceil(N/128), ceil(M/128)), 256 threads, 16 KiB of static shared memory.
TG_DEVICE void rung1_smem_mma(const LadderParams& p) {
  __shared__ __align__(128) u8 smem[2 * kTileBytes];
  u8* a_tile = smem;
  u8* b_tile = smem + kTileBytes;
  const TileCoord t = tile_coord(blockIdx.y, blockIdx.x);
  Accumulators acc;
  zero(acc);
  for (int k0 = 0; k0 < p.k; k0 += kBlockK) {
    load_tile_sync(a_tile, p.a, p.lda, p.m, p.k, t.m0, k0);
    load_tile_sync(b_tile, p.b, p.ldb, p.n, p.k, t.n0, k0);
    __syncthreads();  // the slice is in shared memory
    mma_k_slice<RowMajorTile>(a_tile, b_tile, t, acc);
    __syncthreads();  // every warp is done with it before the next slice overwrites it
  }
  store_tile(p, t, acc);
}

}  // namespace tilegemm::ladder
