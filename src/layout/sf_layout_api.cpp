// The GPU scaling-factor layout entry points: argument checks (all before any CUDA call, so bad input
// is reported the same with or without a GPU), then one launch of a sf_layout.cuh kernel.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "core/int_math.hpp"
#include "layout/sf_layout_kernel.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace tilegemm {
namespace {

// Sizes beyond this would overflow the int shape arithmetic of the kernel parameters.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 30;
constexpr std::int64_t kMaxGroups = 65535;  // grid.z

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw RuntimeError(fmt::format("{}: {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status)));
}

// An fp32 scale tensor [rows, kb] or [groups, rows, kb] on the device.
struct SfView {
  int groups = 1, rows = 0, kb = 0;
  std::int64_t group_stride = 0;
};

SfView parse_sf(const TensorView& sf) {
  TILEGEMM_REQUIRE(sf.ndim == 2 || sf.ndim == 3, "sf", "a 2-D [mn, kb] or 3-D [groups, mn, kb] tensor", describe(sf));
  TILEGEMM_REQUIRE(sf.dtype == DType::kFloat32, "sf", "fp32 scales", describe(sf));
  TILEGEMM_REQUIRE(sf.data != nullptr, "sf", "a tensor with data", "a null data pointer");
  for (int d = 0; d < sf.ndim; ++d)
    TILEGEMM_REQUIRE(sf.shape[d] > 0 && sf.shape[d] <= (d == 0 && sf.ndim == 3 ? kMaxGroups : kMaxExtent), "sf",
                     fmt::format("sizes in [1, {}] (groups at most {})", kMaxExtent, kMaxGroups), describe(sf));
  SfView v;
  v.groups = sf.ndim == 3 ? static_cast<int>(sf.size(0)) : 1;
  v.rows = static_cast<int>(sf.size(-2));
  v.kb = static_cast<int>(sf.size(-1));
  v.group_stride = sf.ndim == 3 ? sf.stride(0) : 0;
  return v;
}

// out must be `dtype` [.., mn, cols] with stride(-2) == 1, stride(-1) == aligned, stride(0) == aligned·cols.
void require_mn_major_out(const TensorView& out, const TensorView& sf, DType dtype, int groups, int mn, int cols,
                          const char* what) {
  const std::int64_t aligned = get_tma_aligned_size(mn, 4);
  const bool ok = out.data != nullptr && out.dtype == dtype && out.ndim == sf.ndim && out.size(-2) == mn &&
                  out.size(-1) == cols && (out.ndim == 2 || out.size(0) == groups) && out.stride(-2) == 1 &&
                  out.stride(-1) == aligned && (out.ndim == 2 || out.stride(0) == aligned * cols);
  TILEGEMM_REQUIRE(
      ok, "out",
      fmt::format("{} {}[{}{}, {}] with strides [{}1, {}] ({})", what, dtype_name(dtype),
                  sf.ndim == 3 ? fmt::format("{}, ", groups) : "", mn, cols,
                  sf.ndim == 3 ? fmt::format("{}, ", aligned * cols) : "", aligned, "MN-major, TMA-aligned"),
      out.data ? describe(out) : "a null data pointer");
}

SfLayoutParams make_params(const TensorView& sf, const SfView& v, const TensorView& out, int mn, int out_cols,
                           int row_div, bool pack) {
  SfLayoutParams p{};
  p.in = static_cast<const float*>(sf.data);
  p.out = out.data;
  p.in_group_stride = v.group_stride, p.in_row_stride = sf.stride(-2), p.in_k_stride = sf.stride(-1);
  p.mn = mn;
  p.aligned_mn = get_tma_aligned_size(mn, 4);
  p.kb = v.kb;
  p.out_cols = out_cols;
  p.rows_in = v.rows;
  TILEGEMM_REQUIRE(std::has_single_bit(static_cast<unsigned>(row_div)), "gran_mn", "a power of two",
                   fmt::format("{}", row_div));
  p.row_div_log2 = std::countr_zero(static_cast<unsigned>(row_div));
  p.tile_k_log2 = sf_tile_k_log2(v.kb, pack);
  const int tile_k = 1 << p.tile_k_log2, tile_mn = (1 << kSfTileElemsLog2) / tile_k;
  p.tile_elems_log2 = sf_tile_elems_log2(std::int64_t{v.groups} * ceil_div(mn, tile_mn) * ceil_div(v.kb, tile_k));
  // An MN-major input ([kb][mn] memory, or any view whose rows are adjacent) is read MN first.
  p.mn_fast_loads = v.rows > 1 && sf.stride(-2) == 1 && (v.kb == 1 || sf.stride(-1) != 1);
  p.vector_stores = reinterpret_cast<std::uintptr_t>(out.data) % 16 == 0;
  p.first_bad = nullptr;
  p.psum_layout = nullptr;
  p.psum_groups = 0, p.m_alignment = 1;
  return p;
}

// Packs after the caller has checked sf and out. With `validate`, a device word collects the smallest
// linear index of a non-UE8M0 input; reading it back waits for the stream.
void pack(const TensorView& sf, const SfView& v, const TensorView& out, int mn, int row_div, bool validate,
          void* stream) {
  SfLayoutParams p = make_params(sf, v, out, mn, ceil_div(v.kb, 4), row_div, true);
  if (!validate) return layout::launch_sf_layout(layout::SfKernel::kPackUe8m0, p, v.groups, stream);

  auto s = static_cast<cudaStream_t>(stream);
  unsigned long long* first_bad = nullptr;
  cuda_check(cudaMallocAsync(reinterpret_cast<void**>(&first_bad), sizeof *first_bad, s), "cudaMallocAsync");
  struct Free {
    unsigned long long* ptr;
    cudaStream_t stream;
    ~Free() { cudaFreeAsync(ptr, stream); }
  } free_guard{first_bad, s};
  cuda_check(cudaMemsetAsync(first_bad, 0xFF, sizeof *first_bad, s), "cudaMemsetAsync");
  p.first_bad = first_bad;
  layout::launch_sf_layout(layout::SfKernel::kPackUe8m0, p, v.groups, stream);
  unsigned long long bad = 0;
  cuda_check(cudaMemcpyAsync(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  if (bad == ~0ull) return;
  const auto k = static_cast<std::int64_t>(bad % v.kb), r = static_cast<std::int64_t>(bad / v.kb % v.rows),
             g = static_cast<std::int64_t>(bad / v.kb / v.rows);
  float value = 0;
  const float* where = static_cast<const float*>(sf.data) + g * v.group_stride + r * sf.stride(-2) + k * sf.stride(-1);
  cuda_check(cudaMemcpy(&value, where, sizeof value, cudaMemcpyDeviceToHost), "cudaMemcpy");
  throw InvalidArgument("sf", "UE8M0 scales (powers of two, zero mantissa)",
                        fmt::format("{} at ({}, {}, {})", value, g, r, k));
}

bool same_strides(const TensorView& a, const TensorView& b) {
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return a.ndim == b.ndim && a.dtype == b.dtype;
}

}  // namespace

void get_mn_major_tma_aligned_tensor(const TensorView& sf, const TensorView& out, void* stream) {
  const SfView v = parse_sf(sf);
  require_mn_major_out(out, sf, DType::kFloat32, v.groups, v.rows, v.kb, "fp32 scales");
  if (out.data == sf.data) {
    TILEGEMM_REQUIRE(same_strides(out, sf), "out", "a tensor that does not alias sf (or sf itself)", describe(out));
    return;  // already in the required layout
  }
  const SfLayoutParams p = make_params(sf, v, out, v.rows, v.kb, 1, false);
  layout::launch_sf_layout(layout::SfKernel::kTransposeFp32, p, v.groups, stream);
}

void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out, void* stream,
                                                  bool validate) {
  const SfView v = parse_sf(sf);
  require_mn_major_out(out, sf, DType::kInt32, v.groups, v.rows, ceil_div(v.kb, 4), "packed UE8M0");
  TILEGEMM_REQUIRE(out.data != sf.data, "out", "a tensor that does not alias sf", describe(out));
  pack(sf, v, out, v.rows, 1, validate, stream);
}

void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out,
                                                  const TensorView& psum_layout, int m_alignment, void* stream) {
  const SfView v = parse_sf(sf);
  TILEGEMM_REQUIRE(v.groups == 1, "sf", "one group of scales with psum_layout (a 2-D [mn, kb] tensor)", describe(sf));
  require_mn_major_out(out, sf, DType::kInt32, v.groups, v.rows, ceil_div(v.kb, 4), "packed UE8M0");
  TILEGEMM_REQUIRE(out.data != sf.data, "out", "a tensor that does not alias sf", describe(out));
  TILEGEMM_REQUIRE(psum_layout.data != nullptr && psum_layout.dtype == DType::kInt32 && psum_layout.ndim == 1 &&
                       psum_layout.size(0) > 0 && psum_layout.size(0) <= kMaxExtent &&
                       (psum_layout.size(0) == 1 || psum_layout.stride(0) == 1),
                   "psum_layout", "a contiguous 1-D int32 tensor of group end rows, at least one",
                   psum_layout.data ? describe(psum_layout) : "a null data pointer");
  TILEGEMM_REQUIRE(m_alignment > 0, "m_alignment", "a positive row alignment of the groups",
                   fmt::format("{}", m_alignment));
  SfLayoutParams p = make_params(sf, v, out, v.rows, ceil_div(v.kb, 4), 1, true);
  p.psum_layout = static_cast<const int*>(psum_layout.data);
  p.psum_groups = static_cast<int>(psum_layout.size(0));
  p.m_alignment = m_alignment;
  layout::launch_sf_layout(layout::SfKernel::kPackUe8m0, p, 1, stream);
}

void get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out,
                                                            const TensorView& grouped_layout, int gran_k,
                                                            int k_alignment, bool use_psum_layout, void* stream) {
  TILEGEMM_REQUIRE(gran_k == 32 || gran_k == 128, "gran_k", "32 or 128", fmt::format("{}", gran_k));
  TILEGEMM_REQUIRE(k_alignment % 32 == 0 && (k_alignment > 0 || (!use_psum_layout && k_alignment == 0)), "k_alignment",
                   use_psum_layout ? "a positive multiple of 32" : "a multiple of 32", fmt::format("{}", k_alignment));
  const bool sf_ok = sf.data != nullptr && sf.dtype == DType::kFloat32 && sf.ndim == 2 && sf.size(0) > 0 &&
                     sf.size(0) <= kMaxExtent && sf.size(1) > 0 && sf.size(1) <= kMaxExtent && sf.size(1) % 4 == 0 &&
                     sf.stride(1) == 1 && (sf.size(0) == 1 || sf.stride(0) == sf.size(1)) &&
                     reinterpret_cast<std::uintptr_t>(sf.data) % 16 == 0;
  TILEGEMM_REQUIRE(sf_ok, "sf",
                   "a contiguous, 16-byte aligned fp32 [sf_k, mn] tensor with mn a multiple of 4 (the K-block rows of "
                   "every group one after another)",
                   sf.data ? describe(sf) : "a null data pointer");
  const std::int64_t mn = sf.size(1);
  const std::int64_t groups = grouped_layout.ndim == 1 ? grouped_layout.size(0) : 0;
  TILEGEMM_REQUIRE(grouped_layout.data != nullptr && grouped_layout.dtype == DType::kInt32 &&
                       grouped_layout.ndim == 1 && groups > 0 && groups <= kSfMaxKGroups &&
                       (groups == 1 || grouped_layout.stride(0) == 1),
                   "grouped_layout",
                   fmt::format("a contiguous 1-D int32 tensor of 1 to {} group {}", kSfMaxKGroups,
                               use_psum_layout ? "K ends (prefix sums)" : "K sizes"),
                   grouped_layout.data ? describe(grouped_layout) : "a null data pointer");
  const bool out_ok = out.data != nullptr && out.dtype == DType::kInt32 && out.ndim == 2 && out.size(0) > 0 &&
                      out.size(0) <= kMaxExtent && out.size(1) == mn && out.stride(1) == 1 &&
                      (out.size(0) == 1 || out.stride(0) == mn) &&
                      reinterpret_cast<std::uintptr_t>(out.data) % 16 == 0 && out.data != sf.data;
  TILEGEMM_REQUIRE(out_ok, "out",
                   fmt::format("a contiguous, 16-byte aligned int32 [packed_sf_k, {}] tensor not aliasing sf", mn),
                   out.data ? describe(out) : "a null data pointer");
  SfKGroupedPackParams p{};
  p.in = static_cast<const float*>(sf.data);
  p.out = static_cast<unsigned int*>(out.data);
  p.grouped_layout = static_cast<const int*>(grouped_layout.data);
  p.mn = static_cast<int>(mn);
  p.sf_k = static_cast<int>(sf.size(0));
  p.packed_sf_k = static_cast<int>(out.size(0));
  p.num_groups = static_cast<int>(groups);
  p.gran_k = gran_k;
  p.k_alignment = std::max(k_alignment, 1);  // read with the prefix-sum layout only
  p.use_psum = use_psum_layout;
  layout::launch_sf_k_grouped_pack(p, stream);
}

