// fp8_mqa_logits: validate → MqaLogitsConfig (rings, grids) → tensor maps → the logits kernel, then clean-logits.
#include "tilegemm/mqa_logits.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/print_config.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_mqa_logits.hpp"
#include "kernels/tma_descriptor.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

using api::require_int_size;
using api::require_ndim;
using api::require_tensor;
using api::shape_str;

constexpr std::int64_t kMqaLogitsRowAlignBytes = 1024;  // DeepGEMM aligns the logits' row stride to 1024 bytes

std::int64_t mqa_round_up(std::int64_t x, std::int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// Contiguous: each dimension of extent > 1 steps over exactly the dimensions inside it.
bool mqa_is_contiguous(const TensorView& v) {
  std::int64_t expected = 1;
  for (int i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] > 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

void require_mqa_contiguous(const TensorView& v, const char* name, const std::string& what) {
  TILEGEMM_REQUIRE(mqa_is_contiguous(v), name, "a contiguous tensor " + what, describe(v));
}

// q, kv and kv_scales are read through TMA.
void require_mqa_tma_base(const TensorView& v, const char* name) {
  const auto address = reinterpret_cast<std::uintptr_t>(v.data);
  TILEGEMM_REQUIRE(address % 16 == 0, name, "a 16-byte aligned address (the kernel reads it through TMA)",
                   fmt::format("{:#x}", address));
}

// A [rows, cols] K-major e4m3 view ([cols] per row, D bytes) as a TMA map with boxes [box_rows][cols] and the
// cols-byte swizzle the wgmma descriptors name.
kernels::TmaView mqa_fp8_rows_view(void* base, std::int64_t rows, std::int64_t cols, std::uint32_t box_rows) {
  kernels::TmaView view;
  view.base = base;
  view.dtype = DType::kFloat8E4M3;
  view.dims = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows), 1};
  view.byte_strides = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(cols * rows)};
  view.box = {static_cast<std::uint32_t>(cols), box_rows, 1};
  view.swizzle_bytes = static_cast<int>(cols);
  return view;
}

}  // namespace

MqaLogitsLayout mqa_logits_layout(std::int64_t seq_len, std::int64_t seq_len_kv, int num_heads, int max_seqlen_k,
                                  DType logits_dtype) {
  TILEGEMM_REQUIRE(seq_len >= 0, "seq_len", "a row count >= 0", fmt::format("{}", seq_len));
  TILEGEMM_REQUIRE(seq_len_kv >= 0, "seq_len_kv", "a token count >= 0", fmt::format("{}", seq_len_kv));
  TILEGEMM_REQUIRE(num_heads == 32 || num_heads == 64, "num_heads", "32 or 64 heads (SM90)",
                   fmt::format("{}", num_heads));
  TILEGEMM_REQUIRE(max_seqlen_k >= 0, "max_seqlen_k", "0 (full rows) or the compressed width > 0",
                   fmt::format("{}", max_seqlen_k));
  TILEGEMM_REQUIRE(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16, "logits_dtype", "fp32 or bf16",
                   std::string(dtype_name(logits_dtype)));
  const std::int64_t align_elems = kMqaLogitsRowAlignBytes / (dtype_bits(logits_dtype) / 8);
  MqaLogitsLayout layout;
  layout.rows = mqa_round_up(seq_len, mqa_logits::block_q(num_heads));
  if (max_seqlen_k == 0) {
    layout.row_stride = mqa_round_up(seq_len_kv + mqa_logits::kBlockKv, align_elems);
    layout.cols = seq_len_kv;
  } else {
    layout.row_stride = mqa_round_up(mqa_round_up(max_seqlen_k, mqa_logits::kBlockKv), align_elems);
    layout.cols = max_seqlen_k;
  }
  return layout;
}

