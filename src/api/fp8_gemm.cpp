// The FP8 block-scaled operations users call: validate → GemmDesc (a LaunchPlan) → GemmConfig → JIT kernel →
// launch.
#include "tilegemm/fp8_gemm.hpp"
#include "core/int_math.hpp"
#include "tilegemm/gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/launch_plan.hpp"
#include "api/validate.hpp"
#include "kernels/scale_layout.hpp"
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
  for (int i = 0; i < sf.ndim; ++i) TILEGEMM_REQUIRE(sf.strides[i] >= 0, name, "non-negative strides", strides_str(sf));
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
                   ndim == 2
                       ? fmt::format("fp32 [{}, {}] per-block 128x128 scales ([ceil(N/128), ceil(K/128)])", nb, kb)
                       : fmt::format("fp32 [{}, {}, {}] per-block 128x128 scales", batch, nb, kb),
                   shape_str(sf));
  check_scale_strides(sf, name);
}

// sfb_per_token: 1D1D B's per-token scales (null for 1D2D's per-block ones, which the kernel always copies itself).
GemmDesc fp8_desc(GemmType type, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t groups, DType d_dtype,
                  bool with_c, const TensorView& sfa, const TensorView* sfb_per_token) {
  GemmDesc desc;
  desc.type = type;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.num_groups = static_cast<int>(groups);
  desc.a_dtype = desc.b_dtype = DType::kFloat8E4M3;
  desc.d_dtype = d_dtype;
  desc.major_a = desc.major_b = Major::kKMajor;
  desc.with_c = with_c;
  desc.deterministic = is_deterministic();  // split-K / stream-K reduction mode, as for BF16
  desc.sfa_layout = kernels::preferred_sfa_layout(kernels::per_token_scale_layout(kernels::as_3d(sfa)), type, m, k);
  desc.sfb_strided = sfb_per_token != nullptr &&
                     kernels::per_token_scale_layout(kernels::as_3d(*sfb_per_token)) != ScaleLayout::kMnMajor;
  return desc;
}

using api::LaunchPlan;
using api::Plan;
using kernels::as_3d;
using Work = LaunchPlan::Work;

void launch_fp8(const LaunchPlan& plan, const kernels::Sm90Fp8Operands& ops, void* stream) {
  kernels::launch_sm90_fp8_gemm_reusing(plan.desc, plan.config(), ops, stream, plan.fp8_reuse);
}

// The runners: what each entry point does once its checks passed, on the views of one run (a, sfa, b, sfb, d,
// then c or the group tensor).
void run_fp8_dense(const LaunchPlan& plan, const TensorView* v, void* stream) {
  const TensorView& d = v[4];
  const TensorView* c = plan.present(5) ? &v[5] : nullptr;
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kKernel) plan.config();  // select before touching d (no GPU: nothing written)
  if (c != nullptr && c->data != d.data) api::copy_or_zero(d, c, stream);
  if (plan.work == Work::kFill) {
    if (c == nullptr) api::copy_or_zero(d, nullptr, stream);
    return;
  }
  launch_fp8(plan, {as_3d(v[0]), as_3d(v[1]), as_3d(v[2]), as_3d(v[3]), as_3d(d), nullptr}, stream);
}

void run_fp8_m_grouped_contiguous(const LaunchPlan& plan, const TensorView* v, void* stream) {
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) return api::copy_or_zero(v[4], nullptr, stream);
  launch_fp8(plan, {as_3d(v[0]), as_3d(v[1]), v[2], v[3], as_3d(v[4]), static_cast<const int*>(v[5].data)}, stream);
}

void run_fp8_m_grouped_masked(const LaunchPlan& plan, const TensorView* v, void* stream) {
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) return api::copy_or_zero(v[4], nullptr, stream);
  launch_fp8(plan, {v[0], v[1], v[2], v[3], v[4], static_cast<const int*>(v[5].data)}, stream);
}

