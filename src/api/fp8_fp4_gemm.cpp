// fp8_fp4_gemm_nt on SM90: validate → Fp8Fp4GemmConfig → tensor maps → the decode-in-registers kernel.
#include "tilegemm/fp8_fp4_gemm.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "api/device_context.hpp"
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

// A 2-D tensor of `dtype` and shape [rows, cols] whose rows are contiguous and 16-byte aligned (TMA's rule).
void require_tma_matrix(const TensorView& v, const char* name, DType dtype, std::int64_t rows, std::int64_t cols,
                        const char* what) {
  api::require_tensor(v, name, 2, dtype);
  TILEGEMM_REQUIRE(v.size(0) == rows && v.size(1) == cols, name, fmt::format("[{}, {}] ({})", rows, cols, what),
                   shape_str(v));
  const std::int64_t elem = dtype_bits(dtype) / 8;
  TILEGEMM_REQUIRE(v.stride(1) == 1 && (rows <= 1 || (v.stride(0) >= cols && v.stride(0) * elem % 16 == 0)), name,
                   "contiguous rows whose stride is a multiple of 16 bytes", describe(v));
  TILEGEMM_REQUIRE(reinterpret_cast<std::uintptr_t>(v.data) % 16 == 0, name, "a 16-byte aligned address",
                   fmt::format("{}", v.data));
  require_int_size(v.stride(0), name);
}

}  // namespace

void fp8_fp4_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                     const TensorView& d, const GemmOptions& options) {
  api::require_tensor(a, "a", 2, DType::kFloat8E4M3);
  api::require_tensor(b, "b", 2, DType::kInt8);
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  TILEGEMM_REQUIRE(k % 128 == 0, "a", "K a multiple of 128 (A's 1x128 scale blocks, B's scale rows in TMA)",
                   shape_str(a));
  require_tma_matrix(a, "a", DType::kFloat8E4M3, m, k, "M x K, K contiguous");
  require_tma_matrix(b, "b", DType::kInt8, n, k / 2,
                     fmt::format("N x K/2 = K/2 bytes of two FP4 codes for K={}", k).c_str());
  require_tma_matrix(sfb, "sfb", DType::kFloat32, n, k / 32, "one scale per row and 32 k");
  api::require_tensor(sfa, "sfa", 2, DType::kFloat32);
  TILEGEMM_REQUIRE(sfa.size(0) == m && sfa.size(1) == k / 128, "sfa",
                   fmt::format("[{}, {}] (one scale per token and 128 k)", m, k / 128), shape_str(sfa));
  TILEGEMM_REQUIRE(sfa.stride(0) >= 0 && sfa.stride(1) >= 0, "sfa", "non-negative strides", describe(sfa));
  api::require_ndim(d, "d", 2);
  TILEGEMM_REQUIRE(d.dtype == DType::kBFloat16 || d.dtype == DType::kFloat32, "d", "bf16 or fp32",
                   std::string(dtype_name(d.dtype)));
  TILEGEMM_REQUIRE(d.size(0) == m && d.size(1) == n, "d", fmt::format("[M={}, N={}]", m, n), shape_str(d));
  TILEGEMM_REQUIRE(n <= 1 || d.stride(1) == 1, "d", "N contiguous (stride 1 along N)", describe(d));
  TILEGEMM_REQUIRE(m <= 1 || d.stride(0) >= n, "d", "rows that do not overlap (row stride >= N)", describe(d));
  for (auto [v, name] : {std::pair{m, "m"}, std::pair{n, "n"}, std::pair{k, "k"}}) require_int_size(v, name);
  require_int_size(d.stride(0), "d");
  if (m == 0 || n == 0) return;
  TILEGEMM_REQUIRE(k > 0, "a", "K > 0 (an empty K has no FP4 scale blocks)", shape_str(a));

  const DeviceContext& ctx = current_device_context();
  const Fp8Fp4GemmConfig c = select_fp8_fp4_gemm_config(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                                                        ctx.hw, sms_used(options.num_sms, ctx.hw));
  Fp8Fp4GemmParams p{};
  p.tma_a = kernels::encode_tma(kernels::operand_view(kernels::as_3d(a), Major::kKMajor, c.block_m, 128), "a");
  p.tma_b = kernels::encode_tma(kernels::operand_view(kernels::as_3d(b), Major::kKMajor, fp8_fp4::kBlockN, 128), "b");
  kernels::TmaView sf =
      kernels::operand_view(kernels::as_3d(sfb), Major::kKMajor, fp8_fp4::kBlockN, fp8_fp4::kGroupsPerStage);
  sf.swizzle_bytes = 0;  // [64 rows][8 scales]: 32-byte rows, read unswizzled
  p.tma_sfb = kernels::encode_tma(sf, "sfb");
  p.sfa = static_cast<const float*>(sfa.data);
  p.sfa_stride_m = sfa.stride(0), p.sfa_stride_k = sfa.stride(1);
  p.d = d.data;
  p.ldd = d.stride(0);
  p.m = static_cast<int>(m), p.n = static_cast<int>(n), p.k = static_cast<int>(k);
  p.num_splits = c.num_splits;
  p.m_blocks = (p.m + c.block_m - 1) / c.block_m;
  if (c.num_splits > 1) {
    // [tiles] counters (left at zero by the kernel), then [tiles][splits][64][block_m] partial tiles.
    const std::size_t tiles = static_cast<std::size_t>(c.grid / c.num_splits);
    const std::size_t counter_bytes = (tiles * sizeof(int) + 255) / 256 * 256;
    const std::size_t partial_bytes = static_cast<std::size_t>(c.grid) * fp8_fp4::kBlockN * c.block_m * sizeof(float);
    auto* workspace = static_cast<char*>(kernels::split_workspace(counter_bytes + partial_bytes, options.stream));
    p.counters = reinterpret_cast<int*>(workspace);
    p.partials = reinterpret_cast<float*>(workspace + counter_bytes);
  }
  kernels::launch_sm90_fp8_fp4_gemm(d.dtype, c, p, options.stream);
}

}  // namespace tilegemm
