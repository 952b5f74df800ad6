// fp8_fp4_gemm_nt / m_grouped_fp8_fp4_gemm_nt_masked / mxfp8_gemm_nt on SM90: validate → Fp8Fp4GemmConfig → tensor
// maps → the decode-in-registers kernel.
#include "tilegemm/fp8_fp4_gemm.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/print_config.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_fp8_fp4_gemm.hpp"
#include "kernels/split_workspace.hpp"
#include "kernels/tma_descriptor.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

using api::require_int_size;
using api::shape_str;

// `v` has the shape `want` (its leading dimensions, then [rows, cols]); `what` says what it holds.
void require_shape(const TensorView& v, const char* name, std::initializer_list<std::int64_t> want, const char* what) {
  bool same = v.ndim == static_cast<int>(want.size());
  std::string text = "[";
  int i = 0;
  for (const std::int64_t extent : want) {
    text += fmt::format("{}{}", i ? ", " : "", extent);
    same = same && v.size(i) == extent;
    ++i;
  }
  TILEGEMM_REQUIRE(same, name, fmt::format("{}] ({})", text, what), shape_str(v));
}

// The checks the entry points share, on [rows, cols] or [E, rows, cols] views: returns K. `mx`: MXFP8 (B e4m3 [.., N,
// K], A's scales [.., M, K / 32] read by TMA); else FP4 B [.., N, K / 2] and A's scales [.., M, K / 128], any strides.
std::int64_t require_operands(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                              const TensorView& d, bool mx = false) {
  const bool grouped = a.ndim == 3;
  const std::int64_t e = grouped ? a.size(0) : 1, m = a.size(-2), k = a.size(-1), n = b.size(-2);
  api::require_dtype(a, "a", DType::kFloat8E4M3);
  api::require_dtype(b, "b", mx ? DType::kFloat8E4M3 : DType::kInt8);
  api::require_dtype(sfa, "sfa", DType::kFloat32);
  api::require_dtype(sfb, "sfb", DType::kFloat32);
  TILEGEMM_REQUIRE(k % 128 == 0, "a", "K a multiple of 128 (A's 1x128 scale blocks, B's scale rows in TMA)",
                   shape_str(a));
  if (mx) {
    require_shape(b, "b", {n, k}, "N x K e4m3");
    require_shape(sfb, "sfb", {n, k / 32}, "one scale per row and 32 k");
    require_shape(sfa, "sfa", {m, k / 32}, "one scale per token and 32 k");
    api::require_tma_rows(sfa, "sfa");
  } else if (grouped) {
    require_shape(b, "b", {e, n, k / 2}, "K/2 bytes of two FP4 codes per row, for each expert");
    require_shape(sfb, "sfb", {e, n, k / 32}, "one scale per row and 32 k");
    require_shape(sfa, "sfa", {e, m, k / 128}, "one scale per token and 128 k");
  } else {
    require_shape(b, "b", {n, k / 2}, "N x K/2: two FP4 codes a byte");
    require_shape(sfb, "sfb", {n, k / 32}, "one scale per row and 32 k");
    require_shape(sfa, "sfa", {m, k / 128}, "one scale per token and 128 k");
  }
  for (int i = 0; i < sfa.ndim; ++i) {
    TILEGEMM_REQUIRE(sfa.stride(i) >= 0, "sfa", "non-negative strides", describe(sfa));
    require_int_size(sfa.stride(i), "sfa");
  }
  api::require_tma_rows(a, "a");
  api::require_tma_rows(b, "b");
  api::require_tma_rows(sfb, "sfb");
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32, "d", "bf16 or fp32",
                   std::string(dtype_name(d.dtype)));
  if (grouped)
    require_shape(d, "d", {e, m, n}, "experts x M_max x N");
  else
    require_shape(d, "d", {m, n}, "M x N");
  TILEGEMM_REQUIRE(n <= 1 || d.stride(-1) == 1, "d", "N contiguous (stride 1 along N)", describe(d));
  TILEGEMM_REQUIRE(m <= 1 || d.stride(-2) >= n, "d", "rows that do not overlap (row stride >= N)", describe(d));
  TILEGEMM_REQUIRE(!grouped || e <= 1 || d.stride(0) >= m * d.stride(-2), "d",
                   "experts that do not overlap (expert stride >= M_max x row stride)", describe(d));
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{k, "k"}, std::pair{e, "experts"}})
    require_int_size(v, name);
  for (int i = 0; i < d.ndim; ++i) require_int_size(d.stride(i), "d");
  return k;
}

