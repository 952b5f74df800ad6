// The FP8 MoE layer on one GPU: checks, then route → dispatch → grouped GEMM 1 → SwiGLU + quantisation → grouped
// GEMM 2 → combine on one stream (tilegemm/moe.hpp).
#include "tilegemm/moe.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/launch_plan.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_moe.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/moe_params.hpp"

namespace tilegemm {

using api::shape_str;

namespace {

// 256-thread CTAs of the memory-bound kernels per SM.
constexpr int kCtasPerSm = 8;

int max_ctas() {
  return kCtasPerSm * current_device_context().hw.num_sms;
}

// An output: a 2-D tensor of `dtype` [rows, cols] with contiguous, 16-byte aligned rows that do not overlap.
void require_rows(const TensorView& v, const char* name, DType dtype, std::int64_t rows, std::int64_t cols,
                  const std::string& what) {
  api::require_tensor(v, name, 2, dtype);
  TILEGEMM_REQUIRE(v.size(0) == rows && v.size(1) == cols, name, fmt::format("[{}, {}] ({})", rows, cols, what),
                   shape_str(v));
  api::require_tma_rows(v, name);
}

// row_of (or topk_weights): [T, K] of `dtype`, rows contiguous and packed (stride K).
void require_pairs(const TensorView& v, const char* name, DType dtype, std::int64_t tokens, std::int64_t topk) {
  api::require_tensor(v, name, 2, dtype);
  TILEGEMM_REQUIRE(v.size(0) == tokens && v.size(1) == topk, name,
                   fmt::format("[{}, {}] (one per token and k)", tokens, topk), shape_str(v));
  TILEGEMM_REQUIRE(v.stride(1) == 1 && (tokens <= 1 || v.stride(0) == topk), name, "a contiguous tensor", describe(v));
}

// An expert-sorted FP8 buffer: data e4m3 [R, cols] (16-byte rows) and its MN-major scales fp32 [R, cols / 128].
MoeFp8Rows fp8_rows(const TensorView& data, const TensorView& sf, const char* data_name, const char* sf_name,
                    std::int64_t cols) {
  api::require_tensor(data, data_name, 2, DType::kFloat8E4M3);
  const std::int64_t rows = data.size(0);
  TILEGEMM_REQUIRE(data.size(1) == cols, data_name, fmt::format("[R, {}]", cols), shape_str(data));
  api::require_tma_rows(data, data_name);
  api::require_tensor(sf, sf_name, 2, DType::kFloat32);
  const std::int64_t blocks = cols / moe::kQuantBlock;
  TILEGEMM_REQUIRE(sf.size(0) == rows && sf.size(1) == blocks, sf_name,
                   fmt::format("[{}, {}] (a scale per row of {} and 128 columns)", rows, blocks, data_name),
                   shape_str(sf));
  TILEGEMM_REQUIRE((rows <= 1 || sf.stride(0) == 1) && (blocks <= 1 || sf.stride(1) >= rows), sf_name,
                   "MN-major scales (stride 1 along the rows, the blocks at least R apart)", describe(sf));
  api::require_int_size(rows, data_name);
  return {static_cast<unsigned char*>(data.data), data.stride(0), static_cast<int>(rows), static_cast<float*>(sf.data),
          sf.stride(1)};
}

// The grouped GEMM of a layer step, its errors under the layer's names (`names`: the GEMM's a, sfa, b, sfb, d).
// expected_rows: the heuristics' hint of rows per expert.
api::Plan plan_step_gemm(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                         const TensorView& d, const TensorView& group_end, int num_sms, int expected_rows,
                         const std::array<const char*, 5>& names) {
  try {
    return api::plan_m_grouped_fp8_gemm_contiguous(a, sfa, b, sfb, d, group_end, true, num_sms, expected_rows);
  } catch (const InvalidArgument& e) {
    constexpr std::array<const char*, 5> kGemmNames{"a", "sfa", "b", "sfb", "d"};
    for (std::size_t i = 0; i < kGemmNames.size(); ++i)
      if (e.argument() == kGemmNames[i]) throw e.renamed(names[i]);
    if (e.argument() == "grouped_layout") throw e.renamed("group_end");
    throw;
  }
}

void require_multiple_of_128(std::int64_t value, const char* name) {
  TILEGEMM_REQUIRE(value > 0 && value % moe::kQuantBlock == 0, name,
                   "a positive multiple of 128 (per-token scales cover 128 columns)", std::to_string(value));
}

// Each step's checks, returning its kernel's parameters: the layer checks every step before it launches the first.
MoeRouteParams route_params(const TensorView& topk_idx, const TensorView& group_end, const TensorView& row_of) {
  api::require_ndim(topk_idx, "topk_idx", 2);
  TILEGEMM_REQUIRE(topk_idx.dtype == DType::kInt32 || topk_idx.dtype == DType::kInt64, "topk_idx", "int32 or int64",
                   std::string(dtype_name(topk_idx.dtype)));
  const std::int64_t tokens = topk_idx.size(0), topk = topk_idx.size(1);
  TILEGEMM_REQUIRE(topk >= 1 && topk <= moe::kMaxTopk, "topk_idx",
                   fmt::format("[T, K] with K in [1, {}]", moe::kMaxTopk), shape_str(topk_idx));
  TILEGEMM_REQUIRE(topk_idx.stride(1) == 1, "topk_idx", "contiguous rows", describe(topk_idx));
  api::require_tensor(group_end, "group_end", 1, DType::kInt32);
  const std::int64_t experts = group_end.size(0);
  TILEGEMM_REQUIRE(experts >= 1 && experts <= moe::kMaxExperts && group_end.stride(0) == 1, "group_end",
                   fmt::format("contiguous int32 [E], E in [1, {}] (one end row per expert)", moe::kMaxExperts),
                   describe(group_end));
  require_pairs(row_of, "row_of", DType::kInt32, tokens, topk);
  api::require_int_size(moe_buffer_rows(tokens, static_cast<int>(topk), static_cast<int>(experts)), "tokens");

  MoeRouteParams p{};
  p.topk_idx = topk_idx.data, p.idx_stride = topk_idx.stride(0), p.idx_is_int64 = topk_idx.dtype == DType::kInt64;
  p.tokens = static_cast<int>(tokens), p.topk = static_cast<int>(topk), p.experts = static_cast<int>(experts);
  p.group_end = static_cast<int*>(group_end.data), p.row_of = static_cast<int*>(row_of.data);
  return p;
}

// a, sfa: the FP8 buffer the step writes, checked under the names a_name and sf_name.
MoeDispatchParams dispatch_params(const TensorView& x, const TensorView& row_of, const TensorView& a,
                                  const TensorView& sfa, bool ue8m0, const char* a_name, const char* sf_name) {
  api::require_tensor(x, "x", 2, DType::kBFloat16);
  const std::int64_t tokens = x.size(0), hidden = x.size(1);
  require_multiple_of_128(hidden, "hidden (x's columns)");
  api::require_tma_rows(x, "x");
  api::require_ndim(row_of, "row_of", 2);
  require_pairs(row_of, "row_of", DType::kInt32, tokens, row_of.size(1));
  TILEGEMM_REQUIRE(row_of.size(1) >= 1 && row_of.size(1) <= moe::kMaxTopk, "row_of",
                   fmt::format("[T, K] with K in [1, {}]", moe::kMaxTopk), shape_str(row_of));
  MoeDispatchParams p{};
  p.out = fp8_rows(a, sfa, a_name, sf_name, hidden);
  p.x = static_cast<const unsigned short*>(x.data), p.x_stride = x.stride(0),
  p.row_of = static_cast<const int*>(row_of.data);
  p.tokens = static_cast<int>(tokens), p.topk = static_cast<int>(row_of.size(1)), p.hidden = static_cast<int>(hidden);
  p.ue8m0 = ue8m0;
  return p;
}

MoeSwigluParams swiglu_params(const TensorView& h, const TensorView& row_of, const TensorView& a, const TensorView& sfa,
                              bool ue8m0, const char* a_name, const char* sf_name) {
  api::require_tensor(h, "h", 2, DType::kBFloat16);
  const std::int64_t inter = h.size(1) / 2;
  TILEGEMM_REQUIRE(h.size(1) % 2 == 0, "h", "[R, 2·I] (gate | up)", shape_str(h));
  require_multiple_of_128(inter, "intermediate (half of h's columns)");
  api::require_tma_rows(h, "h");
  api::require_ndim(row_of, "row_of", 2);
  require_pairs(row_of, "row_of", DType::kInt32, row_of.size(0), row_of.size(1));
  MoeSwigluParams p{};
  p.out = fp8_rows(a, sfa, a_name, sf_name, inter);
  TILEGEMM_REQUIRE(h.size(0) == a.size(0), "h", fmt::format("[R={}, {}] (as many rows as a)", a.size(0), h.size(1)),
                   shape_str(h));
  const std::int64_t pairs = row_of.size(0) * row_of.size(1);
  api::require_int_size(pairs, "row_of");
  p.h = static_cast<const unsigned short*>(h.data), p.h_stride = h.stride(0),
  p.row_of = static_cast<const int*>(row_of.data);
  p.pairs = static_cast<int>(pairs), p.inter = static_cast<int>(inter), p.ue8m0 = ue8m0;
  return p;
}

MoeCombineParams combine_params(const TensorView& y2, const TensorView& row_of, const TensorView& topk_weights,
                                const TensorView& y) {
  api::require_tensor(y2, "y2", 2, DType::kBFloat16);
  const std::int64_t rows = y2.size(0), hidden = y2.size(1);
  TILEGEMM_REQUIRE(hidden > 0 && hidden % 8 == 0, "y2", "[R, H] with H a positive multiple of 8", shape_str(y2));
  api::require_tma_rows(y2, "y2");
  api::require_ndim(row_of, "row_of", 2);
  const std::int64_t tokens = row_of.size(0), topk = row_of.size(1);
  require_pairs(row_of, "row_of", DType::kInt32, tokens, topk);
  require_pairs(topk_weights, "topk_weights", DType::kFloat32, tokens, topk);
  require_rows(y, "y", DType::kBFloat16, tokens, hidden, "one row per token of row_of, y2's columns");
  api::require_int_size(rows, "y2");
  MoeCombineParams p{};
  p.y2 = static_cast<const unsigned short*>(y2.data), p.y2_stride = y2.stride(0), p.rows = static_cast<int>(rows);
  p.row_of = static_cast<const int*>(row_of.data);
  p.weights = static_cast<const float*>(topk_weights.data), p.weights_stride = topk;
  p.tokens = static_cast<int>(tokens), p.topk = static_cast<int>(topk), p.hidden = static_cast<int>(hidden);
  p.y = static_cast<unsigned short*>(y.data), p.y_stride = y.stride(0);
  return p;
}

}  // namespace

std::int64_t moe_buffer_rows(std::int64_t tokens, int topk, int experts) {
  TILEGEMM_REQUIRE(tokens >= 0, "tokens", "a non-negative count", std::to_string(tokens));
  TILEGEMM_REQUIRE(topk >= 1 && topk <= moe::kMaxTopk, "topk", fmt::format("in [1, {}]", moe::kMaxTopk),
                   std::to_string(topk));
  TILEGEMM_REQUIRE(experts >= 1 && experts <= moe::kMaxExperts, "experts", fmt::format("in [1, {}]", moe::kMaxExperts),
                   std::to_string(experts));
  const std::int64_t pairs = tokens * topk;
  const std::int64_t padded = pairs + std::min<std::int64_t>(experts, pairs) * (moe::kRowAlignment - 1);
  return (padded + moe::kRowAlignment - 1) / moe::kRowAlignment * moe::kRowAlignment;
}

void moe_route(const TensorView& topk_idx, const TensorView& group_end, const TensorView& row_of, void* stream) {
  const MoeRouteParams p = route_params(topk_idx, group_end, row_of);
  current_device_context();  // no GPU: RuntimeError after the checks
  kernels::launch_sm90_moe_route(p, stream);
}

void moe_dispatch_fp8(const TensorView& x, const TensorView& row_of, const TensorView& a, const TensorView& sfa,
                      bool ue8m0, void* stream) {
  const MoeDispatchParams p = dispatch_params(x, row_of, a, sfa, ue8m0, "a", "sfa");
  kernels::launch_sm90_moe_dispatch(p, max_ctas(), stream);
}

void moe_swiglu_quant_fp8(const TensorView& h, const TensorView& row_of, const TensorView& a, const TensorView& sfa,
                          bool ue8m0, void* stream) {
  const MoeSwigluParams p = swiglu_params(h, row_of, a, sfa, ue8m0, "a", "sfa");
  kernels::launch_sm90_moe_swiglu_quant(p, max_ctas(), stream);
}

void moe_combine(const TensorView& y2, const TensorView& row_of, const TensorView& topk_weights, const TensorView& y,
                 void* stream) {
  const MoeCombineParams p = combine_params(y2, row_of, topk_weights, y);
  kernels::launch_sm90_moe_combine(p, max_ctas(), stream);
}

void fp8_moe_layer(const TensorView& x, const TensorView& topk_idx, const TensorView& topk_weights,
                   const Fp8MoeWeights& weights, const TensorView& y, const MoeWorkspace& ws, bool ue8m0,
                   const GemmOptions& options) {
  api::require_tensor(x, "x", 2, DType::kBFloat16);
  api::require_ndim(topk_idx, "topk_idx", 2);
  const std::int64_t tokens = x.size(0), hidden = x.size(1), topk = topk_idx.size(1);
  TILEGEMM_REQUIRE(topk_idx.size(0) == tokens, "topk_idx", fmt::format("[T={}, K] (one row per token of x)", tokens),
                   shape_str(topk_idx));
  TILEGEMM_REQUIRE(topk >= 1 && topk <= moe::kMaxTopk, "topk_idx",
                   fmt::format("[T, K] with K in [1, {}]", moe::kMaxTopk), shape_str(topk_idx));
  api::require_tma_rows(x, "x");
  api::require_tensor(weights.w1, "w1", 3, DType::kFloat8E4M3);
  api::require_tensor(weights.w2, "w2", 3, DType::kFloat8E4M3);
  const std::int64_t experts = weights.w1.size(0), inter = weights.w1.size(1) / 2;
  TILEGEMM_REQUIRE(weights.w1.size(1) % 2 == 0 && weights.w1.size(2) == hidden, "w1",
                   fmt::format("[E, 2·I, H={}] (gate and up rows)", hidden), shape_str(weights.w1));
  TILEGEMM_REQUIRE(experts >= 1 && experts <= moe::kMaxExperts, "w1",
                   fmt::format("[E, 2·I, H] with E in [1, {}]", moe::kMaxExperts), shape_str(weights.w1));
  require_multiple_of_128(hidden, "hidden (x's columns)");
  require_multiple_of_128(inter, "intermediate (half of w1's rows)");
  TILEGEMM_REQUIRE(weights.w2.size(0) == experts && weights.w2.size(1) == hidden && weights.w2.size(2) == inter, "w2",
                   fmt::format("[E={}, H={}, I={}]", experts, hidden, inter), shape_str(weights.w2));
  TILEGEMM_REQUIRE(ws.group_end.ndim == 1 && ws.group_end.size(0) == experts, "group_end",
                   fmt::format("[E={}] (one end row per expert of w1)", experts), shape_str(ws.group_end));
  const std::int64_t need = moe_buffer_rows(tokens, static_cast<int>(topk), static_cast<int>(experts));
  TILEGEMM_REQUIRE(ws.a1.ndim == 2 && ws.a1.size(0) >= need, "a1",
                   fmt::format("at least moe_buffer_rows = {} rows for {} tokens of top-{} over {} experts", need,
                               tokens, topk, experts),
                   shape_str(ws.a1));
  const std::int64_t rows = ws.a1.size(0);
  require_rows(ws.h1, "h1", DType::kBFloat16, rows, 2 * inter, "a1's rows, w1's rows");
  require_rows(ws.y2, "y2", DType::kBFloat16, rows, hidden, "a1's rows, hidden");
  require_rows(y, "y", DType::kBFloat16, tokens, hidden, "one row per token of x");
  // Each step checks the rest (the GEMMs their weights and scales) before the first kernel is launched: the GEMMs'
  // plans are made up front.
  // The GEMMs' tiles are sized for the rows an active expert gets with an even spread: with few tokens, many
  // experts hold a handful of rows each, and tall tiles would compute padding.
  const std::int64_t pairs = tokens * topk;
  const int expected_rows =
      pairs == 0 ? 0 : static_cast<int>((pairs + std::min(pairs, experts) - 1) / std::min(pairs, experts));
  const api::Plan gemm1 = plan_step_gemm(ws.a1, ws.sfa1, weights.w1, weights.w1_sf, ws.h1, ws.group_end,
                                         options.num_sms, expected_rows, {"a1", "sfa1", "w1", "w1_sf", "h1"});
  const api::Plan gemm2 = plan_step_gemm(ws.a2, ws.sfa2, weights.w2, weights.w2_sf, ws.y2, ws.group_end,
                                         options.num_sms, expected_rows, {"a2", "sfa2", "w2", "w2_sf", "y2"});
  const MoeRouteParams route = route_params(topk_idx, ws.group_end, ws.row_of);
  const MoeDispatchParams dispatch = dispatch_params(x, ws.row_of, ws.a1, ws.sfa1, ue8m0, "a1", "sfa1");
  const MoeSwigluParams swiglu = swiglu_params(ws.h1, ws.row_of, ws.a2, ws.sfa2, ue8m0, "a2", "sfa2");
  const MoeCombineParams combine = combine_params(ws.y2, ws.row_of, topk_weights, y);
  if (tokens == 0) return;
  const int ctas = max_ctas();
  kernels::launch_sm90_moe_route(route, options.stream);
  kernels::launch_sm90_moe_dispatch(dispatch, ctas, options.stream);
  gemm1->run(options.stream);
  kernels::launch_sm90_moe_swiglu_quant(swiglu, ctas, options.stream);
  gemm2->run(options.stream);
  kernels::launch_sm90_moe_combine(combine, ctas, options.stream);
}

}  // namespace tilegemm