void run_fp8_k_grouped(const LaunchPlan& plan, const TensorView* v, void* stream) {
  const TensorView& d = v[4];
  const TensorView* c = plan.present(6) ? &v[6] : nullptr;
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) {  // every group empty: d = c or 0
    if (c == nullptr || c->data != d.data) api::copy_or_zero(d, c, stream);
    return;
  }
  plan.config();
  if (c != nullptr && c->data != d.data) api::copy_or_zero(d, c, stream);
  if (c == nullptr) api::zero_empty_groups(d, plan.ks, stream);
  // DeepGEMM's 1-D layout goes to the per-group maps as it is; [rows, ΣK] operands as 3-D views.
  const bool blocks = plan.desc.k_group_maps > 0;
  const kernels::Sm90Fp8Operands ops{
      blocks ? v[0] : as_3d(v[0]),       as_3d(v[1]), blocks ? v[2] : as_3d(v[2]), as_3d(v[3]), d,
      static_cast<const int*>(v[5].data)};
  if (blocks)
    kernels::launch_sm90_fp8_k_grouped_blocks(plan.desc, plan.config(), ops, plan.ks, stream, plan.fp8_reuse);
  else
    launch_fp8(plan, ops, stream);
}

}  // namespace

namespace api {

namespace {

// Dense or batched, both recipes; with head splits (2-D 1D2D only) d is [M, N'], N' = N + N / (left + right) · mid.
Plan plan_fp8_dense(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                    const TensorView& d, const TensorView* c, bool per_token_b, const HeadSplits& heads, int num_sms) {
  const int ndim = a.ndim;
  if (heads.any())
    TILEGEMM_REQUIRE(ndim == 2, "a", "a 2-D [M, K] tensor (skip-head-mid GEMMs are not batched)",
                     fmt::format("{}-D {}", a.ndim, shape_str(a)));
  TILEGEMM_REQUIRE(ndim == 2 || ndim == 3, "a", "a 2-D [M, K] or 3-D [B, M, K] tensor",
                   fmt::format("{}-D {}", a.ndim, shape_str(a)));
  check_fp8_operand(a, "a", ndim);
  check_fp8_operand(b, "b", ndim);
  const DType d_dtype = per_token_b ? DType::kFloat32 : DType::kBFloat16;
  require_tensor(d, "d", ndim, d_dtype);
  const std::int64_t batch = ndim == 3 ? a.size(0) : 1, m = a.size(-2), k = a.size(-1), n = b.size(-2);
  TILEGEMM_REQUIRE(
      b.size(-1) == k && (ndim == 2 || b.size(0) == batch), "b",
      fmt::format("[{}N, K={}] to match a {}", ndim == 3 ? fmt::format("B={}, ", batch) : "", k, shape_str(a)),
      shape_str(b));
  if (heads.any()) {
    validate_head_splits(heads, n);
    const std::int64_t d_cols = n + n / (std::int64_t{heads.left} + heads.right) * heads.mid;
    TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == d_cols, "d",
                     fmt::format("[M={}, N + N / (left + right) * mid = {}] for head_splits ({}, {}, {})", m, d_cols,
                                 heads.left, heads.mid, heads.right),
                     shape_str(d));
    // DeepGEMM's contract; a K = 0 result zero-filled into d would overwrite the mid columns.
    TILEGEMM_REQUIRE(k > 0, "a", "K > 0 for a skip-head-mid GEMM", shape_str(a));
  } else {
    TILEGEMM_REQUIRE(d.size(-2) == m && d.size(-1) == n && (ndim == 2 || d.size(0) == batch), "d",
                     fmt::format("[M={}, N={}]", m, n), shape_str(d));
  }
  require_contiguous_rows(d, "d");
  check_per_token_sf(sfa, "sfa", ndim, batch, m, k);
  if (per_token_b)
    check_per_token_sf(sfb, "sfb", ndim, batch, n, k);
  else
    check_per_block_sf(sfb, "sfb", ndim, batch, n, k);
  TILEGEMM_REQUIRE(per_token_b || c == nullptr, "c", "none with per-block B scales (the 1D2D recipe has no C)",
                   "a tensor");
  if (c != nullptr) {
    api::require_c_in_place_is_d(*c, d);
    require_tensor(*c, "c", ndim, DType::kFloat32);
    TILEGEMM_REQUIRE(c->size(-2) == m && c->size(-1) == n && (ndim == 2 || c->size(0) == batch), "c",
                     fmt::format("the shape of d {}", shape_str(d)), shape_str(*c));
    require_contiguous_rows(*c, "c");
  }
  for (auto [v, name] :
       {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{k, "k"}, std::pair{batch, "batch"}, std::pair{d.size(-1), "d"}})
    require_int_size(v, name);
  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &sfa, &b, &sfb, &d, c}, num_sms,
                                           &run_fp8_dense);
  if (m == 0 || n == 0 || batch == 0) {
    plan->work = Work::kNone;
    return plan;
  }
  plan->desc = fp8_desc(ndim == 3 ? GemmType::kBatched : GemmType::kNormal, m, n, k, batch, d_dtype, c != nullptr, sfa,
                        per_token_b ? &sfb : nullptr);
  plan->desc.deterministic = plan->settings().deterministic;
  plan->desc.head_splits = heads;
  // Validate everything before touching d: a rejected call leaves d as it was.
  if (k > 0) {
    validate_desc(plan->desc);
    api::require_tma_operands(a, b, d);
  } else {
    plan->work = Work::kFill;
  }
  return plan;
}

}  // namespace

