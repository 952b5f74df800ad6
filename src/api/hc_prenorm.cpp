// tf32_hc_prenorm_gemm: validate → HcPrenormConfig (the split) → tensor maps and workspace → one launch.
#include "tilegemm/hc_prenorm.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/device_context.hpp"
#include "api/print_config.hpp"
#include "api/validate.hpp"
#include "kernels/sm90_hc_prenorm.hpp"
#include "kernels/split_workspace.hpp"
#include "kernels/tma_descriptor.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

using api::require_int_size;
using api::require_tensor;
using api::shape_str;

// A and B, read through TMA along K.
void require_k_major_tma(const TensorView& v, const char* name) {
  TILEGEMM_REQUIRE(v.stride(1) == 1, name, "a K-major tensor (stride 1 along K)", describe(v));
  api::require_tma_tensor(v, name);
}

// D [M, N] or [S, M, N] and sqr_sum [M] or [S, M], fp32; D's N and sqr_sum's M contiguous.
void require_outputs(const TensorView& d, const TensorView& sqr_sum, std::int64_t m, std::int64_t n,
                     std::optional<int> splits) {
  const int d_dims = splits ? 3 : 2;
  require_tensor(d, "d", d_dims, DType::kFloat32);
  require_tensor(sqr_sum, "sqr_sum", d_dims - 1, DType::kFloat32);
  const std::string d_want =
      splits ? fmt::format("[{}, {}, {}] (num_splits, M, N)", *splits, m, n) : fmt::format("[{}, {}] (M, N)", m, n);
  TILEGEMM_REQUIRE(d.size(-2) == m && d.size(-1) == n && (!splits || d.size(0) == *splits), "d",
                   "an fp32 tensor " + d_want, shape_str(d));
  TILEGEMM_REQUIRE(d.size(-1) <= 1 || d.stride(-1) == 1, "d", "N contiguous (stride 1 along N)", describe(d));
  const std::string s_want = splits ? fmt::format("[{}, {}] (num_splits, M)", *splits, m) : fmt::format("[{}] (M)", m);
  TILEGEMM_REQUIRE(sqr_sum.size(-1) == m && (!splits || sqr_sum.size(0) == *splits), "sqr_sum",
                   "an fp32 tensor " + s_want, shape_str(sqr_sum));
  const bool contiguous = (m <= 1 || sqr_sum.stride(-1) == 1) && (!splits || *splits <= 1 || sqr_sum.stride(0) == m);
  TILEGEMM_REQUIRE(contiguous, "sqr_sum", "a contiguous tensor", describe(sqr_sum));
  for (int i = 0; i < d.ndim; ++i) TILEGEMM_REQUIRE(d.strides[i] >= 0, "d", "non-negative strides", describe(d));
}

// The configuration of a call on this device with `num_sms` SMs. Choosing one runs the split model over every (row
// block, split) pair, about a microsecond of host time, so each is chosen once per process and kept, as the GEMMs'
// ConfigSelector keeps theirs; the first choice prints with DG_PRINT_CONFIGS.
const HcPrenormConfig& config_for(int m, int n, int k, std::optional<int> num_splits, const DeviceContext& ctx,
                                  int num_sms) {
  // device, m, n, k, the caller's splits (0: none), SMs, and the settings' generation (TILEGEMM_CONFIG_FILTER pins)
  using Key = std::tuple<int, int, int, int, int, int, unsigned>;
  static std::mutex mutex;
  static std::map<Key, HcPrenormConfig> kept;  // node-based: references stay valid as it grows
  const Key key{ctx.device, m, n, k, num_splits.value_or(0), num_sms, env().generation};
  {
    std::lock_guard lock(mutex);
    if (const auto it = kept.find(key); it != kept.end()) return it->second;
  }
  const HcPrenormConfig config = select_hc_prenorm_config(m, n, k, num_splits, ctx.hw, num_sms);
  api::print_config_once([&] { return format_hc_prenorm_config(config); });
  std::lock_guard lock(mutex);
  return kept.emplace(key, config).first->second;
}

}  // namespace

