// One-line, grep-friendly renderings of a problem and of its kernel configuration. DG_PRINT_CONFIGS, the
// `tilegemm plan` command and the JIT's kernel names all print these, so keep them stable and compact.
#include "tilegemm/gemm_config.hpp"

#include <fmt/format.h>

namespace tilegemm {

namespace {
std::string_view multicast_name(MulticastSide side) {
  switch (side) {
    case MulticastSide::kNone:
      return "none";
    case MulticastSide::kB:
      return "B";
  }
  return "unknown";
}
// "nt" means A K-major and B K-major (D = A·Bᵀ with both operands row-major), as in DeepGEMM's names.
std::string layout_name(Major a, Major b) {
  std::string s;
  s += a == Major::kKMajor ? 'n' : 't';
  s += b == Major::kKMajor ? 't' : 'n';
  return s;
}
}  // namespace

std::string to_string(const GemmDesc& desc) {
  std::string s = fmt::format("{} m={} n={} k={}", gemm_type_name(desc.type), desc.m, desc.n, desc.k);
  if (desc.type != GemmType::kNormal || desc.num_groups != 1) s += fmt::format(" groups={}", desc.num_groups);
  if (desc.use_psum_layout) s += " psum";
  if (desc.expected_m != 0) s += fmt::format(" expected_m={}", desc.expected_m);
  s += fmt::format(" layout={} a={} b={} d={}", layout_name(desc.major_a, desc.major_b), dtype_name(desc.a_dtype),
                   dtype_name(desc.b_dtype), dtype_name(desc.d_dtype));
  if (desc.with_c) s += " with_c";
  if (desc.head_splits.any())
    s += fmt::format(" head_splits={}/{}/{}", desc.head_splits.left, desc.head_splits.mid, desc.head_splits.right);
  if (desc.d_transposed) s += " d_transposed";
  return s;
}

std::string to_string(const GemmConfig& config) {
  std::string s =
      fmt::format("block={}x{}x{} stages={} math_wg={} threads={} cluster={}x{} multicast={}", config.block_m,
                  config.block_n, config.block_k, config.stages, config.num_math_warpgroups, config.num_threads(),
                  config.cluster_m, config.cluster_n, multicast_name(config.multicast));
  s += fmt::format(" swizzle={}/{}/{} sms={} raster={} split_k={} smem={}", config.swizzle_a_bytes,
                   config.swizzle_b_bytes, config.swizzle_d_bytes, config.num_sms, config.raster_group, config.split_k,
                   config.smem_bytes);
  if (config.swap_ab) s += " swap_ab";
  return s;
}

}  // namespace tilegemm
