// wq_gemm_nt / wq_dequantize: validate → WqGemmConfig → the fused kernel, or dequantise slabs of W into a scratch
// and run the dense BF16 GEMM on each.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/print_config.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_wq_gemm.hpp"
#include "kernels/split_workspace.hpp"
#include "kernels/tma_descriptor.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {
namespace {

using api::require_int_size;
using api::shape_str;

// Scratch for dequantised weight slabs: at most this many bytes (a slab is at least 256 rows).
constexpr std::int64_t kScratchBytes = 64ll << 20;
constexpr int kSlabRowMultiple = 256;
// Contiguous M-grouped: each expert's rows start on a multiple of the M alignment, which whole token blocks (at most
// this many rows) must divide so that none holds two experts.
constexpr int kMaxBlockM = 64;

bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The packed arrays a weight of this layout needs, each aligned for the kernels' 16-byte bulk copies.
void require_weight(const PackedWeightView& w) {
  const WeightLayout& l = w.layout;
  const WeightLayout want = make_weight_layout(l.format, l.n, l.k, l.group_size, l.has_zeros, l.act_dtype);
  TILEGEMM_REQUIRE(want.n_pad == l.n_pad && want.k_pad == l.k_pad, "w",
                   fmt::format("a packed layout of n_pad {} and k_pad {} (pack_weight's)", want.n_pad, want.k_pad),
                   fmt::format("n_pad {}, k_pad {}", l.n_pad, l.k_pad));
  TILEGEMM_REQUIRE(l.exp_shift >= 0 && l.exp_shift <= 126 && (l.format == WeightFormat::kMxfp4 || l.exp_shift == 0),
                   "w", "an exponent shift in 0..126 (MXFP4 only)", fmt::format("{}", l.exp_shift));
  TILEGEMM_REQUIRE(w.num_experts >= 1, "w.num_experts", "an expert count >= 1", fmt::format("{}", w.num_experts));
  TILEGEMM_REQUIRE(w.data != nullptr && aligned(w.data, 16), "w.data", "a 16-byte aligned device pointer",
                   fmt::format("{}", w.data));
  const bool grouped = l.format != WeightFormat::kInt8;
  TILEGEMM_REQUIRE(grouped == (w.scales != nullptr) && aligned(w.scales, 16), "w.scales",
                   grouped ? "a 16-byte aligned device pointer" : "null (int8 weights have channel scales)",
                   fmt::format("{}", w.scales));
  TILEGEMM_REQUIRE(l.has_zeros == (w.zeros != nullptr) && aligned(w.zeros, 16), "w.zeros",
                   l.has_zeros ? "a 16-byte aligned device pointer" : "null (the layout has no zero points)",
                   fmt::format("{}", w.zeros));
  const bool channel = l.format == WeightFormat::kInt8;
  TILEGEMM_REQUIRE(channel == (w.channel_scales != nullptr) && aligned(w.channel_scales, 4), "w.channel_scales",
                   channel ? "a 4-byte aligned device pointer" : "null (only int8 weights have channel scales)",
                   fmt::format("{}", static_cast<const void*>(w.channel_scales)));
}

// The kernel parameters that describe the weight: rows [row0, row0 + rows) of it (row0 a multiple of 16).
WqGemmParams weight_params(const PackedWeightView& w, int row0, int rows) {
  const WeightLayout& l = w.layout;
  const std::int64_t rb0 = row0 / wq::kRowBlock;
  const std::int64_t entries = rb0 * l.groups() * wq::kRowBlock;
  WqGemmParams p{};
  p.data =
      static_cast<const unsigned char*>(w.data) + rb0 * (l.k_pad / wq::kChunkK) * wq::code_bytes_per_block(l.format);
  if (w.scales) p.scales = static_cast<const unsigned char*>(w.scales) + entries * wq::scale_entry_bytes(l.format);
  if (w.zeros) p.zeros = static_cast<const unsigned char*>(w.zeros) + entries;
  if (w.channel_scales) p.channel_scales = w.channel_scales + row0;
  p.n = rows;
  p.k_chunks = l.k_pad / wq::kChunkK;
  p.groups = l.groups();
  p.exp_shift = l.exp_shift;
  p.num_splits = 1;
  p.m_blocks = 1;
  p.data_group_bytes = l.data_bytes();
  p.scale_group_bytes = l.scale_bytes();
  p.zero_group_bytes = l.zero_bytes();
  p.channel_group = l.n_pad;
  return p;
}

// A [M, K] (ndim 2) or [E, M_max, K] (ndim 3) of the weight's activation dtype, K contiguous, moved by TMA.
void require_activations(const TensorView& a, const WeightLayout& l, int ndim) {
  api::require_tensor(a, "a", ndim, l.act_dtype);
  TILEGEMM_REQUIRE(a.size(-1) == l.k, "a",
                   fmt::format("{} (K as the weight's)",
                               ndim == 2 ? fmt::format("[M, {}]", l.k) : fmt::format("[E, M_max, {}]", l.k)),
                   shape_str(a));
  TILEGEMM_REQUIRE(a.stride(-1) == 1, "a", "a K-major tensor (stride 1 along K)", describe(a));
  api::require_tma_tensor(a, "a");
  for (int i = 0; i < ndim; ++i) require_int_size(a.size(i), "a");
}

// D of `shape` (its last two dimensions rows and N), bf16, fp16 or fp32, N contiguous, rows (and slices) apart.
void require_output(const TensorView& d, std::initializer_list<std::int64_t> shape, const char* named) {
  api::require_ndim(d, "d", static_cast<int>(shape.size()));
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat16 || d.dtype == DType::kFloat32, "d",
                   "a bf16, fp16 or fp32 tensor", std::string(dtype_name(d.dtype)));
  std::string want = "[";
  bool same = true;
  int i = 0;
  for (const std::int64_t extent : shape) {
    want += fmt::format("{}{}", i ? ", " : "", extent);
    same = same && d.size(i) == extent;
    ++i;
  }
  TILEGEMM_REQUIRE(same, "d", fmt::format("{}] {}", want, named), shape_str(d));
  const std::int64_t rows = d.size(-2), n = d.size(-1);
  TILEGEMM_REQUIRE(n <= 1 || d.stride(-1) == 1, "d", "N contiguous (stride 1 along N)", describe(d));
  TILEGEMM_REQUIRE(rows <= 1 || d.stride(-2) >= n, "d", "rows that do not overlap (row stride >= N)", describe(d));
  TILEGEMM_REQUIRE(d.ndim < 3 || d.size(0) <= 1 || d.stride(0) >= rows * d.stride(-2), "d",
                   "slices that do not overlap (slice stride >= rows x row stride)", describe(d));
  for (int j = 0; j < d.ndim; ++j) require_int_size(d.stride(j), "d");
}

