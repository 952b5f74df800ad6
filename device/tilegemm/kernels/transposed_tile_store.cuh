#pragma once
// The epilogue of the small-M kernels that compute Dᵀ = W · Aᵀ with mma.sync (sm90_wq_gemm.cuh,
// sm90_fp8_fp4_gemm.cuh): a CTA holds a [64 weight rows][BLOCK_M tokens] tile, 16 rows per consumer warp, in the
// m16n8 accumulator fragments (lane (g, t) of warp w: rows 16w + g and 16w + g + 8, tokens 8j + 2t, 8j + 2t + 1 of
// n-tile j). Written to D [M][N] (N contiguous) directly, or, when the K range is split across CTAs, as fp32 partial
// tiles that the last CTA of the tile adds in split order (prim::last_split_arrived) before writing D.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/dequant.cuh"
#include "tilegemm/prim/global_memory.cuh"
#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

template <int kBlockM, int kConsumerWarps, DType kOut>
struct TransposedTileStore {
  static constexpr int kRowBlock = 16, kBlockN = kConsumerWarps * kRowBlock, kNTiles = kBlockM / 8;
  static constexpr int kTileElems = kBlockN * kBlockM;
  static constexpr u32 kConsumerThreads = kConsumerWarps * 32;

  void* d;         // D of this CTA's problem (expert)
  long long ldd;   // D's row stride in elements
  int m0, m_end;   // the tile's first token and the problem's token end
  int n0, n;       // the tile's first weight row and the weight's rows
  int warp, lane;  // this consumer thread

  // The whole tile's fragments straight to D (rows and tokens past the ends are dropped).
  TG_DEVICE void store(const float (&acc)[kNTiles][4]) const {
    const int g = lane / 4, t = lane % 4, row = n0 + warp * kRowBlock + g;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int m = m0 + 8 * j + 2 * t + (e & 1), r = row + (e < 2 ? 0 : 8);
        if (m < m_end && r < n) prim::store_as<kOut>(d, m * ldd + r, acc[j][e]);
      }
  }

  // This split's fragments (`active`: the warp's rows are inside the weight) into its partial tile; the CTA that
  // completes the tile sums every split's in order and writes D, then leaves the tile's counter at zero for the next
  // launch. Every consumer thread calls this; `barrier` is a named barrier over them (`last_flag` in shared memory).
  TG_DEVICE void reduce(const float (&acc)[kNTiles][4], bool active, float* partials, int* counters, int tile,
                        int split, int splits, int* last_flag, u32 barrier) const {
    const int g = lane / 4, t = lane % 4;
    float* mine = partials + (static_cast<long long>(tile) * splits + split) * kTileElems;
    if (active) {
      const int r = warp * kRowBlock + g;
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) {
        *reinterpret_cast<float2*>(&mine[r * kBlockM + 8 * j + 2 * t]) = make_float2(acc[j][0], acc[j][1]);
        *reinterpret_cast<float2*>(&mine[(r + 8) * kBlockM + 8 * j + 2 * t]) = make_float2(acc[j][2], acc[j][3]);
      }
    }
    if (!prim::last_split_arrived(&counters[tile], splits, last_flag, barrier, kConsumerThreads)) return;
    // It leaves the partials zeroed, as it found them: the stream's split workspace is shared with the GEMMs, whose
    // atomic fix-up adds into zeros wherever its layout puts them (kernels/split_workspace.hpp).
    float* first = partials + static_cast<long long>(tile) * splits * kTileElems;
    // Token-major order: consecutive threads write consecutive columns of one row of D. Each pass sums kPass of this
    // thread's elements, a batch of 4 splits per L2 round trip.
    constexpr int kPerThread = kTileElems / static_cast<int>(kConsumerThreads), kPass = 4;
    static_assert(kTileElems % kConsumerThreads == 0 && kPerThread % kPass == 0, "whole passes of whole elements");
    for (int base = 0; base < kPerThread; base += kPass) {
      const auto element = [&](int w) { return static_cast<int>(threadIdx.x + (base + w) * kConsumerThreads); };
      const auto slot = [&](int w) { return element(w) % kBlockN * kBlockM + element(w) / kBlockN; };
      const auto write = [&](int w, float v) {
        const int token = element(w) / kBlockN, r = element(w) % kBlockN;
        if (m0 + token < m_end && n0 + r < n) prim::store_as<kOut>(d, (m0 + token) * ldd + n0 + r, v);
      };
      prim::sum_split_partials<kPass, 4>(first, splits, kTileElems, slot, write);
    }
    if (threadIdx.x == 0) prim::st_relaxed_gpu(&counters[tile], 0);
  }
};

}  // namespace tilegemm
