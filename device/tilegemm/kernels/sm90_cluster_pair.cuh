#pragma once
// The 2-CTA cluster both SM90 GEMM kernels may run in: CTAs 2q and 2q+1 take m-blocks of one n-block and share
// (multicast) the B tile, each loading one half for both (2x1). kPaired = false is a lone CTA and costs nothing.
// Everything a kernel does differently in a pair lives here: barrier counts, the start and exit handshakes, the
// stage release the peer must see, and the shared tile's load.
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"

namespace tilegemm {

template <bool kPaired>
struct Sm90ClusterPair {
  static constexpr u32 kCtas = kPaired ? 2 : 1;  // CTAs whose consumers release each stage
  u32 rank = 0;

  // After thread 0 initialised the barriers: the peer must not write into this CTA's stages (or arrive on its
  // barriers) before they exist.
  TG_DEVICE void sync_after_init() {
    if constexpr (kPaired) {
      prim::cluster_sync();
      rank = prim::cluster_cta_rank();
    } else {
      __syncthreads();
    }
  }

  // A stage is free again once the consumers of every CTA it was delivered to released it.
  template <int kStages>
  TG_DEVICE void release(prim::StageBarriers<kStages>* barriers, u32 stage) const {
    barriers->consumer_release(stage);
    if constexpr (kPaired) prim::mbarrier_arrive_cluster(&barriers->inputs_consumed[stage], rank ^ 1);
  }

  // Loads the shared K-major B tile of kRows rows of 128 bytes through a descriptor whose box is kRows / 2 rows: this
  // CTA's half into both CTAs when `share`, else (the pair's blocks use different tiles) both halves into this CTA
  // only. The barrier expects the whole tile either way.
  template <int kRows>
  TG_DEVICE void load_shared(const TmaDescriptor* desc, u64* bar, u8* smem, int k0, int row0, int batch,
                             bool share) const {
    static_assert(kPaired && kRows % 16 == 0, "two halves of whole 8-row swizzle atoms");
    constexpr int kHalf = kRows / 2;
    constexpr int kRowBytes = 128;
    if (share) {
      prim::tma_load_3d_multicast(desc, bar, smem + rank * kHalf * kRowBytes, k0, row0 + static_cast<int>(rank) * kHalf,
                                  batch, 0x3);
    } else {
      for (int h = 0; h < 2; ++h)
        prim::tma_load_3d(desc, bar, smem + h * kHalf * kRowBytes, k0, row0 + h * kHalf, batch);
    }
  }

  // A CTA may not exit while its peer can still arrive on its barriers (every thread calls this).
  TG_DEVICE void sync_before_exit() const {
    if constexpr (kPaired) {
      __syncwarp();
      prim::cluster_sync();
    }
  }
};

}  // namespace tilegemm