Plan plan_fp8_gemm(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const TensorView* c, bool per_token_b, int num_sms) {
  return plan_fp8_dense(a, sfa, b, sfb, d, c, per_token_b, HeadSplits{}, num_sms);
}

Plan plan_fp8_gemm_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                 const TensorView& d, const HeadSplits& head_splits, int num_sms) {
  // All-zero splits would be a plain GEMM: name them here rather than serve one under this name.
  if (!head_splits.any()) validate_head_splits(head_splits, 0);
  return plan_fp8_dense(a, sfa, b, sfb, d, nullptr, false, head_splits, num_sms);
}

Plan plan_m_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                        const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                        bool use_psum_layout, int num_sms, int expected_m) {
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
  auto plan =
      std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &sfa, &b, &sfb, &d, &grouped_layout},
                                   num_sms, &run_fp8_m_grouped_contiguous);
  if (plan->without_kernel(m == 0 || n == 0, k == 0)) return plan;
  plan->desc = fp8_desc(GemmType::kMGroupedContiguous, m, n, k, groups, DType::kBFloat16, false, sfa, nullptr);
  plan->desc.use_psum_layout = use_psum_layout;
  TILEGEMM_REQUIRE(expected_m >= 0 && (use_psum_layout || expected_m == 0), "expected_m",
                   "0, or with use_psum_layout a non-negative hint of rows per group", std::to_string(expected_m));
  plan->desc.expected_m = static_cast<int>(std::min<std::int64_t>(expected_m, m));
  plan->desc.deterministic = plan->settings().deterministic;
  validate_desc(plan->desc);
  api::require_tma_operands(a, b, d);
  return plan;
}

Plan plan_m_grouped_fp8_gemm_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                    const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                    int expected_m, int num_sms) {
  check_fp8_operand(a, "a", 3);
  check_fp8_operand(b, "b", 3);
  require_tensor(d, "d", 3, DType::kBFloat16);
  const auto [groups, m_max, n, k] = api::require_masked_shapes(a, b, d);
  require_contiguous_rows(d, "d");
  check_per_token_sf(sfa, "sfa", 3, groups, m_max, k);
  check_per_block_sf(sfb, "sfb", 3, groups, n, k);
  api::require_masked_m(masked_m, groups, expected_m);
  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &sfa, &b, &sfb, &d, &masked_m},
                                           num_sms, &run_fp8_m_grouped_masked);
  if (plan->without_kernel(groups == 0 || m_max == 0 || n == 0, k == 0)) return plan;
  plan->desc = fp8_desc(GemmType::kMGroupedMasked, m_max, n, k, groups, DType::kBFloat16, false, sfa, nullptr);
  plan->desc.expected_m = std::min<int>(expected_m, static_cast<int>(m_max));
  plan->desc.deterministic = plan->settings().deterministic;
  validate_desc(plan->desc);
  api::require_tma_operands(a, b, d);
  return plan;
}

