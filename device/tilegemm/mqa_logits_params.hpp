#pragma once
// The parameter blocks of the SM90 FP8 MQA-logits kernel (kernels/sm90_fp8_mqa_logits.cuh) and of the clean-logits
// kernel (kernels/sm90_clean_logits.cuh), shared by host code (src/kernels/sm90_mqa_logits.cpp fills them) and device
// code (one __grid_constant__ argument each). Plain data only.
#include "tilegemm/gemm_params.hpp"  // TmaDescriptor

namespace tilegemm {

// The MQA-logits kernel's fixed shape, which host code needs for the grid, the allocation helper and shared memory.
namespace mqa_logits {

constexpr int kBlockQH = 128;                   // q rows × heads of one CTA block: the N of the wgmma
constexpr int kBlockKv = 256;                   // KV tokens of one stage
constexpr int kMathWarpgroups = kBlockKv / 64;  // each consumer warpgroup owns 64 KV rows (the wgmma's M)
constexpr int kThreads = (kMathWarpgroups + 1) * 128;
constexpr int kMathWarps = kMathWarpgroups * 4;
constexpr int kMaxBlockQ = kBlockQH / 32;         // H = 32
constexpr int kWeightsStageBytes = kBlockQH * 4;  // fp32 weights of the block's rows × heads
constexpr int kScalesStageBytes = kBlockKv * 4;   // fp32 KV scales of the stage's tokens
constexpr int kKvStartAlign = 4;                  // a q block's first KV token is rounded down to 16 bytes of scales

// Per Q stage, written by the producer with the Q tile: which q block it is (q0 < 0: no more blocks) and each row's
// KV window, clamped to [0, seq_len_kv) (lo == hi: empty), and the column shift of compressed logits.
struct QBlockInfo {
  int q0;
  int lo[kMaxBlockQ], hi[kMaxBlockQ], shift[kMaxBlockQ];
  int pad[3];
};
// Per KV stage, written by the producer with the tile: its first token and whether it is its q block's last stage.
struct KvBlockInfo {
  int kv0;
  int last;
};

TG_HOST_DEVICE constexpr int block_q(int heads) {
  return kBlockQH / heads;
}
TG_HOST_DEVICE constexpr int q_stage_bytes(int head_dim) {
  return kBlockQH * head_dim;  // e4m3
}
TG_HOST_DEVICE constexpr int kv_stage_bytes(int head_dim) {
  return kBlockKv * head_dim;
}

// Shared memory (the dynamic buffer is 1024-byte aligned): Q tiles, KV tiles (each a multiple of 1024 bytes, as the
// swizzle atoms need), weights, scales, the stage infos and the two rings' barriers.
struct SmemPlan {
  int q, kv, weights, scales, q_info, kv_info, q_barriers, kv_barriers, total;
};
TG_HOST_DEVICE constexpr SmemPlan smem_plan(int head_dim, int q_stages, int kv_stages) {
  SmemPlan p{};
  p.q = 0;
  p.kv = p.q + q_stages * q_stage_bytes(head_dim);
  p.weights = p.kv + kv_stages * kv_stage_bytes(head_dim);
  p.scales = p.weights + q_stages * kWeightsStageBytes;
  p.q_info = p.scales + kv_stages * kScalesStageBytes;
  p.kv_info = p.q_info + q_stages * static_cast<int>(sizeof(QBlockInfo));
  p.q_barriers = p.kv_info + kv_stages * static_cast<int>(sizeof(KvBlockInfo));
  p.kv_barriers = p.q_barriers + q_stages * 16;
  p.total = p.kv_barriers + kv_stages * 16;
  return p;
}

// The clean-logits kernel: one warp per logits row.
constexpr int kCleanWarps = 8;
constexpr int kCleanThreads = kCleanWarps * 32;

}  // namespace mqa_logits

struct MqaLogitsParams {
  TmaDescriptor tma_q;          // q e4m3 [seq_len · H][D]: boxes [128 rows][D], D-byte swizzle
  TmaDescriptor tma_kv;         // kv e4m3 [seq_len_kv][D]: boxes [256 rows][D], D-byte swizzle
  TmaDescriptor tma_kv_scales;  // fp32 [seq_len_kv]: boxes of 256
  const float* weights;         // fp32 [seq_len][H], H contiguous
  long long weights_stride;     // elements between weights' rows
  const int* ks;                // int32 [seq_len]: first KV token of each row's window
  const int* ke;                // int32 [seq_len]: one past its last
  void* logits;                 // fp32 or bf16 [seq_len][width], width contiguous
  long long logits_stride;      // elements between logits' rows
  int seq_len;
  int seq_len_kv;
  int max_seqlen_k;  // compressed logits: the row width (row i holds tokens ks[i] .. ks[i] + width - 1); 0 otherwise
};

struct CleanLogitsParams {
  void* logits;             // fp32 or bf16 [rows][cols]
  long long logits_stride;  // elements between rows
  const int* ks;            // int32 [rows / next_n], or null (every window starts at 0)
  const int* ke;            // int32 [rows / next_n]
  int rows;
  int cols;
  int next_n;  // row i's window is [ks[i / next_n], ke[i / next_n] - next_n + i % next_n + 1) (1: [ks[i], ke[i]))
};

}  // namespace tilegemm
