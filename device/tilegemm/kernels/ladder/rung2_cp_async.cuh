#pragma once
// Rung 2: overlap loads with math. Shared memory holds a ring of kLadderStages K-slices; cp.async copies
// global -> shared without passing through registers and without blocking the issuing thread, so while the
// warps multiply slice i the copies of slices i+1 .. i+kLadderStages-1 are in flight. After the prologue
// fills the ring, the tensor cores wait for memory only when bandwidth, not latency, runs out.
// What is left: the tile layout is still row after row, so every ldmatrix phase is a 4-way shared-memory
// bank conflict, and CTAs are launched row by row over the output, which spreads a wave's A and B panels
// thinly through L2.
#include "tilegemm/kernels/ladder/tile_common.cuh"
#include "tilegemm/prim/cp_async.cuh"

namespace tilegemm::ladder {

constexpr int kLadderStages = 4;
constexpr int kStageBytes = 2 * kTileBytes;                      // A + B tile of one K-slice
constexpr int kPipelineSmemBytes = kLadderStages * kStageBytes;  // 64 KiB of dynamic shared memory

// Issues this thread's cp.async copies of one 128x32 tile (zero-filled outside the matrix).
template <class Layout>
TG_DEVICE void load_tile_async(u8* tile, const void* base, long long ld, int rows, int k, int row0, int k0) {
#pragma unroll
  for (int c = 0; c < kChunksPerThread; ++c) {
    const int row = chunk_row(c), chunk = chunk_col(c);
    const u16* src = operand_chunk(base, ld, rows, k, row0 + row, k0 + chunk * 8);
    // An out-of-range chunk copies 0 bytes; its source address is never read but must still be an address.
    prim::cp_async_16(tile + Layout::offset(row, chunk), src ? src : static_cast<const u16*>(base), src != nullptr);
  }
}

template <class Layout>
TG_DEVICE void load_slice_async(u8* stage, const LadderParams& p, const TileCoord& t, int k_block) {
  load_tile_async<Layout>(stage, p.a, p.lda, p.m, p.k, t.m0, k_block * kBlockK);
  load_tile_async<Layout>(stage + kTileBytes, p.b, p.ldb, p.n, p.k, t.n0, k_block * kBlockK);
}

// The multi-stage main loop, shared with rung 3 (which changes only Layout and the tile order).
template <class Layout>
TG_DEVICE void pipelined_mainloop(u8* smem, const LadderParams& p, const TileCoord& t, Accumulators& acc) {
  const int k_blocks = (p.k + kBlockK - 1) / kBlockK;
  // Prologue: slices 0 .. kLadderStages-2 in flight. Every thread commits one group per slot, empty or
  // not, so "group i has landed" is always "at most kLadderStages-2 newer groups pending".
#pragma unroll
  for (int s = 0; s < kLadderStages - 1; ++s) {
    if (s < k_blocks) load_slice_async<Layout>(smem + s * kStageBytes, p, t, s);
    prim::cp_async_commit();
  }
  for (int kb = 0; kb < k_blocks; ++kb) {
    prim::cp_async_wait<kLadderStages - 2>();  // this thread's copies of slice kb have landed
    __syncthreads();  // everyone's have, and everyone has finished slice kb-1, whose slot is refilled next
    const int next = kb + kLadderStages - 1;
    if (next < k_blocks) load_slice_async<Layout>(smem + (next % kLadderStages) * kStageBytes, p, t, next);
    prim::cp_async_commit();
    const u8* stage = smem + (kb % kLadderStages) * kStageBytes;
    mma_k_slice<Layout>(stage, stage + kTileBytes, t, acc);
  }
  prim::cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit
}

// grid (ceil(N/128), ceil(M/128)), 256 threads, kPipelineSmemBytes of dynamic shared memory.
TG_DEVICE void rung2_cp_async(const LadderParams& p) {
  extern __shared__ __align__(128) u8 smem[];
  const TileCoord t = tile_coord(blockIdx.y, blockIdx.x);
  Accumulators acc;
  zero(acc);
  pipelined_mainloop<RowMajorTile>(smem, p, t, acc);
  store_tile(p, t, acc);
}

}  // namespace tilegemm::ladder