Plan plan_k_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                        const TensorView& sfb, const TensorView& d, const std::vector<int>& ks,
                                        const TensorView& ks_tensor, const TensorView* c, int num_sms) {
  // 2-D: the groups side by side along K; 1-D: DeepGEMM's layout, the groups' [rows, k_g] blocks one after another.
  const bool blocks = a.ndim == 1;
  TILEGEMM_REQUIRE(a.ndim == 1 || a.ndim == 2, "a",
                   "a 2-D [M, ΣK] tensor or a 1-D one of ΣK·M elements (each group's K-major [M, k_g] block in turn)",
                   fmt::format("{}-D {}", a.ndim, shape_str(a)));
  check_fp8_operand(a, "a", a.ndim);
  check_fp8_operand(b, "b", a.ndim);
  require_tensor(d, "d", 3, DType::kFloat32);
  const std::int64_t groups = d.size(0);
  const std::int64_t m = blocks ? d.size(1) : a.size(0), n = blocks ? d.size(2) : b.size(0);
  std::int64_t sum_k = 0;
  if (blocks) {
    for (int k_g : ks) sum_k += k_g;
    api::require_group_ks(ks, ks_tensor, groups, kScaleBlock, sum_k);  // sizes first: sum_k is theirs
    for (auto [v, name, rows] : {std::tuple{&a, "a", m}, std::tuple{&b, "b", n}})
      TILEGEMM_REQUIRE(v->size(0) == sum_k * rows, name,
                       fmt::format("{} elements (ΣK={} times {} rows of d)", sum_k * rows, sum_k, rows), shape_str(*v));
  } else {
    sum_k = a.size(1);
    TILEGEMM_REQUIRE(b.size(1) == sum_k, "b", fmt::format("[N, ΣK={}] to match a {}", sum_k, shape_str(a)),
                     shape_str(b));
    TILEGEMM_REQUIRE(d.size(1) == m && d.size(2) == n, "d", fmt::format("[G, M={}, N={}]", m, n), shape_str(d));
  }
  require_contiguous_rows(d, "d");
  api::require_group_ks(ks, ks_tensor, groups, kScaleBlock, sum_k);  // each group owns whole scale blocks
  check_per_token_sf(sfa, "sfa", 2, 1, m, sum_k);
  check_per_token_sf(sfb, "sfb", 2, 1, n, sum_k);
  if (c != nullptr) {
    api::require_c_in_place_is_d(*c, d);
    require_tensor(*c, "c", 3, DType::kFloat32);
    TILEGEMM_REQUIRE(c->size(0) == groups && c->size(1) == m && c->size(2) == n, "c",
                     fmt::format("the shape of d {}", shape_str(d)), shape_str(*c));
    require_contiguous_rows(*c, "c");
  }
  auto plan = std::make_shared<LaunchPlan>(
      std::initializer_list<const TensorView*>{&a, &sfa, &b, &sfb, &d, &ks_tensor, c}, num_sms, &run_fp8_k_grouped);
  if (groups == 0 || m == 0 || n == 0) {
    plan->work = Work::kNone;
    return plan;
  }
  if (sum_k == 0) {  // no operand element to read (and no tensor map of a zero extent to encode)
    plan->work = Work::kFill;
    return plan;
  }
  // The heuristics see the mean group K (each group is one [M, N, K_g] problem).
  const std::int64_t mean_k = std::max<std::int64_t>(kScaleBlock, ceil_div(sum_k / groups, kScaleBlock) * kScaleBlock);
  plan->desc = fp8_desc(GemmType::kKGroupedContiguous, m, n, mean_k, groups, DType::kFloat32, c != nullptr, sfa, &sfb);
  plan->desc.deterministic = plan->settings().deterministic;
  plan->desc.k_group_maps = blocks ? kernels::sm90_fp8_group_maps_per_launch(static_cast<int>(groups)) : 0;
  validate_desc(plan->desc);
  api::require_tma_operands(a, b, d);
  plan->ks = ks;
  return plan;
}

}  // namespace api

// Each entry point: its plan, run once on the call's own pointers.
void fp8_gemm_1d2d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const GemmOptions& options) {
  api::plan_fp8_gemm(a, sfa, b, sfb, d, nullptr, false, options.num_sms)->run(options.stream);
}

void fp8_gemm_1d2d_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                 const TensorView& d, const HeadSplits& head_splits, const GemmOptions& options) {
  api::plan_fp8_gemm_skip_head_mid(a, sfa, b, sfb, d, head_splits, options.num_sms)->run(options.stream);
}

void fp8_gemm_1d1d(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const TensorView* c, const GemmOptions& options) {
  api::plan_fp8_gemm(a, sfa, b, sfb, d, c, true, options.num_sms)->run(options.stream);
}

void m_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                   bool use_psum_layout, const GemmOptions& options) {
  api::plan_m_grouped_fp8_gemm_contiguous(a, sfa, b, sfb, d, grouped_layout, use_psum_layout, options.num_sms)
      ->run(options.stream);
}

void m_grouped_fp8_gemm_masked(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, const TensorView& masked_m, int expected_m,
                               const GemmOptions& options) {
  api::plan_m_grouped_fp8_gemm_masked(a, sfa, b, sfb, d, masked_m, expected_m, options.num_sms)->run(options.stream);
}

void k_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const std::vector<int>& ks,
                                   const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options) {
  api::plan_k_grouped_fp8_gemm_contiguous(a, sfa, b, sfb, d, ks, ks_tensor, c, options.num_sms)->run(options.stream);
}

}  // namespace tilegemm
