// The FP8 block-scaled operations users call: validate → GemmDesc → GemmConfig → JIT kernel → launch.
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/gemm.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_fp8_gemm.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

using api::require_contiguous_rows;
using api::require_int_size;
using api::require_tensor;
using api::shape_str;

namespace {

constexpr int kScaleBlock = 128;  // K (and, per block, N) extent of one scaling factor

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string strides_str(const TensorView& v) {
  std::string s = "strides [";
  for (int i = 0; i < v.ndim; ++i) s += fmt::format("{}{}", i ? ", " : "", v.strides[i]);
  return s + "]";
}

// An fp8 operand [.., rows, K]: e4m3, K contiguous (SM90 wgmma reads fp8 only K-major).
void check_fp8_operand(const TensorView& v, const char* name, int ndim) {
  require_tensor(v, name, ndim, DType::kFloat8E4M3);
  TILEGEMM_REQUIRE(v.stride(-1) == 1, name, "a K-major e4m3 tensor (stride 1 along K; SM90 FP8 needs K-major operands)",
                   strides_str(v));
}

// Non-negative strides and a 4-byte aligned pointer: what the scale warp's element-wise copies need.
void check_scale_strides(const TensorView& sf, const char* name) {
  for (int i = 0; i < sf.ndim; ++i)
    TILEGEMM_REQUIRE(sf.strides[i] >= 0, name, "non-negative strides", strides_str(sf));
  TILEGEMM_REQUIRE(reinterpret_cast<std::uintptr_t>(sf.data) % 4 == 0, name, "a 4-byte aligned pointer",
                   fmt::format("{}", sf.data));
}

// Per-token (1x128) scales of an operand with `rows` rows: fp32 [.., rows, ceil(K/128)] in any strides (the
// kernel's scale warp copies them element by element): row-major as per_token_cast_to_fp8 returns them, or MN-major
// as get_mn_major_tma_aligned_tensor does.
void check_per_token_sf(const TensorView& sf, const char* name, int ndim, std::int64_t batch, std::int64_t rows,
                        std::int64_t k) {
  require_tensor(sf, name, ndim, DType::kFloat32);
  const std::int64_t kb = ceil_div(k, kScaleBlock);
  const bool shape_ok = sf.size(-2) == rows && sf.size(-1) == kb && (ndim == 2 || sf.size(0) == batch);
  TILEGEMM_REQUIRE(shape_ok, name,
                   ndim == 2 ? fmt::format("fp32 [{}, {}] per-token 1x128 scales ([rows, ceil(K/128)])", rows, kb)
                             : fmt::format("fp32 [{}, {}, {}] per-token 1x128 scales", batch, rows, kb),
                   shape_str(sf));
  check_scale_strides(sf, name);
}

// Per-block (128x128) scales of B: fp32 [.., ceil(N/128), ceil(K/128)] in any strides.
void check_per_block_sf(const TensorView& sf, const char* name, int ndim, std::int64_t batch, std::int64_t n,
                        std::int64_t k) {
  require_tensor(sf, name, ndim, DType::kFloat32);
  const std::int64_t nb = ceil_div(n, kScaleBlock), kb = ceil_div(k, kScaleBlock);
  const bool shape_ok = sf.size(-2) == nb && sf.size(-1) == kb && (ndim == 2 || sf.size(0) == batch);
  TILEGEMM_REQUIRE(shape_ok, name,
                   ndim == 2 ? fmt::format("fp32 [{}, {}] per-block 128x128 scales ([ceil(N/128), ceil(K/128)])", nb, kb)
                             : fmt::format("fp32 [{}, {}, {}] per-block 128x128 scales", batch, nb, kb),
                   shape_str(sf));
  check_scale_strides(sf, name);
}

GemmDesc fp8_desc(GemmType type, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t groups, DType d_dtype,
                  bool with_c) {
  GemmDesc desc;
  desc.type = type;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.num_groups = static_cast<int>(groups);
  desc.a_dtype = desc.b_dtype = DType::kFloat8E4M3;
  desc.d_dtype = d_dtype;
  desc.major_a = desc.major_b = Major::kKMajor;
  desc.with_c = with_c;
  desc.deterministic = is_deterministic();  // split-K / stream-K reduction mode, as for BF16
  return desc;
}

void run(const GemmDesc& desc, const kernels::Sm90Fp8Operands& ops, const GemmOptions& options) {
  kernels::launch_sm90_fp8_gemm(desc, select_config_for_current_device(desc, options), ops, options.stream);
}

// Dense or batched, both recipes.
void dense_fp8_gemm(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                    const TensorView& d, const TensorView* c, bool per_token_b, const GemmOptions& options) {
  const int ndim = a.ndim;
  TILEGEMM_REQUIRE(ndim == 2 || ndim == 3, "a", "a 2-D [M, K] or 3-D [B, M, K] tensor",
                   fmt::format("{}-D {}", a.ndim, shape_str(a)));
  check_fp8_operand(a, "a", ndim);
  check_fp8_operand(b, "b", ndim);
  const DType d_dtype = per_token_b ? DType::kFloat32 : DType::kBFloat16;
  require_tensor(d, "d", ndim, d_dtype);
  const std::int64_t batch = ndim == 3 ? a.size(0) : 1, m = a.size(-2), k = a.size(-1), n = b.size(-2);
  TILEGEMM_REQUIRE(b.size(-1) == k && (ndim == 2 || b.size(0) == batch), "b",
                   fmt::format("[{}N, K={}] to match a {}", ndim == 3 ? fmt::format("B={}, ", batch) : "", k, shape_str(a)),
                   shape_str(b));
  TILEGEMM_REQUIRE(d.size(-2) == m && d.size(-1) == n && (ndim == 2 || d.size(0) == batch), "d",
                   fmt::format("[M={}, N={}]", m, n), shape_str(d));
  require_contiguous_rows(d, "d");
  check_per_token_sf(sfa, "sfa", ndim, batch, m, k);
  if (per_token_b)
    check_per_token_sf(sfb, "sfb", ndim, batch, n, k);
  else
    check_per_block_sf(sfb, "sfb", ndim, batch, n, k);
  if (c != nullptr) {
    require_tensor(*c, "c", ndim, DType::kFloat32);
    TILEGEMM_REQUIRE(c->size(-2) == m && c->size(-1) == n && (ndim == 2 || c->size(0) == batch), "c",
                     fmt::format("the shape of d {}", shape_str(d)), shape_str(*c));
    require_contiguous_rows(*c, "c");
  }
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{k, "k"}, std::pair{batch, "batch"}})
    require_int_size(v, name);
  if (m == 0 || n == 0 || batch == 0) return;

  const GemmDesc desc = fp8_desc(ndim == 3 ? GemmType::kBatched : GemmType::kNormal, m, n, k, batch, d_dtype,
                                 c != nullptr);
  // Validate everything before touching d: a rejected call leaves d as it was.
  if (k > 0) validate_desc(desc);
  if (c != nullptr && c->data != d.data) api::copy_or_zero(d, c, options.stream);
  if (k == 0) {
    if (c == nullptr) api::copy_or_zero(d, nullptr, options.stream);
    return;
  }
  using kernels::as_3d;
  run(desc, {as_3d(a), as_3d(sfa), as_3d(b), as_3d(sfb), as_3d(d), nullptr}, options);
}

}  // namespace

