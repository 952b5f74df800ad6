#pragma once
// The parameter block of the SM90 HC-prenorm kernel (kernels/sm90_tf32_hc_prenorm_gemm.cuh), shared by host code
// (src/kernels/sm90_hc_prenorm.cpp fills it) and device code (one __grid_constant__ argument). Plain data only.
#include "tilegemm/gemm_params.hpp"  // TmaDescriptor

namespace tilegemm {

// The kernel's fixed shape, which host code needs for the grid, the workspace and shared memory.
namespace hc_prenorm {

// A CTA's rows of A: 64, or 16 where the model finds it faster (small M): a 64-row box for 13 rows has 51 rows past
// M, which the copy engine fills with zeros row by row, and at small M a stage's time follows its box rows.
constexpr int kBlockM = 64;
constexpr int kSmallBlockM = 16;
constexpr int kBlockK = 128;
constexpr int kConsumerWarps = 4;  // one 32-wide K slice of each stage per warp
constexpr int kThreads = (kConsumerWarps + 1) * 32;
constexpr int kSliceK = kBlockK / kConsumerWarps;  // 32 fp32 = one 128-byte swizzle row of B
constexpr int kABoxK = 64;                         // 64 bf16 = one 128-byte swizzle row of A
// Library splits are summed in clusters of up to 8 CTAs (the portable cluster size, which every GPC can hold).
constexpr int kMaxCluster = 8;

TG_HOST_DEVICE constexpr int a_box_bytes(int block_m) {
  return block_m * kABoxK * 2;
}

// Bytes of one stage: two A boxes [block_m][64] bf16, then kConsumerWarps B boxes [N][32] fp32 (multiples of the
// 1024 bytes a 128-byte swizzle atom is aligned to, for every N and block_m).
TG_HOST_DEVICE constexpr int stage_bytes(int n, int block_m) {
  return 2 * a_box_bytes(block_m) + kConsumerWarps * n * kSliceK * 4;
}

// Shared memory behind the stages: the warps' partial tiles [warp][block_m][N + 4] (4 floats of padding keep the
// lanes' float2 stores off each other's banks), their partial squares [warp][block_m], the stage barriers and the
// last-CTA flag.
TG_HOST_DEVICE constexpr int reduce_floats(int n, int block_m) {
  return kConsumerWarps * block_m * (n + 4) + kConsumerWarps * block_m;
}

TG_HOST_DEVICE constexpr int smem_bytes(int n, int stages, int block_m) {
  // 1 KB of slack: the dynamic shared-memory base is aligned up to the 1024 bytes the swizzle atoms need.
  return 1024 + stages * stage_bytes(n, block_m) + reduce_floats(n, block_m) * 4 + stages * 16 + 16;
}

}  // namespace hc_prenorm

struct HcPrenormParams {
  TmaDescriptor tma_a;         // A bf16 [M][K], K contiguous: boxes of [block_m rows][64 k], 128-byte swizzle
  TmaDescriptor tma_b;         // B fp32 [N][K], K contiguous: boxes of [N rows][32 k], 128-byte swizzle
  float* d;                    // D fp32 [splits?][M][N], N contiguous
  float* sqr_sum;              // fp32 [splits?][M], contiguous
  long long d_split_stride;    // elements between the splits' D slices (caller's splits; 0 otherwise)
  long long sqr_split_stride;  // elements between the splits' sqr_sum slices
  int ldd;                     // elements between D's rows
  int m;
  int k_blocks;    // ceil(K / BLOCK_K)
  int num_splits;  // K slices per row block; CTA (row block, split) = (blockIdx.x / splits, blockIdx.x % splits)
  // Splits reduced inside the kernel (num_splits chosen by the library, a multiple of the kernel's cluster size C):
  // a cluster's CTAs sum their tiles in distributed shared memory, CTA r of it the words of share r. With more than
  // one cluster per row block, each CTA writes its share's sum to `partials` ([row blocks][clusters][block_m][N + 1],
  // the last column sqr_sum) and the last cluster to arrive on `counters[row block][r]` (zero before the launch)
  // adds share r over the clusters, writes it to D and sqr_sum and sets the counter back to zero. Null when every
  // CTA writes its own slice of D (one split, or the caller's splits) or one cluster holds a row block's splits.
  float* partials;
  int* counters;
};

}  // namespace tilegemm
