#pragma once
// An FP8 mixture-of-experts layer on one GPU (expert parallelism 1), DeepSeek-V3's recipe:
//
//   for each token t and each of its top-k experts e = topk_idx[t, k] (ids outside [0, experts) are skipped, as
//   DeepEP's -1):   h = fp8(x[t]) · W1[e]ᵀ                        W1 [E, 2·I, H]: rows [gate | up]
//                   a = fp8(silu(h[:I]) · h[I:])
//                   y[t] += topk_weights[t, k] · (a · W2[e]ᵀ)     W2 [E, H, I]
//
// fp8(·) is DeepGEMM's per-token 1x128 quantisation (per_token_cast_to_fp8; with ue8m0 its scales are powers of
// two), the weights are e4m3 with 128x128 block scales (per_block_cast_to_fp8), y is bf16 and summed in fp32 in k
// order. The layer runs six kernels on one stream: route (each (token, k) pair's row in an expert-sorted buffer whose
// segments start on 128-row boundaries), dispatch (quantise each token once, store it at its pairs' rows), grouped
// GEMM 1 (m_grouped_fp8_gemm_contiguous, psum layout), SwiGLU + quantisation, grouped GEMM 2, combine. No host sync:
// CUDA graphs capture it whole.
#include <cstdint>

#include "tilegemm/gemm.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// Rows the expert-sorted buffers need for `tokens` tokens of `topk` experts out of `experts`: every pair, plus fewer
// than 128 padding rows for each expert that gets one, rounded up to 128.
std::int64_t moe_buffer_rows(std::int64_t tokens, int topk, int experts);

// The expert-sorted buffers of one layer call (allocated by the caller; contents need not be initialised). R is
// moe_buffer_rows or more; the FP8 scale tensors are MN-major views [R, blocks] with stride 1 along R (what the
// grouped GEMMs read fastest), e.g. the transpose of a contiguous fp32 [blocks, R].
struct MoeWorkspace {
  TensorView group_end;  // int32 [E]: end row of each expert's segment
  TensorView row_of;     // int32 [tokens, topk]: each pair's row, -1 for a skipped id
  TensorView a1, sfa1;   // e4m3 [R, H], fp32 [R, H / 128]: the dispatched tokens
  TensorView h1;         // bf16 [R, 2·I]: GEMM 1
  TensorView a2, sfa2;   // e4m3 [R, I], fp32 [R, I / 128]: SwiGLU, quantised
  TensorView y2;         // bf16 [R, H]: GEMM 2
};

// The experts' weights: w1 e4m3 [E, 2·I, H] with fp32 scales [E, 2·I / 128, H / 128]; w2 e4m3 [E, H, I] with fp32
// scales [E, H / 128, I / 128] (DeepGEMM's per-block 1D2D B operands, K-major).
struct Fp8MoeWeights {
  TensorView w1, w1_sf, w2, w2_sf;
};

// The whole layer: x bf16 [T, H] (rows 16-byte aligned), topk_idx int32 or int64 [T, K] and topk_weights fp32
// [T, K] (rows contiguous), y bf16 [T, H]. H and I multiples of 128, E at most 1024, K at most 32. Runs on
// options.stream with options.num_sms for the GEMMs.
void fp8_moe_layer(const TensorView& x, const TensorView& topk_idx, const TensorView& topk_weights,
                   const Fp8MoeWeights& weights, const TensorView& y, const MoeWorkspace& workspace, bool ue8m0,
                   const GemmOptions& options = {});

// The layer's own kernels, one step each (the GEMMs are the grouped FP8 GEMMs of fp8_gemm.hpp).
// route: fills group_end [E] and row_of [T, K] from topk_idx.
void moe_route(const TensorView& topk_idx, const TensorView& group_end, const TensorView& row_of, void* stream);
// dispatch: x bf16 [T, H] quantised per token into rows row_of of a (e4m3 [R, H]) and sfa (fp32 [R, H / 128]).
void moe_dispatch_fp8(const TensorView& x, const TensorView& row_of, const TensorView& a, const TensorView& sfa,
                      bool ue8m0, void* stream);
// SwiGLU + quantisation of the rows row_of of h (bf16 [R, 2·I]) into a (e4m3 [R, I]) and sfa (fp32 [R, I / 128]).
void moe_swiglu_quant_fp8(const TensorView& h, const TensorView& row_of, const TensorView& a, const TensorView& sfa,
                          bool ue8m0, void* stream);
// combine: y[t] = Σ_k topk_weights[t, k] · y2[row_of[t, k]] (rows of -1 skipped), y2 bf16 [R, H] into y bf16 [T, H].
void moe_combine(const TensorView& y2, const TensorView& row_of, const TensorView& topk_weights, const TensorView& y,
                 void* stream);

}  // namespace tilegemm
