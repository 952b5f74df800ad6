// fp8_paged_mqa_logits and its metadata: validate → PagedMqaLogitsConfig → tensor maps → one launch.
#include "tilegemm/paged_mqa_logits.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/print_config.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_paged_mqa_logits.hpp"
#include "kernels/tma_descriptor.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

using api::require_int_size;
using api::require_tensor;
using api::shape_str;

// Row-major with no gaps (torch's is_contiguous: the strides of dimensions of extent 1 do not matter).
bool paged_is_dense(const TensorView& v) {
  if (v.numel() == 0) return true;
  std::int64_t expected = 1;
  for (int i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

void paged_require_dense(const TensorView& v, const char* name) {
  TILEGEMM_REQUIRE(paged_is_dense(v), name, "a contiguous tensor", describe(v));
}

void paged_require_aligned16(const TensorView& v, const char* name) {
  const auto address = reinterpret_cast<std::uintptr_t>(v.data);
  TILEGEMM_REQUIRE(address % 16 == 0, name, "a 16-byte aligned address (the kernel reads it through TMA)",
                   fmt::format("{:#x}", address));
}

void paged_require_shape(const TensorView& v, const char* name, const std::string& want, bool ok) {
  TILEGEMM_REQUIRE(ok, name, want, shape_str(v));
}

kernels::TmaView paged_tma_view(void* base, DType dtype, std::uint64_t inner, std::uint64_t rows,
                                std::uint64_t row_bytes, std::uint32_t box_inner, std::uint32_t box_rows,
                                int swizzle_bytes) {
  kernels::TmaView view;
  view.base = base;
  view.dtype = dtype;
  view.dims = {inner, rows, 1};
  view.byte_strides = {row_bytes, row_bytes * rows};
  view.box = {box_inner, box_rows, 1};
  view.swizzle_bytes = swizzle_bytes;
  return view;
}

// context_lens int32 [B, next_n], contiguous (checked by both entry points).
void paged_require_context_lens(const TensorView& context_lens) {
  require_tensor(context_lens, "context_lens", 2, DType::kInt32);
  paged_require_dense(context_lens, "context_lens");
  require_int_size(context_lens.numel(), "context_lens");
}

// schedule int32 [partitions + 1, 2], contiguous.
void paged_require_schedule(const TensorView& schedule) {
  require_tensor(schedule, "schedule_meta", 2, DType::kInt32);
  paged_require_shape(schedule, "schedule_meta", "int32 [partitions + 1, 2] with at least one partition",
                      schedule.size(0) >= 2 && schedule.size(1) == 2);
  paged_require_dense(schedule, "schedule_meta");
  require_int_size(schedule.size(0), "schedule_meta");
}

}  // namespace

std::int64_t paged_mqa_logits_row_stride(std::int64_t max_context_len, DType logits_dtype) {
  TILEGEMM_REQUIRE(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16, "logits_dtype", "fp32 or bf16",
                   std::string(dtype_name(logits_dtype)));
  TILEGEMM_REQUIRE(max_context_len >= 0, "max_context_len", "a length >= 0", fmt::format("{}", max_context_len));
  const std::int64_t per_kilobyte = 1024 / (dtype_bits(logits_dtype) / 8);
  const auto align = [](std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; };
  return align(align(max_context_len, 256), per_kilobyte);
}

void paged_mqa_logits_metadata(const TensorView& context_lens, int block_kv, const TensorView& schedule,
                               const GemmOptions& options) {
  paged_require_context_lens(context_lens);
  TILEGEMM_REQUIRE(context_lens.size(1) >= 1, "context_lens", "int32 [B, next_n] with next_n >= 1",
                   shape_str(context_lens));
  TILEGEMM_REQUIRE(block_kv == paged_mqa::kBlockKv, "block_kv", "64 (the SM90 kernel's KV block)",
                   fmt::format("{}", block_kv));
  paged_require_schedule(schedule);

  PagedMqaMetadataParams params{};
  params.context_lens = static_cast<const int*>(context_lens.data);
  params.schedule = static_cast<int*>(schedule.data);
  params.batch = static_cast<int>(context_lens.size(0));
  params.next_n = static_cast<int>(context_lens.size(1));
  params.partitions = static_cast<int>(schedule.size(0) - 1);
  kernels::launch_sm90_paged_mqa_logits_metadata(params, options.stream);
}

void fp8_paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                          const TensorView& context_lens, const TensorView& block_table, const TensorView& schedule,
                          const TensorView& logits, bool clean_logits, const GemmOptions& options) {
  using paged_mqa::kBlockKv;
  using paged_mqa::kHeadDim;
  // q fp8 [B, next_n, H, 128], contiguous.
  require_tensor(q, "q", 4, DType::kFloat8E4M3);
  const std::int64_t batch = q.size(0), next_n = q.size(1), heads = q.size(2);
  paged_require_shape(q, "q", "fp8 [B, next_n, H, 128] with next_n 1 or 2 and H 32 or 64 (SM90)",
                      (next_n == 1 || next_n == 2) && (heads == 32 || heads == 64) && q.size(3) == kHeadDim);
  paged_require_dense(q, "q");
  require_int_size(batch * next_n * heads, "q");
  // The fused cache: [blocks, 64, 1, 132] bytes, blocks stride(0) bytes apart, token rows 132 bytes apart.
  require_tensor(kv_cache, "kv_cache", 4, DType::kInt8);
  const std::int64_t num_blocks = kv_cache.size(0), block_bytes = kv_cache.stride(0);
  paged_require_shape(
      kv_cache, "kv_cache", "[num_blocks >= 1, 64, 1, 132] bytes (block_kv 64, 128 fp8 values + an fp32 scale)",
      num_blocks >= 1 && kv_cache.size(1) == kBlockKv && kv_cache.size(2) == 1 && kv_cache.size(3) == kHeadDim + 4);
  TILEGEMM_REQUIRE(kv_cache.stride(3) == 1 && kv_cache.stride(1) == kHeadDim + 4, "kv_cache",
                   "token rows of 132 contiguous bytes (stride(1) = 132, stride(3) = 1)", describe(kv_cache));
  TILEGEMM_REQUIRE(block_bytes >= kBlockKv * (kHeadDim + 4) && block_bytes % 16 == 0, "kv_cache",
                   "blocks at least 8448 bytes apart, a multiple of 16 (TMA)",
                   fmt::format("stride(0) = {} bytes", block_bytes));
  require_int_size(num_blocks, "kv_cache");
  // weights fp32 [B·next_n, H], contiguous.
  require_tensor(weights, "weights", 2, DType::kFloat32);
  paged_require_shape(weights, "weights", fmt::format("fp32 [{}, {}] (B·next_n, H)", batch * next_n, heads),
                      weights.size(0) == batch * next_n && weights.size(1) == heads);
  paged_require_dense(weights, "weights");
  // context_lens int32 [B, next_n], contiguous.
  paged_require_context_lens(context_lens);
  paged_require_shape(context_lens, "context_lens", fmt::format("int32 [{}, {}] (B, next_n)", batch, next_n),
                      context_lens.size(0) == batch && context_lens.size(1) == next_n);
  // block_table int32 [B, max_blocks], blocks of a row contiguous.
  require_tensor(block_table, "block_table", 2, DType::kInt32);
  paged_require_shape(block_table, "block_table", fmt::format("int32 [{}, max_blocks] (B rows)", batch),
                      block_table.size(0) == batch);
  TILEGEMM_REQUIRE((block_table.size(1) <= 1 || block_table.stride(1) == 1) && block_table.stride(0) >= 0,
                   "block_table", "contiguous rows (stride(1) = 1) and a row stride >= 0", describe(block_table));
  require_int_size(block_table.size(1), "block_table");
  paged_require_schedule(schedule);
  // logits fp32 or bf16 [B·next_n, max_context_len], columns contiguous, rows that do not overlap.
  TILEGEMM_REQUIRE(logits.dtype == DType::kFloat32 || logits.dtype == DType::kBFloat16, "logits", "fp32 or bf16",
                   std::string(dtype_name(logits.dtype)));
  api::require_ndim(logits, "logits", 2);
  const std::int64_t n_cols = logits.size(1);
  paged_require_shape(logits, "logits", fmt::format("[{}, max_context_len] (B·next_n rows)", batch * next_n),
                      logits.size(0) == batch * next_n);
  require_int_size(n_cols, "logits");
  TILEGEMM_REQUIRE((n_cols <= 1 || logits.stride(1) == 1) && (logits.size(0) <= 1 || logits.stride(0) >= n_cols),
                   "logits", "contiguous columns and rows at least max_context_len apart", describe(logits));
  const auto logits_address = reinterpret_cast<std::uintptr_t>(logits.data);
  TILEGEMM_REQUIRE(logits_address % static_cast<std::uintptr_t>(dtype_bits(logits.dtype) / 8) == 0, "logits",
                   "an address aligned to its element size", fmt::format("{:#x}", logits_address));
  TILEGEMM_REQUIRE(!clean_logits, "clean_logits",
                   "false (with 2-D context_lens the columns past each row's blocks are left unwritten, as DeepGEMM "
                   "2.6.1 requires)",
                   "true");
  if (batch == 0 || n_cols == 0) return;
  paged_require_aligned16(q, "q");
  paged_require_aligned16(kv_cache, "kv_cache");
  paged_require_aligned16(weights, "weights");

  const DeviceContext& ctx = current_device_context();
  const PagedMqaLogitsConfig config = select_paged_mqa_logits_config(
      static_cast<int>(next_n), static_cast<int>(heads), logits.dtype, static_cast<int>(schedule.size(0) - 1), ctx.hw);
  api::print_config_once([&] { return format_paged_mqa_logits_config(config); });

  const auto rows = static_cast<std::uint64_t>(batch * next_n);
  const auto n = static_cast<std::uint32_t>(next_n * heads);
  PagedMqaLogitsParams params{};
  params.tma_q = kernels::encode_tma(
      paged_tma_view(q.data, DType::kFloat8E4M3, kHeadDim, rows * heads, kHeadDim, kHeadDim, n, 128), "q");
  params.tma_kv = kernels::encode_tma(
      [&] {
        kernels::TmaView view;
        view.base = kv_cache.data;
        view.dtype = DType::kInt8;
        view.dims = {kHeadDim, kBlockKv, static_cast<std::uint64_t>(num_blocks)};
        view.byte_strides = {kHeadDim, static_cast<std::uint64_t>(block_bytes)};
        view.box = {kHeadDim, kBlockKv, 1};
        view.swizzle_bytes = 128;
        return view;
      }(),
      "kv_cache");
  params.tma_kv_scales = kernels::encode_tma(
      paged_tma_view(static_cast<char*>(kv_cache.data) + paged_mqa::kKvBytes, DType::kFloat32, kBlockKv,
                     static_cast<std::uint64_t>(num_blocks), static_cast<std::uint64_t>(block_bytes), kBlockKv, 1, 0),
      "kv_cache (scales)");
  params.tma_weights =
      kernels::encode_tma(paged_tma_view(weights.data, DType::kFloat32, static_cast<std::uint64_t>(heads), rows,
                                         static_cast<std::uint64_t>(heads) * 4, static_cast<std::uint32_t>(heads),
                                         static_cast<std::uint32_t>(next_n), 0),
                          "weights");
  params.context_lens = static_cast<const int*>(context_lens.data);
  params.block_table = static_cast<const int*>(block_table.data);
  params.schedule = static_cast<const int*>(schedule.data);
  params.logits = logits.data;
  params.ld_logits = logits.size(0) > 1 ? logits.stride(0) : n_cols;
  params.block_table_stride = block_table.stride(0);
  params.batch = static_cast<int>(batch);
  params.table_cols = static_cast<int>(block_table.size(1));
  params.n_cols = static_cast<int>(n_cols);
  kernels::launch_sm90_paged_mqa_logits(config, params, options.stream);
}

}  // namespace tilegemm