void fp8_mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_scales, const TensorView& weights,
                    const TensorView& cu_seq_len_k_start, const TensorView& cu_seq_len_k_end, const TensorView& logits,
                    bool clean_logits, int max_seqlen_k, const GemmOptions& options) {
  // q e4m3 [seq_len, H, D]
  require_tensor(q, "q", 3, DType::kFloat8E4M3);
  const std::int64_t seq_len = q.size(0), heads = q.size(1), head_dim = q.size(2);
  TILEGEMM_REQUIRE(heads == 32 || heads == 64, "q", "32 or 64 heads (q [seq_len, H, D] on SM90)", shape_str(q));
  TILEGEMM_REQUIRE(head_dim == 32 || head_dim == 64 || head_dim == 128, "q",
                   "a head dim of 32, 64 or 128 (q [seq_len, H, D])", shape_str(q));
  require_mqa_contiguous(q, "q", "[seq_len, H, D]");
  // kv e4m3 [seq_len_kv, D], kv_scales fp32 [seq_len_kv]
  require_tensor(kv, "kv", 2, DType::kFloat8E4M3);
  const std::int64_t seq_len_kv = kv.size(0);
  TILEGEMM_REQUIRE(kv.size(1) == head_dim, "kv", fmt::format("an e4m3 tensor [seq_len_kv, {}] (D as q's)", head_dim),
                   shape_str(kv));
  require_mqa_contiguous(kv, "kv", "[seq_len_kv, D]");
  require_tensor(kv_scales, "kv_scales", 1, DType::kFloat32);
  TILEGEMM_REQUIRE(kv_scales.size(0) == seq_len_kv, "kv_scales",
                   fmt::format("an fp32 tensor [{}] (one scale per kv token)", seq_len_kv), shape_str(kv_scales));
  require_mqa_contiguous(kv_scales, "kv_scales", "[seq_len_kv]");
  // weights fp32 [seq_len, H], H contiguous
  require_tensor(weights, "weights", 2, DType::kFloat32);
  TILEGEMM_REQUIRE(weights.size(0) == seq_len && weights.size(1) == heads, "weights",
                   fmt::format("an fp32 tensor [{}, {}] (seq_len, H)", seq_len, heads), shape_str(weights));
  TILEGEMM_REQUIRE(weights.stride(1) == 1 && weights.stride(0) >= 0, "weights",
                   "H contiguous (stride 1) and a row stride >= 0", describe(weights));
  // cu_seq_len_k_start / _end int32 [seq_len]
  for (const auto& [v, name] :
       {std::pair{&cu_seq_len_k_start, "cu_seq_len_k_start"}, std::pair{&cu_seq_len_k_end, "cu_seq_len_k_end"}}) {
    require_tensor(*v, name, 1, DType::kInt32);
    TILEGEMM_REQUIRE(v->size(0) == seq_len, name, fmt::format("an int32 tensor [{}] (seq_len)", seq_len),
                     shape_str(*v));
    require_mqa_contiguous(*v, name, "[seq_len]");
  }
  // The mode, then logits [seq_len, width], fp32 or bf16, width contiguous.
  TILEGEMM_REQUIRE(max_seqlen_k >= 0, "max_seqlen_k", "0 (full rows) or the compressed width > 0",
                   fmt::format("{}", max_seqlen_k));
  TILEGEMM_REQUIRE(!(clean_logits && max_seqlen_k > 0), "clean_logits",
                   "false with compressed logits (max_seqlen_k > 0)",
                   fmt::format("true with max_seqlen_k = {}", max_seqlen_k));
  require_ndim(logits, "logits", 2);
  TILEGEMM_REQUIRE(logits.dtype == DType::kFloat32 || logits.dtype == DType::kBFloat16, "logits", "fp32 or bf16",
                   std::string(dtype_name(logits.dtype)));
  const std::int64_t width = max_seqlen_k > 0 ? max_seqlen_k : seq_len_kv;
  TILEGEMM_REQUIRE(logits.size(0) == seq_len && logits.size(1) == width, "logits",
                   max_seqlen_k > 0 ? fmt::format("[{}, {}] (seq_len, max_seqlen_k)", seq_len, width)
                                    : fmt::format("[{}, {}] (seq_len, seq_len_kv)", seq_len, width),
                   shape_str(logits));
  TILEGEMM_REQUIRE((width <= 1 || logits.stride(1) == 1) && (seq_len <= 1 || logits.stride(0) >= width), "logits",
                   "its width contiguous (stride 1) and rows that do not overlap (row stride >= width)",
                   describe(logits));
  // The kernels' int arithmetic: q rows (seq_len · H) and tokens past the last KV block.
  require_int_size(seq_len * heads, "q");
  require_int_size(seq_len_kv + 2 * mqa_logits::kBlockKv, "kv");
  if (seq_len > 0) require_mqa_tma_base(q, "q");
  if (seq_len_kv > 0) require_mqa_tma_base(kv, "kv"), require_mqa_tma_base(kv_scales, "kv_scales");
  if (seq_len == 0 || seq_len_kv == 0 || width == 0) return;

  const DeviceContext& ctx = current_device_context();
  const int num_sms = options.num_sms > 0 && options.num_sms < ctx.hw.num_sms ? options.num_sms : ctx.hw.num_sms;
  const MqaLogitsConfig config =
      select_mqa_logits_config(static_cast<int>(seq_len), static_cast<int>(seq_len_kv), static_cast<int>(heads),
                               static_cast<int>(head_dim), max_seqlen_k, logits.dtype, clean_logits, ctx.hw, num_sms);
  api::print_config_once([&] { return format_mqa_logits_config(config); });

  MqaLogitsParams params{};
  params.tma_q = kernels::encode_tma(mqa_fp8_rows_view(q.data, seq_len * heads, head_dim, mqa_logits::kBlockQH), "q");
  params.tma_kv = kernels::encode_tma(mqa_fp8_rows_view(kv.data, seq_len_kv, head_dim, mqa_logits::kBlockKv), "kv");
  kernels::TmaView scales;
  scales.base = kv_scales.data;
  scales.dtype = DType::kFloat32;
  scales.dims = {static_cast<std::uint64_t>(seq_len_kv), 1, 1};
  // One row: its stride is never stepped along, any multiple of 16 bytes describes it.
  const auto scale_row_bytes = static_cast<std::uint64_t>(mqa_round_up(seq_len_kv * 4, 16));
  scales.byte_strides = {scale_row_bytes, scale_row_bytes};
  scales.box = {mqa_logits::kBlockKv, 1, 1};
  scales.swizzle_bytes = 0;
  params.tma_kv_scales = kernels::encode_tma(scales, "kv_scales");
  params.weights = static_cast<const float*>(weights.data);
  params.weights_stride = weights.stride(0);
  params.ks = static_cast<const int*>(cu_seq_len_k_start.data);
  params.ke = static_cast<const int*>(cu_seq_len_k_end.data);
  params.logits = logits.data;
  params.logits_stride = logits.stride(0);
  params.seq_len = static_cast<int>(seq_len);
  params.seq_len_kv = static_cast<int>(seq_len_kv);
  params.max_seqlen_k = max_seqlen_k;
  kernels::launch_sm90_fp8_mqa_logits(config, params, options.stream);

  if (clean_logits) {
    CleanLogitsParams clean{};
    clean.logits = logits.data;
    clean.logits_stride = logits.stride(0);
    clean.ks = params.ks;
    clean.ke = params.ke;
    clean.rows = static_cast<int>(seq_len);
    clean.cols = static_cast<int>(seq_len_kv);
    clean.next_n = 1;
    kernels::launch_sm90_clean_logits(logits.dtype == DType::kBFloat16, config.clean_grid, clean, options.stream);
  }
}

}  // namespace tilegemm