// The plan of (m, weight layout, D dtype, type, experts) on the current device under the current settings (a
// reload_env, e.g. of TILEGEMM_CONFIG_FILTER, makes new plans), made once: the dense path's model runs the BF16
// selector, too slow for every decode step's call.
WqGemmConfig planned(int m, const WeightLayout& l, DType d_dtype, GemmType type, int experts,
                     const GemmOptions& options) {
  const DeviceContext& ctx = current_device_context();
  const int num_sms = sms_used(options.num_sms, ctx.hw);
  const int key_fields[] = {m,
                            static_cast<int>(l.format),
                            static_cast<int>(l.act_dtype),
                            l.n,
                            l.k,
                            l.group_size,
                            l.has_zeros,
                            static_cast<int>(d_dtype),
                            static_cast<int>(type),
                            experts,
                            num_sms,
                            ctx.device,
                            static_cast<int>(env().generation)};
  const std::string key(reinterpret_cast<const char*>(key_fields), sizeof(key_fields));
  static std::mutex mutex;
  static std::map<std::string, WqGemmConfig> plans;
  {
    std::lock_guard lock(mutex);
    if (const auto it = plans.find(key); it != plans.end()) return it->second;
  }
  const WqGemmConfig config = select_wq_gemm_config(m, l, d_dtype, ctx.hw, num_sms, type, experts);
  api::print_config_once([&] { return format_wq_gemm_config(m, l, config); });
  std::lock_guard lock(mutex);
  return plans.emplace(key, config).first->second;
}

