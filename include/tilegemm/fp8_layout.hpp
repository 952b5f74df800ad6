#pragma once
// Scaling-factor (SF) layouts for the FP8 GEMMs (see docs/fp8_layouts.md for pictures).
//
// Every function takes row-major fp32 scales [groups, mn, kb] as DeepGEMM's quantisers produce them
// (kb = ceil(K / gran_k) scale blocks along K) and produces one of:
//   * MN-major TMA-aligned fp32 (SM90, fp8_gemm.hpp): to_mn_major_tma_aligned in fp8_quant.hpp.
//   * SM100 packed UE8M0: int32 [groups, mn, ceil(kb/4)] with strides (ceil(kb/4)·A, 1, A), A =
//     get_tma_aligned_size(mn, 4); byte b (little-endian) of word (g, m, p) is the UE8M0 exponent of
//     sf[g, m, 4p + b]; missing K blocks are 0 bytes (the host packer also zeroes the padding rows
//     [mn, A); the GPU one leaves them alone).
//     Same layout as DeepGEMM's get_mn_major_tma_aligned_packed_ue8m0_tensor.
//   * Ascend packed UE8M0: int16 [groups, mn, ceil(kb/2)] MN-major without padding, strides
//     (ceil(kb/2)·mn, 1, mn); the low byte of element (g, m, p) is the exponent of sf[g, m, 2p], the
//     high byte that of sf[g, m, 2p + 1] (0 when kb is odd) — a uint8 exponent array read as int16 on
//     a little-endian machine, as DeepGEMM-Ascend's tests build it.
// The GPU versions (device tensors, a stream) are at the end of this file.
#include <cstdint>
#include <vector>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// UE8M0 exponent byte of a scale: the fp32 biased exponent. Only meaningful for is_ue8m0(scale).
std::uint8_t float_to_ue8m0(float scale);
// 2^(e - 127) exactly (e = 0 gives the subnormal 2^-127); 0xFF is NaN as in the OCP MX spec.
float ue8m0_to_float(std::uint8_t e);

// Throws InvalidArgument("sf", "UE8M0 scales (powers of two, zero mantissa)", "<value> at (g, m, k)") for
// the first scale in [groups, mn, kb] that is not a positive normal power of two.
void validate_ue8m0(const float* sf, int groups, int mn, int kb);

// Word count of the SM100 packed layout: groups * ceil(kb/4) * get_tma_aligned_size(mn, 4).
std::size_t sm100_packed_ue8m0_size(int groups, int mn, int kb);
// Validates, then packs (layout above). Throws InvalidArgument naming "sf", "groups", "mn" or "kb".
std::vector<std::int32_t> pack_ue8m0_sm100(const float* sf, int groups, int mn, int kb);
// Back to row-major fp32 [groups, mn, kb]; padding bytes and rows are ignored. `packed` must hold
// sm100_packed_ue8m0_size(groups, mn, kb) words.
std::vector<float> unpack_ue8m0_sm100(const std::vector<std::int32_t>& packed, int groups, int mn, int kb);

// Element count of the Ascend layout: groups * ceil(kb/2) * mn.
std::size_t ascend_packed_ue8m0_size(int groups, int mn, int kb);
std::vector<std::int16_t> pack_ue8m0_ascend(const float* sf, int groups, int mn, int kb);
std::vector<float> unpack_ue8m0_ascend(const std::vector<std::int16_t>& packed, int groups, int mn, int kb);

// The K-grouped SM100 layout (get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor below) on the host. sf
// is row-major fp32 [sf_k, mn]; grouped_layout the group K sizes (or, use_psum_layout, their prefix-sum
// ends). Returns the packed rows the groups own, [rows, mn] row-major, rows = Σ ceil(ceil(k_g / gran_k) / 4);
// K-block rows a group would read past sf_k count as 0.0f. Exponent bits are taken as they are, like the GPU
// kernel.
std::vector<std::int32_t> pack_ue8m0_k_grouped(const float* sf, int sf_k, int mn,
                                               const std::vector<int>& grouped_layout, int gran_k, int k_alignment,
                                               bool use_psum_layout);

