#pragma once
// Weight-only quantised GEMM (w4a16, w8a16, MXFP4 weights; kernels/sm90_wq_gemm.cuh): the packed weight layout the
// kernel reads and its parameter block, shared by host code (the packers in src/layout/wq_pack.cpp, the launch in
// src/kernels/sm90_wq_gemm.cpp) and device code. Plain data only.
//
// D[M, N] = A[M, K] · Wᵀ with A bf16 or fp16 and W [N, K] stored as codes:
//   int4:  W[n][k] = (q - z) · s,  q in 0..15, z the group's zero point (8 when the weight has no zeros), s the
//          group's scale (A's dtype), groups of 32, 64 or 128 consecutive k per row.
//   int8:  W[n][k] = (q - 128) · s[n],  q in 0..255 (a signed int8 weight plus 128), s fp32 per row (channel).
//   mxfp4: W[n][k] = e2m1(q) · 2^(e - 127),  q an e2m1 code (sign, 2 exponent bits, 1 mantissa bit), e the UE8M0
//          exponent of its group of 32 k (OCP MX).
//
// The packed layout is built for one lane's loads. Rows are padded to n_pad (a multiple of 16) and K to k_pad (a
// multiple of 64 and of the group size); padding codes decode to 0 (4-bit code 0, int8 code 128) and padding
// scales are 0.
// A block of 16 rows and 64 k is a "fragment block": one 16-byte load per lane for 4-bit codes (two for int8)
// holds exactly the values its lane feeds to four mma.sync.m16n8k16 steps:
//   lane = 4·g + t (g = lane / 4, t = lane % 4) owns rows g and g + 8 of the block and the 16 consecutive k
//   [16t, 16t + 16) of the 64 (the activations' lane reads the same k of its token, so the dot products agree);
//   step s (0..3) uses k 16t + 4s, 16t + 4s + 1 as the mma's logical columns 2t, 2t + 1 and k 16t + 4s + 2, +3 as
//   columns 2t + 8, 2t + 9 (so the activations' two B registers of a step are adjacent words of one 16-byte load).
// 4-bit codes: word s (u32) of the lane's 16 bytes holds step s; with k0 = 16t + 4s its nibble j (bits 4j..4j+3) is
//   j = 0: (row g,     k0)       j = 4: (row g,     k0 + 1)
//   j = 1: (row g + 8, k0)       j = 5: (row g + 8, k0 + 1)
//   j = 2: (row g,     k0 + 2)   j = 6: (row g,     k0 + 3)
//   j = 3: (row g + 8, k0 + 2)   j = 7: (row g + 8, k0 + 3)
// so nibbles j and j + 4 decode into the two halves of the mma's A register j.
// int8 codes: the lane's 32 bytes are two 16-byte loads (half h = steps 2h, 2h + 1), each stored as its own
//   [32 lanes][16 bytes] plane so a warp's load is one contiguous 512 bytes; word 2(s % 2) holds the bytes
//   (row g, k0), (row g, k0 + 1), (row g + 8, k0), (row g + 8, k0 + 1) with k0 = 16t + 4s, word 2(s % 2) + 1 the
//   same with k0 = 16t + 4s + 2: byte j of a word decodes into half j % 2 of A register 2·(word % 2) + j / 2.
// Arrays (all row-block major, so the 16 rows of a block and one stage of K are one contiguous run):
//   data      u8  [n_pad / 16][k_pad / 64][code bytes per fragment block]   (512 for 4-bit, 1024 for int8)
//   scales    int4: A's dtype [n_pad / 16][k_pad / group][16]   mxfp4: u8 UE8M0 exponents, the same shape
//   zeros     int4 with zero points: u8 [n_pad / 16][k_pad / group][16] (0..15); absent otherwise
//   channel   int8: fp32 [n_pad] per-row scales
#include "tilegemm/gemm_params.hpp"  // TmaDescriptor, TG_HOST_DEVICE
#include "tilegemm/k_groups.hpp"

