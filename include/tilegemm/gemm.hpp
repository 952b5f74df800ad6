#pragma once
// The operations users call. Each validates its arguments (InvalidArgument naming the argument), builds a
// GemmDesc, picks a GemmConfig, gets the JIT kernel and launches it on `options.stream`.
// All compute D = C + A·Bᵀ with A viewed as [M,K] and B viewed as [N,K]; the strides of each view say
// which dimension is contiguous (K-major when the K stride is 1, MN-major when the M/N stride is 1), so the
// nt/nn/tn/tt layouts are views of one entry point.
#include <cstdint>
#include <vector>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

struct GemmOptions {
  void* stream = nullptr;  // cudaStream_t
  int num_sms = 0;         // 0 = every SM of the device
};

// Dense or batched BF16 GEMM. a: bf16 [M,K] or [B,M,K]; b: bf16 [N,K] or [B,N,K]; d: bf16/fp32 [M,N] or
// [B,M,N], contiguous in N; c: optional, same shape and dtype as d (may be d itself, then D += A·Bᵀ).
void bf16_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
               const GemmOptions& options = {});

// M-grouped contiguous: a [M_total,K], b [G,N,K], d [M_total,N]. `grouped_layout` is int32 on the device:
// [M_total] group index per row (-1 = padding rows, skipped) or, with use_psum_layout, [G] end rows: group g
// covers rows [align(end[g-1], 128), end[g]) (DeepGEMM's prefix-sum layout). Padding rows of D are unspecified.
void m_grouped_bf16_gemm_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                    const TensorView& grouped_layout, bool use_psum_layout,
                                    const GemmOptions& options = {});

// M-grouped masked: a [G,M_max,K], b [G,N,K], d [G,M_max,N]; masked_m int32 [G] on the device holds the
// valid rows per group. expected_m is only a heuristic hint; no host synchronisation happens.
void m_grouped_bf16_gemm_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                const TensorView& masked_m, int expected_m, const GemmOptions& options = {});

// Row alignment of every group in the M-grouped contiguous layout (128, DeepGEMM's default). Block_m of
// the grouped kernels never exceeds it, so each tile belongs to exactly one group.
int get_mk_alignment_for_contiguous_layout();

// K-grouped contiguous (weight gradients): a [ΣK, M] and b [ΣK, N] hold the groups one after another along
// K; d [G, M, N] fp32 gets d[g] = c[g] + a[kg]ᵀ · b[kg] for each group's rows kg (DeepGEMM's
// k_grouped_bf16_gemm_tn_contiguous). `ks` are the group sizes on the host (each a multiple of 64) and
// `ks_tensor` the same values as int32 on the device. c may be d (accumulate in place) or null (d = a·b).
void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<int>& ks, const TensorView& ks_tensor, const TensorView* c,
                                       const GemmOptions& options = {});

// Deterministic mode (like torch.use_deterministic_algorithms): split-K / stream-K GEMMs sum the parts of a
// cut tile in a fixed order, so repeated calls give bit-identical results; otherwise the parts meet through
// fp32 atomics in L2 (faster, order-dependent rounding). Data-parallel GEMMs are deterministic either way.
// The default comes from DG_DETERMINISTIC (0); set_deterministic overrides it for the whole process.
void set_deterministic(bool enabled);
bool is_deterministic();

// Programmatic dependent launch (DeepGEMM's set_pdl): GEMM kernels are launched with the programmatic stream
// serialisation attribute. A kernel then starts while the previous kernel in the stream is still running: its
// prologue (barrier init, tensor-map prefetch) overlaps that kernel's tail, and it waits (griddepcontrol.wait)
// for that kernel to finish before it reads or writes any tensor. A following PDL launch starts as this kernel's
// CTAs exit. Results are the same either way; the gain is launch and prologue time between back-to-back kernels.
// The default comes from DG_ENABLE_PDL (0, as DeepGEMM's); set_pdl overrides it for the whole process.
void set_pdl(bool enabled);
bool is_pdl_enabled();

// The plan a call would use, without a GPU: desc → config (and the kernel name it compiles to).
struct GemmPlan {
  GemmDesc desc;
  GemmConfig config;
  std::string kernel_name;
};

}  // namespace tilegemm