// The fused kernel. Dense: a [M, K], d [M, N]. Contiguous: the same with `grouped_layout` (int32 [M]). Masked: a
// [E, M_max, K], d [E, M_max, N] and `masked_m` (int32 [E]).
void run_fused(const TensorView& a, const PackedWeightView& w, const TensorView& d, const WqGemmConfig& c,
               GemmType type, const void* group_info, const GemmOptions& options) {
  const bool masked = type == GemmType::kMGroupedMasked;
  WqGemmParams p = weight_params(w, 0, w.layout.n);
  p.tma_a = kernels::encode_tma(kernels::operand_view(kernels::as_3d(a), Major::kKMajor, c.block_m, wq::kChunkK), "a");
  p.d = d.data;
  p.ldd = d.stride(-2);
  p.d_group_bytes = masked ? d.stride(0) * (dtype_bits(d.dtype) / 8) : 0;
  p.m = static_cast<int>(a.size(-2));
  p.m_blocks = masked ? 1 : (p.m + c.block_m - 1) / c.block_m;
  p.num_splits = c.num_splits;
  if (type == GemmType::kMGroupedContiguous) p.grouped_layout = static_cast<const int*>(group_info);
  if (masked) p.masked_m = static_cast<const int*>(group_info);
  if (c.num_splits > 1) {
    // [tiles] counters (left at zero by the kernel), then [tiles][splits][64][block_m] partial tiles.
    const std::size_t tiles = static_cast<std::size_t>(c.grid / c.num_splits);
    const std::size_t counter_bytes = (tiles * sizeof(int) + 255) / 256 * 256;
    const std::size_t partial_bytes = static_cast<std::size_t>(c.grid) * wq::kBlockN * c.block_m * sizeof(float);
    auto* workspace = static_cast<char*>(kernels::split_workspace(counter_bytes + partial_bytes, options.stream));
    p.counters = reinterpret_cast<int*>(workspace);
    p.partials = reinterpret_cast<float*>(workspace + counter_bytes);
  }
  kernels::launch_sm90_wq_gemm(w.layout, d.dtype, c, type, p, options.stream);
}

// Slabs of W's rows dequantised into a scratch, each followed by the dense GEMM into D's matching columns.
void run_dequantised(const TensorView& a, const PackedWeightView& w, const TensorView& d, const GemmOptions& options) {
  const WeightLayout& l = w.layout;
  const std::int64_t row_bytes = 2ll * l.k;
  const std::int64_t fit =
      std::max<std::int64_t>(kSlabRowMultiple, kScratchBytes / row_bytes / kSlabRowMultiple * kSlabRowMultiple);
  const int slab = static_cast<int>(std::min<std::int64_t>(fit, l.n_pad));
  void* scratch = kernels::stream_scratch(static_cast<std::size_t>(slab) * row_bytes, options.stream);
  for (int row0 = 0; row0 < l.n; row0 += slab) {
    const int rows = std::min(slab, l.n - row0);
    const WqGemmParams p = weight_params(w, row0, rows);
    kernels::launch_sm90_wq_dequant(l, p, scratch, l.k, options.stream);
    TensorView b = TensorView::contiguous(scratch, l.act_dtype, {rows, l.k});
    TensorView d_slab = d;
    d_slab.data = static_cast<char*>(d.data) + static_cast<std::int64_t>(row0) * (dtype_bits(d.dtype) / 8);
    d_slab.shape[1] = rows;
    bf16_gemm(a, b, d_slab, nullptr, options);
  }
}

}  // namespace

