// The BF16 operations users call: validate → GemmDesc (a LaunchPlan) → GemmConfig → JIT kernel → launch.
#include "tilegemm/gemm.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/launch_plan.hpp"
#include "api/validate.hpp"
#include "core/process_switches.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

using api::copy_or_zero;
using api::require_dtype;
using api::require_ndim;
using api::require_tensor;
using api::shape_str;
using kernels::as_3d;

namespace {

// K-major when the last dim (K) is contiguous, MN-major when the row dim is; anything else TMA can't tile.
Major operand_major(const TensorView& v, const char* name) {
  if (v.stride(-1) == 1) return Major::kKMajor;
  if (v.stride(-2) == 1) return Major::kMNMajor;
  throw InvalidArgument(name, "a view contiguous in its last (K) or second-to-last (M/N) dimension",
                        fmt::format("strides [{}, {}]", v.stride(-2), v.stride(-1)));
}

using api::LaunchPlan;
using api::Plan;
using Work = LaunchPlan::Work;

void launch_bf16(const LaunchPlan& plan, const kernels::Sm90GemmOperands& ops, void* stream) {
  kernels::launch_sm90_bf16_gemm_reusing(plan.desc, plan.config(), ops, stream, plan.reuse);
}

// The runners: what each entry point does once its checks passed, on the views of one run.
void run_bf16_gemm(const LaunchPlan& plan, const TensorView* v, void* stream) {
  const TensorView &a = v[0], &b = v[1], &d = v[2];
  const TensorView* c = plan.present(3) ? &v[3] : nullptr;
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kKernel) plan.config();  // select before touching d (no GPU: nothing written)
  if (c != nullptr && c->data != d.data) copy_or_zero(d, c, stream);
  if (plan.work == Work::kFill) {
    if (c == nullptr) copy_or_zero(d, nullptr, stream);
    return;
  }
  launch_bf16(plan, {as_3d(a), as_3d(b), as_3d(d), nullptr, c != nullptr}, stream);
}

void run_bf16_m_grouped_contiguous(const LaunchPlan& plan, const TensorView* v, void* stream) {
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) return copy_or_zero(v[2], nullptr, stream);
  launch_bf16(plan, {as_3d(v[0]), v[1], as_3d(v[2]), static_cast<const int*>(v[3].data), false}, stream);
}

void run_bf16_m_grouped_masked(const LaunchPlan& plan, const TensorView* v, void* stream) {
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) return copy_or_zero(v[2], nullptr, stream);
  launch_bf16(plan, {v[0], v[1], v[2], static_cast<const int*>(v[3].data), false}, stream);
}

void run_bf16_k_grouped_tn(const LaunchPlan& plan, const TensorView* v, void* stream) {
  const TensorView &a = v[0], &b = v[1], &d = v[2], &ks_tensor = v[3];
  const TensorView* c = plan.present(4) ? &v[4] : nullptr;
  if (plan.work == Work::kNone) return;
  if (plan.work == Work::kFill) {  // every group empty: d = c or 0
    if (c == nullptr || c->data != d.data) copy_or_zero(d, c, stream);
    return;
  }
  plan.config();
  if (c != nullptr && c->data != d.data) copy_or_zero(d, c, stream);
  if (c == nullptr) api::zero_empty_groups(d, plan.ks, stream);
  // A and B as [1, M, ΣK] / [1, N, ΣK] views, M (N) contiguous.
  const std::int64_t sum_k = a.size(0), m = a.size(1), n = b.size(1);
  const TensorView a3 = TensorView::batched(a.data, a.dtype, 1, m, sum_k, sum_k * a.stride(0), 1, a.stride(0));
  const TensorView b3 = TensorView::batched(b.data, b.dtype, 1, n, sum_k, sum_k * b.stride(0), 1, b.stride(0));
  launch_bf16(plan, {a3, b3, d, static_cast<const int*>(ks_tensor.data), c != nullptr}, stream);
}

}  // namespace

