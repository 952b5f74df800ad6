#pragma once
// The parameter blocks of the SM90 paged MQA-logits kernels (kernels/sm90_fp8_paged_mqa_logits.cuh and
// kernels/sm90_paged_mqa_logits_metadata.cuh), shared by host code (src/kernels/sm90_paged_mqa_logits.cpp fills
// them) and device code, with the schedule arithmetic both sides use. Plain data and constexpr functions only.
#include "tilegemm/gemm_params.hpp"  // TmaDescriptor, TG_HOST_DEVICE

namespace tilegemm {

namespace paged_mqa {

constexpr int kBlockKv = 64;                   // tokens per KV-cache block (DeepGEMM's SM90 block_kv)
constexpr int kHeadDim = 128;                  // fp8 bytes per token and head
constexpr int kMaxNextN = 2;                   // query rows per batch item (DeepGEMM's SM90 next_n: 1 or 2)
constexpr int kMmaK = 32;                      // K of one fp8 wgmma
constexpr int kKvBytes = kBlockKv * kHeadDim;  // a block's fp8 values, [64 tokens][128], then its scales
constexpr int kScaleBytes = kBlockKv * 4;      // fp32 per token
constexpr int kRecordBytes = 32;               // sizeof(paged_mqa::UnitRecord)
constexpr int kProducerThreads = 32;           // one warp walks the schedule and issues the loads
constexpr int kMetadataThreads = 512;          // the metadata kernel's single CTA

// A batch item's KV blocks: ceil(context / 64) of its longest row (0 for an empty or negative length).
TG_HOST_DEVICE constexpr int kv_blocks(int context_len) {
  return context_len <= 0 ? 0 : context_len / kBlockKv + (context_len % kBlockKv != 0 ? 1 : 0);
}

// The schedule lays every batch item's KV blocks end to end (item 0's blocks 0..n0-1, then item 1's, ...): `total`
// units. Partition s of `parts` takes units [start(s), start(s + 1)): the first total % parts partitions one unit
// more than the others, so partitions differ by at most one KV block. No product of counts: no overflow.
TG_HOST_DEVICE constexpr long long partition_start(long long s, long long total, long long parts) {
  const long long q = total / parts, r = total % parts;
  return s * q + (s < r ? s : r);
}

// The first partition whose start is at or after `unit` (0 <= unit <= total, total > 0): the inverse of
// partition_start.
TG_HOST_DEVICE constexpr long long first_partition_at(long long unit, long long total, long long parts) {
  const long long q = total / parts, r = total % parts;
  if (unit <= r * (q + 1)) return (unit + q) / (q + 1);  // among the r longer partitions
  return r + (unit - r * (q + 1) + q - 1) / q;           // q > 0 here
}

// Bytes of the CTA's shared memory: Q tiles and weights per Q stage, then per consumer warpgroup a ring of KV
// stages (values, scales, unit records), then the barriers; 1 KB of slack aligns the base to the swizzle atoms.
TG_HOST_DEVICE constexpr int q_tile_bytes(int next_n, int heads) {
  return next_n * heads * kHeadDim;
}
TG_HOST_DEVICE constexpr int weights_bytes(int next_n, int heads) {
  return next_n * heads * 4;
}
TG_HOST_DEVICE constexpr int kv_stage_bytes() {
  return kKvBytes + kScaleBytes + kRecordBytes;
}
TG_HOST_DEVICE constexpr int smem_bytes(int next_n, int heads, int warpgroups, int kv_stages, int q_stages) {
  return 1024 + q_stages * (q_tile_bytes(next_n, heads) + weights_bytes(next_n, heads)) +
         warpgroups * kv_stages * kv_stage_bytes() + (2 * q_stages + 2 * warpgroups * kv_stages) * 8;
}

}  // namespace paged_mqa

struct PagedMqaLogitsParams {
  TmaDescriptor tma_q;   // q fp8 [B·next_n·H][128]: boxes of one item's [next_n·H rows][128], 128-byte swizzle
  TmaDescriptor tma_kv;  // the cache's fp8 values [blocks][64][128]: a box per block, 128-byte swizzle
  TmaDescriptor tma_kv_scales;  // the cache's scales fp32 [blocks][64] (8192 bytes into each block): a box per block
  TmaDescriptor tma_weights;    // weights fp32 [B·next_n][H]: boxes of one item's [next_n][H]
  const int* context_lens;      // int32 [B][next_n], contiguous
  const int* block_table;       // int32 [B][table_cols], row stride block_table_stride
  const int* schedule;          // int32 [partitions + 1][2]: (item, block) where each partition starts
  void* logits;                 // fp32 or bf16 [B·next_n][n_cols], row stride ld_logits
  long long ld_logits;
  long long block_table_stride;
  int batch;
  int table_cols;  // blocks a row of the table holds: later blocks read as out of range (zeros)
  int n_cols;      // max_context_len: columns at or past it are never written
};

struct PagedMqaMetadataParams {
  const int* context_lens;  // int32 [B][next_n], contiguous
  int* schedule;            // int32 [partitions + 1][2], contiguous
  int batch;
  int next_n;
  int partitions;
};

}  // namespace tilegemm