void wq_gemm_nt(const TensorView& a, const PackedWeightView& w, const TensorView& d, const GemmOptions& options) {
  require_weight(w);
  TILEGEMM_REQUIRE(w.num_experts == 1, "w.num_experts", "1 (one weight; the grouped GEMMs take several)",
                   fmt::format("{}", w.num_experts));
  const WeightLayout& l = w.layout;
  require_activations(a, l, 2);
  const std::int64_t m = a.size(0);
  require_output(d, {m, l.n}, "[M, N]");
  if (m == 0) return;

  const WqGemmConfig config = planned(static_cast<int>(m), l, d.dtype, GemmType::kNormal, 1, options);
  if (config.fused)
    run_fused(a, w, d, config, GemmType::kNormal, nullptr, options);
  else
    run_dequantised(a, w, d, options);
}

void wq_m_grouped_gemm_nt_contiguous(const TensorView& a, const PackedWeightView& w, const TensorView& d,
                                     const TensorView& grouped_layout, const GemmOptions& options) {
  require_weight(w);
  const WeightLayout& l = w.layout;
  require_activations(a, l, 2);
  const std::int64_t m = a.size(0);
  require_output(d, {m, l.n}, "[M, N]");
  const int alignment = get_mk_alignment_for_contiguous_layout();
  TILEGEMM_REQUIRE(
      alignment % kMaxBlockM == 0, "grouped_layout",
      fmt::format("experts' rows aligned to a multiple of {} (set_mk_alignment_for_contiguous_layout)", kMaxBlockM),
      fmt::format("an alignment of {}", alignment));
  api::require_grouped_layout(grouped_layout, false, m, w.num_experts, alignment);
  if (m == 0) return;
  const WqGemmConfig config =
      planned(static_cast<int>(m), l, d.dtype, GemmType::kMGroupedContiguous, w.num_experts, options);
  run_fused(a, w, d, config, GemmType::kMGroupedContiguous, grouped_layout.data, options);
}

void wq_m_grouped_gemm_nt_masked(const TensorView& a, const PackedWeightView& w, const TensorView& d,
                                 const TensorView& masked_m, int expected_m, const GemmOptions& options) {
  require_weight(w);
  const WeightLayout& l = w.layout;
  require_activations(a, l, 3);
  const std::int64_t experts = a.size(0), m_max = a.size(1);
  TILEGEMM_REQUIRE(experts == w.num_experts, "a",
                   fmt::format("[{}, M_max, {}] (one slice per expert)", w.num_experts, l.k), shape_str(a));
  require_output(d, {experts, m_max, l.n}, "[E, M_max, N]");
  api::require_masked_m(masked_m, experts, expected_m);
  if (m_max == 0) return;
  const WqGemmConfig config = planned(std::min<int>(expected_m, static_cast<int>(m_max)), l, d.dtype,
                                      GemmType::kMGroupedMasked, w.num_experts, options);
  run_fused(a, w, d, config, GemmType::kMGroupedMasked, masked_m.data, options);
}

void wq_dequantize(const PackedWeightView& w, const TensorView& out, const GemmOptions& options) {
  require_weight(w);
  TILEGEMM_REQUIRE(w.num_experts == 1, "w.num_experts", "1 (dequantise one expert's view at a time)",
                   fmt::format("{}", w.num_experts));
  const WeightLayout& l = w.layout;
  api::require_tensor(out, "out", 2, l.act_dtype);
  TILEGEMM_REQUIRE(out.size(0) == l.n && out.size(1) == l.k, "out", fmt::format("[{}, {}] (N, K)", l.n, l.k),
                   shape_str(out));
  TILEGEMM_REQUIRE(out.stride(1) == 1 && out.stride(0) >= l.k && out.stride(0) % 2 == 0 && aligned(out.data, 4), "out",
                   "K contiguous rows, an even row stride >= K and a 4-byte aligned address", describe(out));
  current_device_context();  // a clear error without a GPU
  kernels::launch_sm90_wq_dequant(l, weight_params(w, 0, l.n), out.data, out.stride(0), options.stream);
}

}  // namespace tilegemm