namespace api {

Plan plan_bf16_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c, int num_sms) {
  const int ndim = a.ndim;
  TILEGEMM_REQUIRE(ndim == 2 || ndim == 3, "a", "a 2-D [M, K] or 3-D [B, M, K] tensor",
                   fmt::format("{}-D {}", a.ndim, shape_str(a)));
  require_ndim(b, "b", ndim);
  require_ndim(d, "d", ndim);
  require_dtype(a, "a", DType::kBFloat16);
  require_dtype(b, "b", DType::kBFloat16);
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32, "d", "bf16 or fp32",
                   std::string(dtype_name(d.dtype)));
  const std::int64_t m = a.size(-2), k = a.size(-1), n = b.size(-2);
  TILEGEMM_REQUIRE(b.size(-1) == k, "b", fmt::format("[N, K={}] to match a {}", k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(-2) == m && d.size(-1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  if (ndim == 3) {
    TILEGEMM_REQUIRE(b.size(0) == a.size(0), "b", fmt::format("batch {} to match a", a.size(0)), shape_str(b));
    TILEGEMM_REQUIRE(d.size(0) == a.size(0), "d", fmt::format("batch {} to match a", a.size(0)), shape_str(d));
  }
  TILEGEMM_REQUIRE(d.stride(-1) == 1, "d", "contiguous rows (last stride 1)",
                   fmt::format("last stride {}", d.stride(-1)));
  if (c != nullptr) {
    api::require_c_in_place_is_d(*c, d);
    TILEGEMM_REQUIRE(c->dtype == d.dtype, "c", fmt::format("the dtype of d ({})", dtype_name(d.dtype)),
                     std::string(dtype_name(c->dtype)));
    TILEGEMM_REQUIRE(c->ndim == ndim && c->size(-2) == m && c->size(-1) == n, "c",
                     fmt::format("the shape of d {}", shape_str(d)), shape_str(*c));
    TILEGEMM_REQUIRE(c->stride(-1) == 1, "c", "contiguous rows (last stride 1)",
                     fmt::format("last stride {}", c->stride(-1)));
  }
  const Major major_a = operand_major(a, "a"), major_b = operand_major(b, "b");
  const std::int64_t batch = ndim == 3 ? a.size(0) : 1;
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{k, "k"}, std::pair{batch, "batch"}})
    TILEGEMM_REQUIRE(v >= 0 && v < (1LL << 31), name, "a size in [0, 2^31)", std::to_string(v));

  auto plan =
      std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &d, c}, num_sms, &run_bf16_gemm);
  if (m == 0 || n == 0 || batch == 0) {
    plan->work = Work::kNone;
    return plan;
  }
  GemmDesc& desc = plan->desc;
  desc.type = ndim == 3 ? GemmType::kBatched : GemmType::kNormal;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.num_groups = static_cast<int>(batch);
  desc.d_dtype = d.dtype;
  desc.major_a = major_a, desc.major_b = major_b;
  desc.with_c = c != nullptr;
  desc.deterministic = plan->settings().deterministic;
  // Validate everything before touching d: a rejected call leaves d as it was.
  if (k > 0) {
    validate_desc(desc);
    api::require_tma_operands(a, b, d);
  } else {
    plan->work = Work::kFill;
  }
  return plan;
}

Plan plan_bf16_batch_reduced_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                                  int num_sms) {
  require_tensor(a, "a", 3, DType::kBFloat16);
  require_tensor(b, "b", 3, DType::kBFloat16);
  require_ndim(d, "d", 2);
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32, "d", "bf16 or fp32",
                   std::string(dtype_name(d.dtype)));
  const std::int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(1);
  TILEGEMM_REQUIRE(b.size(0) == batch && b.size(2) == k, "b",
                   fmt::format("[B={}, N, K={}] to match a {}", batch, k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  for (auto [t, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}})
    TILEGEMM_REQUIRE(t->stride(2) == 1, name, "K-major (stride 1 along K)", fmt::format("strides {}", shape_str(*t)));
  TILEGEMM_REQUIRE(d.stride(1) == 1, "d", "contiguous rows (last stride 1)",
                   fmt::format("last stride {}", d.stride(1)));
  if (c != nullptr) {
    api::require_c_in_place_is_d(*c, d);
    TILEGEMM_REQUIRE(c->dtype == d.dtype && c->ndim == 2 && c->size(0) == m && c->size(1) == n && c->stride(1) == 1,
                     "c", fmt::format("{} [M={}, N={}] with contiguous rows, like d", dtype_name(d.dtype), m, n),
                     fmt::format("{} {}", dtype_name(c->dtype), shape_str(*c)));
  }
  TILEGEMM_REQUIRE(k % 64 == 0, "k", "a multiple of 64 (each batch's K is walked in whole 64-wide blocks)",
                   std::to_string(k));
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{batch, "batch"}})
    TILEGEMM_REQUIRE(v >= 0 && v < (1LL << 31), name, "a size in [0, 2^31)", std::to_string(v));
  TILEGEMM_REQUIRE(batch * k < (1LL << 31), "k", fmt::format("batch * k below 2^31 (batch {})", batch),
                   std::to_string(k));

  auto plan =
      std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &d, c}, num_sms, &run_bf16_gemm);
  if (plan->without_kernel(m == 0 || n == 0, batch == 0 || k == 0)) return plan;
  GemmDesc& desc = plan->desc;
  desc.type = GemmType::kBatchReduced;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n);
  desc.k = static_cast<int>(batch * k);  // the reduction runs through every batch's K
  desc.num_groups = static_cast<int>(batch);
  desc.d_dtype = d.dtype;
  desc.major_a = desc.major_b = Major::kKMajor;
  desc.with_c = c != nullptr;
  desc.deterministic = plan->settings().deterministic;
  validate_desc(desc);
  api::require_tma_operands(a, b, d);
  return plan;
}