std::vector<jit::KernelSpec> hc_prenorm_kernel_specs(const std::vector<int>& ms, int n, int k,
                                                     std::optional<int> num_splits, const HardwareModel& hw,
                                                     int num_sms) {
  std::vector<jit::KernelSpec> specs;
  std::set<std::string> seen;
  for (const int m : ms) {
    TILEGEMM_REQUIRE(m >= 0, "m", "a row count >= 0", fmt::format("{}", m));
    if (m == 0) continue;  // the call returns before choosing a kernel
    const HcPrenormConfig config = select_hc_prenorm_config(m, n, k, num_splits, hw, sms_used(num_sms, hw));
    jit::KernelSpec spec = kernels::sm90_hc_prenorm_spec(config);
    if (seen.insert(spec.name).second) specs.push_back(std::move(spec));
  }
  return specs;
}

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          std::optional<int> num_splits, const GemmOptions& options) {
  require_tensor(a, "a", 2, DType::kBFloat16);
  require_tensor(b, "b", 2, DType::kFloat32);
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  TILEGEMM_REQUIRE(b.size(1) == k, "b", fmt::format("an fp32 tensor [N, {}] (K as a's)", k), shape_str(b));
  TILEGEMM_REQUIRE(n >= 8 && n <= 32 && n % 8 == 0, "b", "8, 16, 24 or 32 rows (N)", shape_str(b));
  TILEGEMM_REQUIRE(k > 0, "a", "K > 0", shape_str(a));
  require_int_size(m, "a"), require_int_size(k, "a");
  if (num_splits)
    TILEGEMM_REQUIRE(*num_splits >= 1, "num_splits", "a split count >= 1 (None: chosen by the library)",
                     fmt::format("{}", *num_splits));
  require_outputs(d, sqr_sum, m, n, num_splits);
  require_int_size(d.stride(-2), "d");
  require_k_major_tma(a, "a");
  require_k_major_tma(b, "b");
  if (m == 0) return;

  const DeviceContext& ctx = current_device_context();
  const int num_sms = sms_used(options.num_sms, ctx.hw);
  const HcPrenormConfig& config =
      config_for(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), num_splits, ctx, num_sms);

  HcPrenormParams params{};
  // Boxes of [block_m rows][64 bf16] of A and [N rows][32 fp32] of B: one 128-byte swizzle atom wide each.
  params.tma_a = kernels::encode_tma(
      kernels::operand_view(kernels::as_3d(a), Major::kKMajor, config.block_m, hc_prenorm::kABoxK), "a");
  params.tma_b = kernels::encode_tma(
      kernels::operand_view(kernels::as_3d(b), Major::kKMajor, static_cast<int>(n), hc_prenorm::kSliceK), "b");
  params.d = static_cast<float*>(d.data);
  params.sqr_sum = static_cast<float*>(sqr_sum.data);
  params.d_split_stride = num_splits ? d.stride(0) : 0;
  params.sqr_split_stride = num_splits ? sqr_sum.stride(0) : 0;
  params.ldd = static_cast<int>(d.stride(-2));
  params.m = static_cast<int>(m);
  params.k_blocks = static_cast<int>((k + hc_prenorm::kBlockK - 1) / hc_prenorm::kBlockK);
  params.num_splits = config.num_splits;
  if (config.reduce_in_kernel && config.num_splits > config.cluster) {
    // [row blocks][cluster] counters in the zeroed split workspace (the kernel sets them back to zero), and the
    // clusters' sums [row blocks][clusters][block_m][N + 1] in the stream's scratch: every cluster writes its own
    // before any is read, so they need no zeroing, before or after.
    const std::size_t row_blocks = static_cast<std::size_t>(config.grid / config.num_splits);
    const std::size_t clusters = static_cast<std::size_t>(config.num_splits / config.cluster);
    const std::size_t partial_bytes = row_blocks * clusters * static_cast<std::size_t>(config.block_m) *
                                      static_cast<std::size_t>(n + 1) * sizeof(float);
    params.counters = static_cast<int*>(
        kernels::split_workspace(row_blocks * static_cast<std::size_t>(config.cluster) * sizeof(int), options.stream));
    params.partials = static_cast<float*>(kernels::stream_scratch(partial_bytes, options.stream));
  }
  kernels::launch_sm90_hc_prenorm(config, params, options.stream);
}

}  // namespace tilegemm
