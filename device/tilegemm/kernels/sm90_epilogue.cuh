#pragma once
// The SM90 GEMM epilogue a consumer warpgroup runs on its fp32 accumulators: registers → swizzled shared
// memory (stmatrix for bf16 D, paired stores for fp32 D) → one TMA store (or TMA reduce-add) per column chunk.
//
// D is staged as column chunks of kDChunkBytes-wide rows (128, 64, 32 or 16 bytes, d_chunk_bytes()), each chunk
// swizzled with the matching TMA mode (16-byte chunks unswizzled), so any BLOCK_N that is a multiple of 8 works.
// The accumulator layout is wgmma's: per 64-row sub-block, warp w owns rows 16w..16w+15; lane l holds the pairs at
// row l/4 (+8) and columns 8j + 2(l%4) for j in [0, BLOCK_N/8).
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"

namespace tilegemm {

// A warpgroup's hand-off of one tile through its staging buffer: wait until the previous tile's store has read the
// buffer, stage(warp_in_wg, lane), make it visible to the TMA unit, and let one thread store() it. `barrier_id` is the
// warpgroup's named barrier (128 threads).
template <class Stage, class Store>
TG_DEVICE void staged_store(int thread_in_wg, u32 barrier_id, Stage&& stage, Store&& store) {
  const bool is_store_thread = thread_in_wg == 0;
  if (is_store_thread) prim::tma_store_wait_read<0>();
  prim::named_barrier_sync(barrier_id, 128);
  stage(thread_in_wg / 32, thread_in_wg % 32);
  prim::fence_proxy_async_shared();
  prim::named_barrier_sync(barrier_id, 128);
  if (is_store_thread) store();
}

template <int kRowsPerWG, int BLOCK_N, bool kDIsFloat>
struct Sm90Epilogue {
  static constexpr int kSubM = kRowsPerWG / 64;
  static constexpr int kElemBytes = kDIsFloat ? 4 : 2;
  static constexpr int kChunkBytes = d_chunk_bytes(BLOCK_N, kElemBytes);
  static constexpr int kChunkCols = kChunkBytes / kElemBytes;
  static constexpr int kUnitsPerChunkRow = kChunkBytes / 16;               // 16-byte units in one chunk row
  static constexpr int kRowsPerSwizzleStep = 128 / kChunkBytes;            // 16-byte chunks: unit ^ 0, no swizzle
  static constexpr int kStagingBytes = kRowsPerWG * BLOCK_N * kElemBytes;  // per warpgroup

  // Byte offset of 16-byte unit `unit` (along N) of row `row` in the staged tile, with the TMA swizzle of the
  // chunk width: unit index XOR (row / (128 / chunk bytes)) within one chunk row.
  static TG_DEVICE int offset(int row, int unit) {
    const int chunk = unit / kUnitsPerChunkRow;
    const int swizzled = (unit % kUnitsPerChunkRow) ^ ((row / kRowsPerSwizzleStep) % kUnitsPerChunkRow);
    return chunk * (kRowsPerWG * kChunkBytes) + row * kChunkBytes + swizzled * 16;
  }

  // Writes the warpgroup's accumulators into its staging buffer (every thread of the warpgroup calls this).
  static TG_DEVICE void stage(u8* smem_d, const float (&acc)[kSubM][BLOCK_N / 2], int warp_in_wg, int lane) {
    const int warp_row = warp_in_wg * 16;
#pragma unroll
    for (int s = 0; s < kSubM; ++s) {
      if constexpr (!kDIsFloat) {
        // stmatrix x4 stores a 16x16 block: lane l addresses row (l % 8) + 8·((l / 8) % 2) and the 16-byte
        // column unit (l / 16) of the pair of 8-column groups.
#pragma unroll
        for (int j = 0; j < BLOCK_N / 16; ++j) {
          const int row = s * 64 + warp_row + (lane % 8) + 8 * ((lane / 8) % 2);
          const int unit = 2 * j + lane / 16;  // 16-byte unit (8 bf16) along N
          const float* a = &acc[s][8 * j];
          prim::stmatrix_x4(smem_d + offset(row, unit), prim::pack_bf16x2(a[0], a[1]), prim::pack_bf16x2(a[2], a[3]),
                            prim::pack_bf16x2(a[4], a[5]), prim::pack_bf16x2(a[6], a[7]));
        }
        if constexpr (BLOCK_N % 16 == 8) {
          // The last 8 columns: stmatrix x2 stores one 16x8 block (lanes 0-15 address rows 0-15 of unit g).
          constexpr int g = BLOCK_N / 8 - 1;
          const int row = s * 64 + warp_row + (lane % 8) + 8 * ((lane / 8) % 2);
          const float* a = &acc[s][4 * g];
          prim::stmatrix_x2(smem_d + offset(row, g), prim::pack_bf16x2(a[0], a[1]), prim::pack_bf16x2(a[2], a[3]));
        }
      } else {
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; ++j) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int row = s * 64 + warp_row + lane / 4 + 8 * half;
            const int col = 8 * j + 2 * (lane % 4);
            prim::st_shared_f32x2(smem_d + offset(row, col / 4) + (col % 4) * 4, acc[s][4 * j + 2 * half],
                                  acc[s][4 * j + 2 * half + 1]);
          }
        }
      }
    }
  }

  // One thread issues the TMA stores of the staged tile whose first row is m_row (columns past n clipped).
  template <bool kAccumulate>
  static TG_DEVICE void store(const TmaDescriptor* tma_d, const u8* smem_d, int m_row, int n0, int n, int batch) {
#pragma unroll
    for (int c = 0; c < BLOCK_N / kChunkCols; ++c) {
      const int n_col = n0 + c * kChunkCols;
      if (n_col >= n) break;
      const u8* src = smem_d + c * (kRowsPerWG * kChunkBytes);
      if constexpr (kAccumulate)
        prim::tma_reduce_add_3d(tma_d, src, n_col, m_row, batch);
      else
        prim::tma_store_3d(tma_d, src, n_col, m_row, batch);
    }
    prim::tma_store_commit();
  }

  // The whole epilogue of one warpgroup's rows (staged_store).
  template <bool kAccumulate>
  static TG_DEVICE void write_tile(const TmaDescriptor* tma_d, u8* smem_d, const float (&acc)[kSubM][BLOCK_N / 2],
                                   int thread_in_wg, u32 barrier_id, int m_row, int n0, int n, int batch) {
    staged_store(
        thread_in_wg, barrier_id, [&](int warp, int lane) { stage(smem_d, acc, warp, lane); },
        [&] { store<kAccumulate>(tma_d, smem_d, m_row, n0, n, batch); });
  }
};

}  // namespace tilegemm
