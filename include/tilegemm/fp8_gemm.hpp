#pragma once
// FP8 (e4m3) GEMMs with fine-grained FP32 scaling factors on SM90 (DeepGEMM's recipes).
//
// Scaling-factor (SF) layouts. K blocks are 128 wide; kb = ceil(K / 128).
//   per-token 1x128   (A always; B in the 1D1D recipe): fp32 [rows, kb]; batched / grouped forms add a leading
//                     [G] dim.
//   per-block 128x128 (B in the 1D2D recipe): fp32 [ceil(N / 128), kb]; grouped forms add a leading [G] dim.
// Scales may have any non-negative strides (a 4-byte aligned pointer): the kernel copies them into shared memory
// element by element, so row-major scales as DeepGEMM's quantisers return them need no layout pass, and MN-major,
// TMA-aligned ones (get_mn_major_tma_aligned_tensor) read with coalesced copies.
// Element (r, k) of an operand is dequantised as fp8(r, k) * sf(r, k / 128) (per token) or
// fp8(r, k) * sf(r / 128, k / 128) (per block).
//
// Accumulation: wgmma accumulates one 128-wide K block into fresh fp32 registers, which are then scaled and
// added to the fp32 result on CUDA cores (Hopper's fp8 tensor-core accumulator keeps fewer mantissa bits).
// Operands must be K-major on SM90 (wgmma reads fp8 only K-major).
#include <vector>

#include "tilegemm/gemm.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// 1D2D (inference, forward): a e4m3 [M,K] or [B,M,K]; sfa per-token; b e4m3 [N,K] or [B,N,K]; sfb per-block;
// d bf16 [M,N] or [B,M,N], contiguous rows. No C (the recipe has no accumulation input).
void fp8_gemm_1d2d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const GemmOptions& options = {});

// DeepGEMM's fp8_gemm_nt_skip_head_mid: fp8_gemm_1d2d of 2-D operands (a [M,K], b [N,K]) whose N columns are heads
// of left + right, into d bf16 [M, N + N / (left + right) · mid] whose heads are left + mid + right wide (HeadSplits,
// tilegemm/gemm_config.hpp); the mid columns of each head are not written. N must be a multiple of left + right, and
// left and right must share a tile width of the kernel (a multiple of 8 in [16, 256]; multiples of 16 always do).
// K > 0, as in DeepGEMM (zeroing d for K = 0 would overwrite the mid columns).
void fp8_gemm_1d2d_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                 const TensorView& d, const HeadSplits& head_splits, const GemmOptions& options = {});

// 1D1D (weight gradients): both scales per-token; d fp32 [M,N]; c optional fp32 (may be d: D += A·Bᵀ).
void fp8_gemm_1d1d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const TensorView* c, const GemmOptions& options = {});

// M-grouped contiguous 1D2D: a [M_total,K], sfa per-token [M_total, kb], b [G,N,K], sfb [G, ceil(N/128), kb],
// d bf16 [M_total,N]; grouped_layout as in m_grouped_bf16_gemm_contiguous (per-row index or prefix sums).
void m_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                   bool use_psum_layout, const GemmOptions& options = {});

// M-grouped masked 1D2D: a [G,M_max,K], sfa [G, M_max, kb] per-token, b [G,N,K], sfb [G, ceil(N/128), kb],
// d bf16 [G,M_max,N]; masked_m int32 [G] on the device; expected_m only a heuristic hint (no host sync).
void m_grouped_fp8_gemm_masked(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, const TensorView& masked_m, int expected_m,
                               const GemmOptions& options = {});

// K-grouped contiguous 1D1D (MoE weight gradients): a e4m3 [M, ΣK] and b e4m3 [N, ΣK] (K-major) hold the
// groups one after another along K, each group's K a multiple of 128; sfa fp32 [M, ΣK/128] and sfb fp32
// [N, ΣK/128] per-token; d fp32 [G, M, N] gets d[g] = c[g] + a[:, kg] · b[:, kg]ᵀ.
// a and b may instead be 1-D e4m3 tensors of ΣK·M and ΣK·N elements in DeepGEMM's layout: group g's K-major
// [M, k_g] (and [N, k_g]) block right after group g-1's; the kernel reads each block through a map of its own.
// `ks` on the host and `ks_tensor` (int32, device) hold the group sizes; c may be d or null.
void k_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const std::vector<int>& ks,
                                   const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options = {});

}  // namespace tilegemm