// The kernel's parameters for [E, rows, cols] views and config `c` (split workspace included).
Fp8Fp4GemmParams make_params(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                             const TensorView& d, const Fp8Fp4GemmConfig& c, void* stream) {
  Fp8Fp4GemmParams p{};
  p.tma_a = kernels::encode_tma(kernels::operand_view(a, Major::kKMajor, c.block_m, 128), "a");
  p.tma_b = kernels::encode_tma(kernels::operand_view(b, Major::kKMajor, fp8_fp4::kBlockN, 128), "b");
  kernels::TmaView sf = kernels::operand_view(sfb, Major::kKMajor, fp8_fp4::kBlockN, fp8_fp4::kGroupsPerStage);
  sf.swizzle_bytes = 0;  // [64 rows][8 scales]: 32-byte rows, read unswizzled
  p.tma_sfb = kernels::encode_tma(sf, "sfb");
  if (c.mx) {
    kernels::TmaView a_sf = kernels::operand_view(sfa, Major::kKMajor, c.block_m, fp8_fp4::kGroupsPerStage);
    a_sf.swizzle_bytes = 0;  // [BLOCK_M rows][8 scales]
    p.tma_sfa = kernels::encode_tma(a_sf, "sfa");
  }
  p.sfa = static_cast<const float*>(sfa.data);
  p.sfa_stride_m = sfa.stride(1), p.sfa_stride_k = sfa.stride(2), p.sfa_expert_stride = sfa.stride(0);
  p.d = d.data;
  p.ldd = d.stride(1);
  p.d_expert_bytes = d.stride(0) * (dtype_bits(d.dtype) / 8);
  p.m = static_cast<int>(a.size(1)), p.n = static_cast<int>(b.size(1)), p.k = static_cast<int>(a.size(2));
  p.num_splits = c.num_splits;
  p.m_blocks = c.experts > 0 ? 1 : (p.m + c.block_m - 1) / c.block_m;
  if (c.num_splits > 1) {
    // [tiles] counters (left at zero by the kernel), then [tiles][splits][64][block_m] partial tiles.
    const std::size_t tiles = static_cast<std::size_t>(c.grid / c.num_splits);
    const std::size_t counter_bytes = (tiles * sizeof(int) + 255) / 256 * 256;
    const std::size_t partial_bytes = static_cast<std::size_t>(c.grid) * fp8_fp4::kBlockN * c.block_m * sizeof(float);
    auto* workspace = static_cast<char*>(kernels::split_workspace(counter_bytes + partial_bytes, stream));
    p.counters = reinterpret_cast<int*>(workspace);
    p.partials = reinterpret_cast<float*>(workspace + counter_bytes);
  }
  return p;
}

// [rows, cols] as [1, rows, cols] (A's scales keep any strides).
TensorView batched(const TensorView& v) {
  return kernels::as_3d(v);
}

}  // namespace

