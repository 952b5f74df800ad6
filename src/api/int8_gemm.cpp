// int8 x int8 with per-token and per-channel scales: validate → GemmDesc (a LaunchPlan) → the BF16 kernel family's
// int8 variant (s8 wgmma, exact int32 sums scaled in the epilogue).
#include "tilegemm/int8_gemm.hpp"

#include <fmt/format.h>

#include "api/launch_plan.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

using api::LaunchPlan;
using api::shape_str;

namespace {

// Tensors a, b, scale_a, scale_b, d.
void run_int8_gemm(const LaunchPlan& plan, const TensorView* v, void* stream) {
  if (plan.work == LaunchPlan::Work::kNone) return;
  if (plan.work == LaunchPlan::Work::kFill) return api::copy_or_zero(v[4], nullptr, stream);
  kernels::Sm90GemmOperands ops{kernels::as_3d(v[0]), kernels::as_3d(v[1]), kernels::as_3d(v[4])};
  ops.scale_a = static_cast<const float*>(v[2].data);
  ops.scale_b = static_cast<const float*>(v[3].data);
  kernels::launch_sm90_bf16_gemm_reusing(plan.desc, plan.config(), ops, stream, plan.reuse);
}

// A contiguous fp32 vector of `rows` scales.
void require_scales(const TensorView& s, const char* name, std::int64_t rows, const char* what) {
  api::require_tensor(s, name, 1, DType::kFloat32);
  TILEGEMM_REQUIRE(s.size(0) == rows && (rows <= 1 || s.stride(0) == 1), name,
                   fmt::format("contiguous fp32 [{}] ({})", rows, what),
                   fmt::format("{} stride {}", shape_str(s), s.stride(0)));
}

}  // namespace

namespace api {

Plan plan_int8_gemm(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
                    const TensorView& d, int num_sms) {
  require_tensor(a, "a", 2, DType::kInt8);
  require_tensor(b, "b", 2, DType::kInt8);
  require_tensor(d, "d", 2, DType::kBFloat16);
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  TILEGEMM_REQUIRE(b.size(1) == k, "b", fmt::format("[N, K={}] to match a {}", k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  for (auto [t, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}})
    TILEGEMM_REQUIRE(t->stride(1) == 1 || t->size(1) <= 1, name,
                     "K-major (stride 1 along K: integer wgmma reads K-major only)",
                     fmt::format("strides [{}, {}]", t->stride(0), t->stride(1)));
  require_contiguous_rows(d, "d");
  require_scales(scale_a, "scale_a", m, "one per row of a");
  require_scales(scale_b, "scale_b", n, "one per row of b");
  TILEGEMM_REQUIRE(k <= kInt8GemmMaxK, "k", fmt::format("at most {} (int32 sums of int8 products)", kInt8GemmMaxK),
                   std::to_string(k));
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}}) require_int_size(v, name);

  auto plan = std::make_shared<LaunchPlan>(std::initializer_list<const TensorView*>{&a, &b, &scale_a, &scale_b, &d},
                                           num_sms, &run_int8_gemm);
  if (plan->without_kernel(m == 0 || n == 0, k == 0)) return plan;
  GemmDesc& desc = plan->desc;
  desc.m = static_cast<int>(m), desc.n = static_cast<int>(n), desc.k = static_cast<int>(k);
  desc.a_dtype = desc.b_dtype = DType::kInt8;
  desc.d_dtype = DType::kBFloat16;
  desc.deterministic = plan->settings().deterministic;
  validate_desc(desc);
  require_tma_operands(a, b, d);
  return plan;
}

}  // namespace api

void int8_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
                  const TensorView& d, const GemmOptions& options) {
  api::plan_int8_gemm(a, b, scale_a, scale_b, d, options.num_sms)->run(options.stream);
}

}  // namespace tilegemm