Plan plan_m_grouped_bf16_gemm_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                         const TensorView& grouped_layout, bool use_psum_layout, int num_sms) {
  require_tensor(a, "a", 2, DType::kBFloat16);
  require_tensor(b, "b", 3, DType::kBFloat16);
  require_tensor(d, "d", 2, DType::kBFloat16);
  const std::int64_t m = a.size(0), k = a.size(1), groups = b.size(0), n = b.size(1);
  TILEGEMM_REQUIRE(b.size(2) == k, "b", fmt::format("[G, N, K={}] to match a {}", k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  TILEGEMM_REQUIRE(a.stride(1) == 1, "a", "K-major (contiguous K) for M-grouped GEMMs",
                   fmt::format("strides [{}, {}]", a.stride(0), a.stride(1)));
  TILEGEMM_REQUIRE(d.stride(1) == 1, "d", "contiguous rows", fmt::format("last stride {}", d.stride(1)));
  api::require_grouped_layout(grouped_layout, use_psum_layout, m, groups, get_mk_alignment_for_contiguous_layout());
  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &d, &grouped_layout},
                                           num_sms, &run_bf16_m_grouped_contiguous);
  if (plan->without_kernel(m == 0 || n == 0, k == 0)) return plan;
  GemmDesc& desc = plan->desc;
  desc.type = GemmType::kMGroupedContiguous;
  desc.use_psum_layout = use_psum_layout;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.num_groups = static_cast<int>(groups);
  desc.major_a = Major::kKMajor;
  desc.major_b = operand_major(b, "b");
  desc.deterministic = plan->settings().deterministic;
  validate_desc(desc);
  api::require_tma_operands(a, b, d);
  return plan;
}

Plan plan_m_grouped_bf16_gemm_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                     const TensorView& masked_m, int expected_m, int num_sms) {
  require_tensor(a, "a", 3, DType::kBFloat16);
  require_tensor(b, "b", 3, DType::kBFloat16);
  require_tensor(d, "d", 3, DType::kBFloat16);
  const auto [groups, m_max, n, k] = api::require_masked_shapes(a, b, d);
  api::require_masked_m(masked_m, groups, expected_m);
  TILEGEMM_REQUIRE(a.stride(2) == 1, "a", "K-major (contiguous K) for M-grouped GEMMs",
                   fmt::format("last stride {}", a.stride(2)));
  TILEGEMM_REQUIRE(d.stride(2) == 1, "d", "contiguous rows", fmt::format("last stride {}", d.stride(2)));
  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &d, &masked_m}, num_sms,
                                           &run_bf16_m_grouped_masked);
  if (plan->without_kernel(groups == 0 || m_max == 0 || n == 0, k == 0)) return plan;
  GemmDesc& desc = plan->desc;
  desc.type = GemmType::kMGroupedMasked;
  desc.m = static_cast<int>(m_max), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.num_groups = static_cast<int>(groups);
  desc.expected_m = std::min<int>(expected_m, static_cast<int>(m_max));
  desc.major_a = Major::kKMajor;
  desc.major_b = operand_major(b, "b");
  desc.deterministic = plan->settings().deterministic;
  validate_desc(desc);
  api::require_tma_operands(a, b, d);
  return plan;
}