void fp8_fp4_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                     const TensorView& d, const GemmOptions& options) {
  api::require_ndim(a, "a", 2);
  api::require_ndim(b, "b", 2);
  api::require_ndim(sfa, "sfa", 2);
  api::require_ndim(sfb, "sfb", 2);
  api::require_ndim(d, "d", 2);
  const std::int64_t k = require_operands(a, sfa, b, sfb, d);
  if (a.size(0) == 0 || b.size(0) == 0) return;
  TILEGEMM_REQUIRE(k > 0, "a", "K > 0 (an empty K has no FP4 scale blocks)", shape_str(a));
  const DeviceContext& ctx = current_device_context();
  const Fp8Fp4GemmConfig c = select_fp8_fp4_gemm_config(static_cast<int>(a.size(0)), static_cast<int>(b.size(0)),
                                                        static_cast<int>(k), ctx.hw, sms_used(options.num_sms, ctx.hw));
  api::print_config_once([&] { return format_fp8_fp4_gemm_config(a.size(0), b.size(0), k, c); });
  const TensorView sfa3 =
      TensorView::batched(sfa.data, sfa.dtype, 1, sfa.size(0), sfa.size(1), 0, sfa.stride(0), sfa.stride(1));
  const Fp8Fp4GemmParams p = make_params(batched(a), sfa3, batched(b), batched(sfb), batched(d), c, options.stream);
  kernels::launch_sm90_fp8_fp4_gemm(d.dtype, c, p, options.stream);
}

void m_grouped_fp8_fp4_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                      int expected_m, const GemmOptions& options) {
  for (auto [v, name] :
       {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{&sfa, "sfa"}, std::pair{&sfb, "sfb"}, std::pair{&d, "d"}})
    api::require_ndim(*v, name, 3);
  TILEGEMM_REQUIRE(b.size(0) == a.size(0), "b", fmt::format("{} experts like a", a.size(0)), shape_str(b));
  const std::int64_t k = require_operands(a, sfa, b, sfb, d);
  const std::int64_t experts = a.size(0), m_max = a.size(1);
  api::require_masked_m(masked_m, experts, expected_m);
  TILEGEMM_REQUIRE(expected_m <= std::max<std::int64_t>(m_max, 1), "expected_m",
                   fmt::format("a row-count hint in [1, M_max={}]", m_max), std::to_string(expected_m));
  if (experts == 0 || m_max == 0 || b.size(1) == 0) return;
  TILEGEMM_REQUIRE(k > 0, "a", "K > 0 (an empty K has no FP4 scale blocks)", shape_str(a));
  const DeviceContext& ctx = current_device_context();
  const Fp8Fp4GemmConfig c =
      select_fp8_fp4_gemm_config(expected_m, static_cast<int>(b.size(1)), static_cast<int>(k), ctx.hw,
                                 sms_used(options.num_sms, ctx.hw), static_cast<int>(experts));
  api::print_config_once([&] { return format_fp8_fp4_gemm_config(expected_m, b.size(1), k, c); });
  Fp8Fp4GemmParams p = make_params(a, sfa, b, sfb, d, c, options.stream);
  p.masked_m = static_cast<const int*>(masked_m.data);
  kernels::launch_sm90_fp8_fp4_gemm(d.dtype, c, p, options.stream);
}

}  // namespace tilegemm

namespace tilegemm {

void mxfp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const GemmOptions& options) {
  for (auto [v, name] :
       {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{&sfa, "sfa"}, std::pair{&sfb, "sfb"}, std::pair{&d, "d"}})
    api::require_ndim(*v, name, 2);
  const std::int64_t k = require_operands(a, sfa, b, sfb, d, /*mx=*/true);
  if (a.size(0) == 0 || b.size(0) == 0) return;
  TILEGEMM_REQUIRE(k > 0, "a", "K > 0 (an empty K has no scale groups)", shape_str(a));
  const DeviceContext& ctx = current_device_context();
  const Fp8Fp4GemmConfig c =
      select_fp8_fp4_gemm_config(static_cast<int>(a.size(0)), static_cast<int>(b.size(0)), static_cast<int>(k), ctx.hw,
                                 sms_used(options.num_sms, ctx.hw), /*experts=*/0, /*mx=*/true);
  api::print_config_once([&] { return format_fp8_fp4_gemm_config(a.size(0), b.size(0), k, c); });
  const Fp8Fp4GemmParams p =
      make_params(batched(a), batched(sfa), batched(b), batched(sfb), batched(d), c, options.stream);
  kernels::launch_sm90_fp8_fp4_gemm(d.dtype, c, p, options.stream);
}

}  // namespace tilegemm