void fp8_gemm_1d2d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const GemmOptions& options) {
  dense_fp8_gemm(a, sfa, b, sfb, d, nullptr, false, options);
}

void fp8_gemm_1d1d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const TensorView* c, const GemmOptions& options) {
  dense_fp8_gemm(a, sfa, b, sfb, d, c, true, options);
}

void m_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                   bool use_psum_layout, const GemmOptions& options) {
  check_fp8_operand(a, "a", 2);
  check_fp8_operand(b, "b", 3);
  require_tensor(d, "d", 2, DType::kBFloat16);
  const std::int64_t m = a.size(0), k = a.size(1), groups = b.size(0), n = b.size(1);
  TILEGEMM_REQUIRE(b.size(2) == k, "b", fmt::format("[G, N, K={}] to match a {}", k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  require_contiguous_rows(d, "d");
  check_per_token_sf(sfa, "sfa", 2, 1, m, k);
  check_per_block_sf(sfb, "sfb", 3, groups, n, k);
  api::require_grouped_layout(grouped_layout, use_psum_layout, m, groups, get_mk_alignment_for_contiguous_layout());
  if (m == 0 || n == 0) return;
  if (k == 0) return api::copy_or_zero(d, nullptr, options.stream);

  GemmDesc desc = fp8_desc(GemmType::kMGroupedContiguous, m, n, k, groups, DType::kBFloat16, false);
  desc.use_psum_layout = use_psum_layout;
  validate_desc(desc);
  using kernels::as_3d;
  run(desc, {as_3d(a), as_3d(sfa), b, sfb, as_3d(d), static_cast<const int*>(grouped_layout.data)}, options);
}

void m_grouped_fp8_gemm_masked(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, const TensorView& masked_m, int expected_m,
                               const GemmOptions& options) {
  check_fp8_operand(a, "a", 3);
  check_fp8_operand(b, "b", 3);
  require_tensor(d, "d", 3, DType::kBFloat16);
  const auto [groups, m_max, n, k] = api::require_masked_shapes(a, b, d);
  require_contiguous_rows(d, "d");
  check_per_token_sf(sfa, "sfa", 3, groups, m_max, k);
  check_per_block_sf(sfb, "sfb", 3, groups, n, k);
  api::require_masked_m(masked_m, groups, expected_m);
  if (groups == 0 || m_max == 0 || n == 0) return;
  if (k == 0) return api::copy_or_zero(d, nullptr, options.stream);

  GemmDesc desc = fp8_desc(GemmType::kMGroupedMasked, m_max, n, k, groups, DType::kBFloat16, false);
  desc.expected_m = std::min<int>(expected_m, static_cast<int>(m_max));
  validate_desc(desc);
  run(desc, {a, sfa, b, sfb, d, static_cast<const int*>(masked_m.data)}, options);
}

void k_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const std::vector<int>& ks,
                                   const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options) {
  check_fp8_operand(a, "a", 2);
  check_fp8_operand(b, "b", 2);
  require_tensor(d, "d", 3, DType::kFloat32);
  const std::int64_t m = a.size(0), sum_k = a.size(1), n = b.size(0), groups = d.size(0);
  TILEGEMM_REQUIRE(b.size(1) == sum_k, "b", fmt::format("[N, ΣK={}] to match a {}", sum_k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(1) == m && d.size(2) == n, "d", fmt::format("[G, M={}, N={}]", m, n), shape_str(d));
  require_contiguous_rows(d, "d");
  api::require_group_ks(ks, ks_tensor, groups, kScaleBlock, sum_k);  // each group owns whole scale blocks
  check_per_token_sf(sfa, "sfa", 2, 1, m, sum_k);
  check_per_token_sf(sfb, "sfb", 2, 1, n, sum_k);
  if (c != nullptr) {
    require_tensor(*c, "c", 3, DType::kFloat32);
    TILEGEMM_REQUIRE(c->size(0) == groups && c->size(1) == m && c->size(2) == n, "c",
                     fmt::format("the shape of d {}", shape_str(d)), shape_str(*c));
    require_contiguous_rows(*c, "c");
  }
  if (groups == 0 || m == 0 || n == 0) return;

  // The heuristics see the mean group K (each group is one [M, N, K_g] problem).
  const std::int64_t mean_k = std::max<std::int64_t>(kScaleBlock, ceil_div(sum_k / groups, kScaleBlock) * kScaleBlock);
  const GemmDesc desc = fp8_desc(GemmType::kKGroupedContiguous, m, n, mean_k, groups, DType::kFloat32, c != nullptr);
  validate_desc(desc);
  if (c != nullptr && c->data != d.data) api::copy_or_zero(d, c, options.stream);
  if (c == nullptr) api::zero_empty_groups(d, ks, options.stream);
  using kernels::as_3d;
  run(desc, {as_3d(a), as_3d(sfa), as_3d(b), as_3d(sfb), d, static_cast<const int*>(ks_tensor.data)}, options);
}

}  // namespace tilegemm