void transform_sf_into_required_layout(const TensorView& sf, const TensorView& out, int mn, int k,
                                       const SfRecipe& recipe, bool is_sfa, int num_groups, bool disable_ue8m0_cast,
                                       void* stream) {
  TILEGEMM_REQUIRE(mn > 0 && mn <= kMaxExtent, "mn", "a size in [1, 2^30]", fmt::format("{}", mn));
  TILEGEMM_REQUIRE(k > 0 && k <= kMaxExtent, "k", "a size in [1, 2^30]", fmt::format("{}", k));
  const int gran_mn = is_sfa ? recipe.gran_mn_a : recipe.gran_mn_b, gran_k = recipe.gran_k;
  TILEGEMM_REQUIRE(
      (gran_mn == 1 || gran_mn == 128) && (gran_k == 32 || gran_k == 128), "recipe",
      "gran_mn 1 or 128 and gran_k 32 or 128",
      fmt::format("({}, {}, {}) for {}", recipe.gran_mn_a, recipe.gran_mn_b, recipe.gran_k, is_sfa ? "sfa" : "sfb"));
  TILEGEMM_REQUIRE(num_groups >= 0 && num_groups <= kMaxGroups, "num_groups", "0 (no groups) or a group count",
                   fmt::format("{}", num_groups));
  const SfView v = parse_sf(sf);
  const int rows = ceil_div(mn, gran_mn), kb = ceil_div(k, gran_k);
  const bool shape_ok =
      v.rows == rows && v.kb == kb && (num_groups == 0 ? sf.ndim == 2 : sf.ndim == 3 && v.groups == num_groups);
  TILEGEMM_REQUIRE(shape_ok, "sf",
                   fmt::format("fp32 [{}{}, {}] (ceil(mn/{}), ceil(k/{}))",
                               num_groups ? fmt::format("{}, ", num_groups) : "", rows, kb, gran_mn, gran_k),
                   describe(sf));

  if (out.dtype == DType::kInt32) {
    TILEGEMM_REQUIRE(!disable_ue8m0_cast, "disable_ue8m0_cast", "false when out is packed UE8M0 (int32)", "true");
    require_mn_major_out(out, sf, DType::kInt32, v.groups, mn, ceil_div(kb, 4), "packed UE8M0");
    TILEGEMM_REQUIRE(out.data != sf.data, "out", "a tensor that does not alias sf", describe(out));
    return pack(sf, v, out, mn, gran_mn, true, stream);
  }
  TILEGEMM_REQUIRE(out.dtype == DType::kFloat32, "out",
                   "fp32 (MN-major TMA-aligned or per-block scales) or int32 (packed UE8M0)", describe(out));
  TILEGEMM_REQUIRE(gran_k == 128, "recipe", "gran_k 128 for fp32 scales (SM90)", fmt::format("{}", gran_k));
  if (gran_mn == 1) return get_mn_major_tma_aligned_tensor(sf, out, stream);

  // Per-block 128x128 scales stay K-contiguous; out is the dense [.., rows, kb] the kernels read.
  TILEGEMM_REQUIRE(sf.stride(-1) == 1 && sf.stride(-2) >= kb, "sf",
                   "K-contiguous per-block scales (stride(-1) == 1, stride(-2) >= kb)", describe(sf));
  const bool out_ok = out.data != nullptr && out.ndim == sf.ndim && out.size(-2) == rows && out.size(-1) == kb &&
                      (out.ndim == 2 || out.size(0) == v.groups) && out.stride(-1) == 1 && out.stride(-2) == kb &&
                      (out.ndim == 2 || out.stride(0) == std::int64_t{rows} * kb);
  TILEGEMM_REQUIRE(
      out_ok, "out",
      fmt::format("dense K-contiguous fp32 [{}{}, {}]", num_groups ? fmt::format("{}, ", num_groups) : "", rows, kb),
      out.data ? describe(out) : "a null data pointer");
  if (out.data == sf.data) {
    TILEGEMM_REQUIRE(same_strides(out, sf), "out", "a tensor that does not alias sf (or sf itself)", describe(out));
    return;
  }
  auto s = static_cast<cudaStream_t>(stream);
  for (int g = 0; g < v.groups; ++g) {
    const auto* src = static_cast<const float*>(sf.data) + g * v.group_stride;
    auto* dst = static_cast<float*>(out.data) + static_cast<std::int64_t>(g) * rows * kb;
    cuda_check(cudaMemcpy2DAsync(dst, kb * sizeof(float), src, sf.stride(-2) * sizeof(float), kb * sizeof(float), rows,
                                 cudaMemcpyDeviceToDevice, s),
               "cudaMemcpy2DAsync");
  }
}

}  // namespace tilegemm