Plan plan_k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                            const std::vector<int>& ks, const TensorView& ks_tensor,
                                            const TensorView* c, int num_sms) {
  require_tensor(a, "a", 2, DType::kBFloat16);
  require_tensor(b, "b", 2, DType::kBFloat16);
  require_tensor(d, "d", 3, DType::kFloat32);
  const std::int64_t sum_k = a.size(0), m = a.size(1), n = b.size(1), groups = d.size(0);
  TILEGEMM_REQUIRE(b.size(0) == sum_k, "b", fmt::format("[ΣK={}, N] to match a {}", sum_k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(1) == m && d.size(2) == n, "d", fmt::format("[G, M={}, N={}]", m, n), shape_str(d));
  api::require_group_ks(ks, ks_tensor, groups, 64, sum_k);  // groups start on a 64-element K block
  TILEGEMM_REQUIRE(a.stride(1) == 1 && b.stride(1) == 1, "a/b", "[ΣK, M] and [ΣK, N] with contiguous rows",
                   fmt::format("last strides {} and {}", a.stride(1), b.stride(1)));
  TILEGEMM_REQUIRE(d.stride(2) == 1, "d", "contiguous rows", fmt::format("last stride {}", d.stride(2)));
  if (c != nullptr) {
    api::require_c_in_place_is_d(*c, d);
    TILEGEMM_REQUIRE(c->dtype == DType::kFloat32 && c->ndim == 3 && c->size(0) == groups && c->size(1) == m &&
                         c->size(2) == n && c->stride(2) == 1,
                     "c", fmt::format("fp32 {} with contiguous rows, like d", shape_str(d)),
                     fmt::format("{} {}", dtype_name(c->dtype), shape_str(*c)));
  }
  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &d, &ks_tensor, c}, num_sms,
                                           &run_bf16_k_grouped_tn);
  if (groups == 0 || m == 0 || n == 0) {
    plan->work = Work::kNone;
    return plan;
  }
  if (sum_k == 0) {  // no operand element to read (and no tensor map of a zero extent to encode)
    plan->work = Work::kFill;
    return plan;
  }
  GemmDesc& desc = plan->desc;
  desc.type = GemmType::kKGroupedContiguous;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n);
  // The heuristics see the mean group K (each group is one [M, N, K_g] problem).
  desc.k = static_cast<int>(std::max<std::int64_t>(64, (sum_k / groups + 63) / 64 * 64));
  desc.num_groups = static_cast<int>(groups);
  desc.d_dtype = DType::kFloat32;
  desc.major_a = desc.major_b = Major::kMNMajor;  // [ΣK, M]: M is the contiguous dimension
  desc.with_c = c != nullptr;
  desc.deterministic = plan->settings().deterministic;
  validate_desc(desc);
  api::require_tma_operands(a, b, d);
  plan->ks = ks;
  return plan;
}

}  // namespace api

// Each entry point: its plan, run once on the call's own pointers.
void bf16_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
               const GemmOptions& options) {
  api::plan_bf16_gemm(a, b, d, c, options.num_sms)->run(options.stream);
}

void m_grouped_bf16_gemm_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                    const TensorView& grouped_layout, bool use_psum_layout,
                                    const GemmOptions& options) {
  api::plan_m_grouped_bf16_gemm_contiguous(a, b, d, grouped_layout, use_psum_layout, options.num_sms)
      ->run(options.stream);
}

void m_grouped_bf16_gemm_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                const TensorView& masked_m, int expected_m, const GemmOptions& options) {
  api::plan_m_grouped_bf16_gemm_masked(a, b, d, masked_m, expected_m, options.num_sms)->run(options.stream);
}

void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<int>& ks, const TensorView& ks_tensor, const TensorView* c,
                                       const GemmOptions& options) {
  api::plan_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, c, options.num_sms)->run(options.stream);
}

int get_mk_alignment_for_contiguous_layout() {
  return kContiguousGroupRowAlignment;
}

void set_deterministic(bool enabled) {
  deterministic_switch().set(enabled);
}
bool is_deterministic() {
  return deterministic_switch().resolve(env().deterministic);
}

void set_pdl(bool enabled) {
  pdl_switch().set(enabled);
}
bool is_pdl_enabled() {
  return pdl_enabled(env());
}

}  // namespace tilegemm