namespace tilegemm {

enum class WeightFormat : int { kInt4 = 0, kInt8 = 1, kMxfp4 = 2 };

namespace wq {

constexpr int kRowBlock = 16;  // rows of a fragment block (an mma's M)
constexpr int kChunkK = 64;    // k of a fragment block
constexpr int kLanes = 32;
constexpr int kMxGroup = 32;                         // MXFP4's scale group
constexpr int kConsumerWarps = 4;                    // one 16-row block each
constexpr int kBlockN = kConsumerWarps * kRowBlock;  // weight rows per CTA
constexpr int kChunksPerStage = 4;                   // BLOCK_K = 256 per pipeline stage
constexpr int kBlockK = kChunksPerStage * kChunkK;
constexpr int kDequantWarps = 4;  // the dequantise kernel's fragment blocks per CTA

TG_HOST_DEVICE constexpr int code_bytes_per_block(WeightFormat f) {
  return f == WeightFormat::kInt8 ? 2 * kLanes * 16 : kLanes * 16;
}

// Bytes of one scale / zero entry (a row's value for one group).
TG_HOST_DEVICE constexpr int scale_entry_bytes(WeightFormat f) {
  return f == WeightFormat::kInt4 ? 2 : 1;
}

// Groups per row along K: int4 k_pad / group, mxfp4 k_pad / 32; int8 has none (per-row scales).
TG_HOST_DEVICE constexpr int groups_per_row(WeightFormat f, int k_pad, int group_size) {
  return f == WeightFormat::kInt8 ? 0 : k_pad / (f == WeightFormat::kMxfp4 ? kMxGroup : group_size);
}

// Shared memory of one pipeline stage: the activations' boxes ([BLOCK_M][64] of A per chunk, 128-byte swizzle),
// then each row block's codes, scales and zero points for the stage's K (1024-aligned as the swizzle needs).
TG_HOST_DEVICE constexpr int groups_per_stage(WeightFormat f, int group_size) {
  return f == WeightFormat::kInt8 ? 0 : kBlockK / (f == WeightFormat::kMxfp4 ? kMxGroup : group_size);
}
TG_HOST_DEVICE constexpr int act_stage_bytes(int block_m) {
  return kChunksPerStage * block_m * 128;
}
TG_HOST_DEVICE constexpr int code_stage_bytes(WeightFormat f) {
  return kConsumerWarps * kChunksPerStage * code_bytes_per_block(f);
}
TG_HOST_DEVICE constexpr int scale_stage_bytes(WeightFormat f, int group_size) {
  return kConsumerWarps * groups_per_stage(f, group_size) * kRowBlock * scale_entry_bytes(f);
}
TG_HOST_DEVICE constexpr int zero_stage_bytes(WeightFormat f, int group_size, bool has_zeros) {
  return has_zeros ? kConsumerWarps * groups_per_stage(f, group_size) * kRowBlock : 0;
}
TG_HOST_DEVICE constexpr int stage_bytes(WeightFormat f, int group_size, bool has_zeros, int block_m) {
  return (act_stage_bytes(block_m) + code_stage_bytes(f) + scale_stage_bytes(f, group_size) +
          zero_stage_bytes(f, group_size, has_zeros) + 1023) /
         1024 * 1024;
}
// K groups (tilegemm/k_groups.hpp): 1, 2 or 4 sets of consumer warps (one warp per row block each) take turns at
// the stages; more warps per scheduler hide the decode's fixed-latency dependencies.
TG_HOST_DEVICE constexpr int threads(int k_groups) {
  return k_group_threads(kConsumerWarps, k_groups);
}
// 1 KB of slack aligns the base up to 1024 bytes; then the stage barriers, the last-CTA flag and the K groups' scratch.
TG_HOST_DEVICE constexpr int smem_bytes(WeightFormat f, int group_size, bool has_zeros, int block_m, int stages,
                                        int k_groups = 1) {
  return 1024 + stages * stage_bytes(f, group_size, has_zeros, block_m) + stages * 16 + 16 +
         k_group_scratch_bytes(kConsumerWarps, block_m, k_groups);
}

}  // namespace wq

// The kernel's parameter block.
struct WqGemmParams {
  TmaDescriptor tma_a;          // A [M][K], K contiguous: boxes of [BLOCK_M tokens][64 k], 128-byte swizzle
  const unsigned char* data;    // packed codes (layout above)
  const void* scales;           // int4 / mxfp4 group scales; null for int8
  const unsigned char* zeros;   // int4 zero points; null: zero point 8
  const float* channel_scales;  // int8 per-row scales; null otherwise
  void* d;                      // D [M][N], N contiguous, row stride ldd elements
  long long ldd;
  int m, n;        // logical sizes (D's extents)
  int k_chunks;    // k_pad / 64
  int groups;      // groups per row (scales' middle extent); 0 for int8
  int exp_shift;   // mxfp4: scale multipliers are 2^(e - 1 - exp_shift), the accumulator is times 2^exp_shift
  int num_splits;  // K slices per (row block, token block)
  int m_blocks;    // ceil(M / BLOCK_M)
  // Splits summed in the kernel (num_splits > 1): partial tiles [tile][split][BLOCK_N][BLOCK_M] fp32 and one
  // counter per tile (left at zero), as the HC-prenorm kernel does.
  float* partials;
  int* counters;
  // M-grouped over experts: the weight arrays hold one expert after another (these strides apart; 0 when dense).
  // Contiguous: grouped_layout int32 [M] is each row's expert (-1: padding), whole token blocks per expert.
  // Masked: A [experts][m][K] and D (d_group_bytes apart), masked_m int32 [experts] the valid rows of each.
  long long data_group_bytes, scale_group_bytes, zero_group_bytes, d_group_bytes;
  int channel_group;  // floats of channel_scales per expert (n_pad)
  const int* grouped_layout;
  const int* masked_m;
};

}  // namespace tilegemm
