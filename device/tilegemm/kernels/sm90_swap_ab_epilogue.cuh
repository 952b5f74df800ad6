#pragma once
// The epilogue of a BF16 GEMM run with its operands exchanged (Cfg::kSwapAB): the kernel computes Dᵀ = B · Aᵀ, so a
// warpgroup's accumulator rows are D's columns (weights) and its columns are D's rows (tokens). stmatrix .trans turns
// each 8x8 block around on the way to shared memory, giving D's own layout: per 64 accumulator rows one chunk of
// [BLOCK_N tokens][64 weights] (128-byte rows, 128B swizzle), stored with one TMA box of 64 columns by BLOCK_N rows
// of D. TMA drops what lies past D's edges, so ragged M needs no tail map.
//
// Same interface as Sm90Epilogue (sm90_epilogue.cuh); bf16 D only (stmatrix moves 16-bit elements).
#include "tilegemm/kernels/sm90_epilogue.cuh"  // staged_store
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/matrix.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"

namespace tilegemm {

template <int kRowsPerWG, int BLOCK_N>
struct Sm90SwapAbEpilogue {
  static constexpr int kSubM = kRowsPerWG / 64;
  static constexpr int kChunkBytes = BLOCK_N * 128;  // one 64-row sub-block: BLOCK_N rows of D, 64 bf16 each
  static constexpr int kStagingBytes = kSubM * kChunkBytes;
  static_assert(BLOCK_N % 8 == 0 && BLOCK_N <= 256, "a TMA box holds at most 256 rows of D");

  // Byte offset of the 16-byte unit `unit` (8 accumulator rows) of token row `token` in sub-block s's chunk, with
  // the 128B swizzle (unit XOR token % 8).
  static TG_DEVICE int offset(int s, int token, int unit) {
    return s * kChunkBytes + token * 128 + ((unit ^ (token % 8)) * 16);
  }

  // Writes the warpgroup's accumulators into its staging buffer (every thread of the warpgroup calls this). Matrix
  // q of an x4 holds accumulator rows 8·(q % 2).. of warp w's 16 and columns 8·(q / 2).. of the 16 at 16j; stored
  // transposed, its row i is token 16j + 8·(q / 2) + i, and its 8 values are the 16-byte unit 2w + q % 2.
  static TG_DEVICE void stage(u8* smem_d, const float (&acc)[kSubM][BLOCK_N / 2], int warp_in_wg, int lane) {
    const int q = lane / 8, i = lane % 8;
    const int unit = 2 * warp_in_wg + q % 2;
#pragma unroll
    for (int s = 0; s < kSubM; ++s) {
#pragma unroll
      for (int j = 0; j < BLOCK_N / 16; ++j) {
        const float* a = &acc[s][8 * j];
        prim::stmatrix_x4_trans(smem_d + offset(s, 16 * j + 8 * (q / 2) + i, unit), prim::pack_bf16x2(a[0], a[1]),
                                prim::pack_bf16x2(a[2], a[3]), prim::pack_bf16x2(a[4], a[5]),
                                prim::pack_bf16x2(a[6], a[7]));
      }
      if constexpr (BLOCK_N % 16 == 8) {
        // The last 8 tokens: x2 stores the two matrices of rows 0-7 and 8-15 (lanes 0-15 give the addresses).
        constexpr int g = BLOCK_N / 8 - 1;
        const float* a = &acc[s][4 * g];
        prim::stmatrix_x2_trans(smem_d + offset(s, 8 * g + i, 2 * warp_in_wg + q % 2), prim::pack_bf16x2(a[0], a[1]),
                                prim::pack_bf16x2(a[2], a[3]));
      }
    }
  }

  // One thread stores the staged tile: accumulator row m_row is D's column m_row, token n0 is D's row n0.
  template <bool kAccumulate>
  static TG_DEVICE void store(const TmaDescriptor* tma_d, const u8* smem_d, int m_row, int n0, int batch) {
#pragma unroll
    for (int s = 0; s < kSubM; ++s) {
      if constexpr (kAccumulate)
        prim::tma_reduce_add_3d(tma_d, smem_d + s * kChunkBytes, m_row + 64 * s, n0, batch);
      else
        prim::tma_store_3d(tma_d, smem_d + s * kChunkBytes, m_row + 64 * s, n0, batch);
    }
    prim::tma_store_commit();
  }

  // As Sm90Epilogue::write_tile (`n`, the tokens, is unused: TMA clips the box at D's last row).
  template <bool kAccumulate>
  static TG_DEVICE void write_tile(const TmaDescriptor* tma_d, u8* smem_d, const float (&acc)[kSubM][BLOCK_N / 2],
                                   int thread_in_wg, u32 barrier_id, int m_row, int n0, int /*n*/, int batch) {
    staged_store(
        thread_in_wg, barrier_id, [&](int warp, int lane) { stage(smem_d, acc, warp, lane); },
        [&] { store<kAccumulate>(tma_d, smem_d, m_row, n0, batch); });
  }
};

}  // namespace tilegemm
