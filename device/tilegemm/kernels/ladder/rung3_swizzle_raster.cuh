#pragma once
// Rung 3: feed the tensor cores without stalls in shared memory and in L2. Two changes to rung 2, both about
// layout rather than arithmetic:
//  - swizzle: tiles are stored with the 16-byte chunk index XOR-ed by (row / 2) % 4 (SwizzledTile), so the
//    eight rows one ldmatrix phase reads land in eight different bank groups — no bank conflicts, where
//    rung 2 had four-way conflicts on every fragment load;
//  - rasterisation: the grid is 1-D and CTA i takes its output tile in panels of `raster_group` m-blocks
//    (walking M inside a panel, then N), so the CTAs resident at one time share a few A row panels and
//    B column panels that stay in L2, instead of sweeping whole rows of tiles.
#include "tilegemm/kernels/ladder/rung2_cp_async.cuh"

namespace tilegemm::ladder {

// Tile `index` of an m_blocks x n_blocks grid walked in panels of `group` m-blocks.
TG_DEVICE void rasterised_tile(int index, int m_blocks, int n_blocks, int group, int& m_block, int& n_block) {
  const int per_panel = group * n_blocks;
  const int first_m = (index / per_panel) * group;
  const int rows = min(group, m_blocks - first_m);  // the last panel may be shorter
  const int in_panel = index % per_panel;
  m_block = first_m + in_panel % rows;
  n_block = in_panel / rows;
}

// grid (ceil(M/128) · ceil(N/128)), 256 threads, kPipelineSmemBytes of dynamic shared memory.
TG_DEVICE void rung3_swizzle_raster(const LadderParams& p) {
  extern __shared__ __align__(128) u8 smem[];
  const int m_blocks = (p.m + kBlockM - 1) / kBlockM, n_blocks = (p.n + kBlockN - 1) / kBlockN;
  int m_block, n_block;
  rasterised_tile(blockIdx.x, m_blocks, n_blocks, p.raster_group, m_block, n_block);
  const TileCoord t = tile_coord(m_block, n_block);
  Accumulators acc;
  zero(acc);
  pipelined_mainloop<SwizzledTile>(smem, p, t, acc);
  store_tile(p, t, acc);
}

}  // namespace tilegemm::ladder