// --- GPU (device tensors, asynchronous on `stream`, a cudaStream_t; JIT kernels in sf_layout.cuh) --------

// sf fp32 [mn, kb] or [G, mn, kb] with any strides → out fp32 of the same shape, MN-major and TMA-aligned:
// stride(-2) == 1, stride(-1) == get_tma_aligned_size(mn, 4) and (3-D) stride(0) == stride(-1) · kb. Only
// the view's elements are written (the padding rows [mn, aligned) are not). When out is sf and sf already has
// that layout, nothing runs; any other aliasing of out and sf is an error.
void get_mn_major_tma_aligned_tensor(const TensorView& sf, const TensorView& out, void* stream);

// sf fp32 [mn, kb] or [G, mn, kb] → out int32 [mn, ceil(kb/4)] or [G, mn, ceil(kb/4)], SM100 packed UE8M0
// (layout above; strides (ceil(kb/4)·A, 1, A)). With `validate` a non-UE8M0 scale throws
// InvalidArgument("sf", ...) naming the first one; that check waits for the stream. Without it the
// exponent bits are taken as they are (DeepGEMM's behaviour), which is also what the kernel writes.
void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out, void* stream,
                                                  bool validate = true);

// The same with DeepGEMM's psum_layout (int32 [G] end rows of an M-grouped A whose groups start at the
// previous end rounded up to m_alignment): rows in the gaps between groups, and past the last one, are not
// read and pack to 0 words. sf must hold one group ([mn, kb]). No UE8M0 validation (DeepGEMM packs the
// exponent bits).
void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out,
                                                  const TensorView& psum_layout, int m_alignment, void* stream);

// DeepGEMM's K-grouped SM100 packing. sf fp32 [sf_k, mn], contiguous (MN contiguous, mn % 4 == 0): the
// K-block rows of every group one after another, ceil(k_g / gran_k) of them for group g. grouped_layout int32
// [G] (1 <= G <= 128) on the device: the group K sizes k_g, or with use_psum_layout their prefix-sum ends
// (group g then spans grouped_layout[g] - align(grouped_layout[g - 1], k_alignment) K elements). out int32
// [packed_sf_k, mn], contiguous: group g's rows take ceil(ceil(k_g / gran_k) / 4) packed rows, one after
// another, each word packing 4 consecutive K-block rows of one column (byte b = row 4p + b, the group's last
// word zero-padded). Packed rows no group owns (out sized for an upper bound) are not written. gran_k is 32
// or 128, k_alignment a multiple of 32 (positive with use_psum_layout). Both pointers must be 16-byte
// aligned.
void get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out,
                                                            const TensorView& grouped_layout, int gran_k,
                                                            int k_alignment, bool use_psum_layout, void* stream);

// DeepGEMM's recipe: (gran_mn of A, gran_mn of B, gran_k); is_sfa picks which gran_mn applies.
struct SfRecipe {
  int gran_mn_a = 1, gran_mn_b = 128, gran_k = 128;
};

// DeepGEMM's transform_sf_into_required_layout with a caller-allocated `out`. sf is fp32
// [ceil(mn/gran_mn), ceil(k/gran_k)] (or [num_groups, ...] when num_groups > 0). out's dtype says what is
// wanted:
//   fp32, gran (1, 128)   → MN-major TMA-aligned fp32 (get_mn_major_tma_aligned_tensor), the SM90 SFA layout;
//   fp32, gran (128, 128) → the SM90 SFB layout, K-contiguous [.., ceil(mn/128), kb]: sf is copied into out
//                           (nothing runs when out is sf);
//   int32                 → packed UE8M0 (rows broadcast from per-block scales when gran_mn is 128), gran_k
//                           32 or 128; needs disable_ue8m0_cast == false; validates the scales.
// Every mismatch throws InvalidArgument naming "sf", "out", "mn", "k", "recipe", "num_groups" or
// "disable_ue8m0_cast".
void transform_sf_into_required_layout(const TensorView& sf, const TensorView& out, int mn, int k,
                                       const SfRecipe& recipe, bool is_sfa, int num_groups, bool disable_ue8m0_cast,
                                       void* stream);

}  // namespace tilegemm
