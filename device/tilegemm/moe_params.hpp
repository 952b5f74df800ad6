#pragma once
// The parameter blocks of the FP8 MoE layer's routing, quantising and combining kernels (kernels/sm90_moe.cuh),
// shared by host code (src/kernels/sm90_moe.cpp fills them) and device code (one __grid_constant__ argument each).
// Plain data only.
#include "tilegemm/gemm_params.hpp"

namespace tilegemm {

namespace moe {

constexpr int kRouteThreads = 1024;  // one CTA routes every (token, k) pair
constexpr int kMaxExperts = 1024;    // per-expert counters live in the routing CTA's shared memory
constexpr int kMaxTopk = 32;         // a token's expert rows are held one per lane of a warp
constexpr int kThreads = 256;        // the gather, SwiGLU and combine kernels
constexpr int kQuantBlock = 128;     // per-token scales: one per row and 128 columns (a warp's 32 lanes x 4)
// Rows of one expert's segment in the expert-sorted buffer start on this boundary (DeepGEMM's psum layout: group g
// starts at its predecessor's end row rounded up to 128, device/tilegemm/shared_enums.hpp).
constexpr int kRowAlignment = 128;

}  // namespace moe

// Routing: counts the pairs of each expert and gives every pair a row of the expert-sorted buffer.
struct MoeRouteParams {
  const void* topk_idx;  // [tokens, topk], int32 or int64 (idx_is_int64), rows contiguous
  long long idx_stride;  // elements between tokens
  int idx_is_int64;
  int tokens, topk, experts;
  int* group_end;  // [experts] end row of each expert's segment (the psum layout of the grouped GEMMs)
  int* row_of;     // [tokens * topk] row of each pair; -1 where the expert id is outside [0, experts)
};

// Per-token FP8 rows with 1x128 scales, written at the rows of an expert-sorted buffer. The scales are MN-major
// (scale of row r and column block b at sf[b * sf_block_stride + r]), the layout the FP8 GEMMs read fastest.
struct MoeFp8Rows {
  unsigned char* data;
  long long stride;  // bytes between rows
  int rows;          // rows of the buffer: a row index past them is not written
  float* sf;
  long long sf_block_stride;  // floats between column blocks
};

// Dispatch: quantises each token of x once and writes it to the rows of its pairs.
struct MoeDispatchParams {
  const unsigned short* x;  // bf16 [tokens, hidden]
  long long x_stride;
  const int* row_of;  // [tokens * topk]
  int tokens, topk, hidden;
  int ue8m0;  // scales rounded up to powers of two
  MoeFp8Rows out;
};

// SwiGLU + quantisation: row r of h holds [gate | up] (bf16 [rows, 2 * inter]); silu(gate) * up becomes FP8 rows.
struct MoeSwigluParams {
  const unsigned short* h;
  long long h_stride;
  const int* row_of;  // the pairs' rows: only they are computed
  int pairs, inter;
  int ue8m0;
  MoeFp8Rows out;
};

// Combine: y[t] = sum over k of weights[t, k] * y2[row_of[t, k]], in k order, in fp32, rounded to bf16 once.
struct MoeCombineParams {
  const unsigned short* y2;  // bf16 [rows, hidden]
  long long y2_stride;
  int rows;  // a row index past them is not read
  const int* row_of;
  const float* weights;  // fp32 [tokens, topk], rows contiguous
  long long weights_stride;
  int tokens, topk, hidden;
  unsigned short* y;  // bf16 [tokens, hidden]
  long long y_stride;
};

}  // namespace tilegemm
