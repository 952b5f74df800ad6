#include "heuristics/sm90_tile_rules.hpp"

#include <fmt/format.h>

#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
// Split-K slices per tile (TILEGEMM_GEMM_SCHEME accepts the same range), and the most device memory a config
// may claim for fp32 partials (the cost model already charges HBM traffic once they outgrow half the L2).
constexpr int kMaxSplitK = 256;
constexpr std::size_t kMaxSplitWorkspaceBytes = 256u << 20;
}  // namespace

bool sm90_tile_shape_fits(const GemmDesc& desc, const GemmConfig& c, bool two_pass_contiguous, std::string* why) {
  const bool shape_ok = (c.block_m == 64 && c.num_math_warpgroups == 1) ||
                        (c.block_m == 128 && (c.num_math_warpgroups == 1 || c.num_math_warpgroups == 2)) ||
                        (c.block_m == 256 && c.num_math_warpgroups == 2);
  if (!shape_ok)
    return reject(why, [&] {
      return fmt::format("(block_m, math warpgroups) = ({}, {}) not in {{(64,1), (128,1), (128,2), (256,2)}}",
                         c.block_m, c.num_math_warpgroups);
    });
  const bool two_pass_ok = two_pass_contiguous && !desc.use_psum_layout && c.cluster_m * c.cluster_n == 1;
  if (desc.type == GemmType::kMGroupedContiguous && c.block_m > kContiguousGroupRowAlignment && !two_pass_ok)
    return reject(why, [&] {
      return fmt::format(
          "block_m {} > {}: contiguous groups are aligned to {} rows, a tile must not straddle two "
          "groups{}",
          c.block_m, kContiguousGroupRowAlignment, kContiguousGroupRowAlignment,
          two_pass_contiguous ? " (two-pass tiles need the per-row index layout and no cluster)" : "");
    });
  if (c.block_n < 16 || c.block_n > 256 || c.block_n % 8 != 0)
    return reject(why, [&] { return fmt::format("block_n {} is not a multiple of 8 in [16, 256]", c.block_n); });
  return true;
}

bool sm90_resource_fits(const GemmConfig& c, int smem, const std::string& smem_detail, const HardwareModel& hw,
                        std::string* why) {
  constexpr int kMinStages = 2, kMaxStages = 16;  // the kernels take any ring depth; shared memory bounds it
  if (c.stages < kMinStages || c.stages > kMaxStages)
    return reject(why, [&] { return fmt::format("stages {} not in [{}, {}]", c.stages, kMinStages, kMaxStages); });
  if (!sm90_smem_fits(smem, hw))
    return reject(why, [&] {
      return fmt::format("shared memory {} B ({}) > {} B per block", smem, smem_detail, hw.smem_per_block_bytes);
    });
  if (c.smem_bytes != 0 && c.smem_bytes != smem)
    return reject(why,
                  [&] { return fmt::format("config.smem_bytes {} != the {} B the kernel needs", c.smem_bytes, smem); });
  if (c.num_sms < 1 || c.num_sms > hw.num_sms)
    return reject(why, [&] { return fmt::format("num_sms {} not in [1, {}]", c.num_sms, hw.num_sms); });
  if (c.raster_group < 1) return reject(why, [&] { return fmt::format("raster_group {} < 1", c.raster_group); });
  return true;
}

bool sm90_scheme_fits(const GemmDesc& desc, const GemmConfig& c, bool deterministic_stream_k_spills, std::string* why) {
  if (c.scheme == GemmScheme::kSplitK) {
    const long long k_blocks = (desc.k + c.block_k - 1) / c.block_k;
    if (c.split_k < 2 || c.split_k > kMaxSplitK)
      return reject(why, [&] { return fmt::format("split-K with split_k {} not in [2, {}]", c.split_k, kMaxSplitK); });
    if (c.split_k > k_blocks)
      return reject(why, [&] {
        return fmt::format("split_k {} > {} K blocks of {} (a slice would be empty)", c.split_k, k_blocks, c.block_k);
      });
  } else if (c.split_k != 1) {
    return reject(why,
                  [&] { return fmt::format("split_k {} != 1 with the {} scheme", c.split_k, scheme_name(c.scheme)); });
  }
  if (c.scheme == GemmScheme::kDataParallel) return true;
  if (desc.type != GemmType::kNormal && desc.type != GemmType::kBatched && desc.type != GemmType::kBatchReduced)
    return reject(why, [&] {
      return fmt::format("{} cuts dense and batched (and batch-reduced) problems only, not {}", scheme_name(c.scheme),
                         gemm_type_name(desc.type));
    });
  if (c.cluster_m * c.cluster_n != 1)
    return reject(why, [&] {
      return fmt::format("{} runs without clusters (cluster {}x{})", scheme_name(c.scheme), c.cluster_m, c.cluster_n);
    });
  if (c.scheme == GemmScheme::kStreamK && desc.deterministic && deterministic_stream_k_spills)
    return reject(why, [&] {
      return fmt::format("deterministic stream-K with block {}x{} and {} math warpgroups spills registers", c.block_m,
                         c.block_n, c.num_math_warpgroups);
    });
  const SplitWorkspaceLayout ws = sm90_split_workspace(desc, c, c.num_sms);
  if (ws.total_bytes() > kMaxSplitWorkspaceBytes)
    return reject(why, [&] {
      return fmt::format("{} workspace {} B > {} B", scheme_name(c.scheme), ws.total_bytes(), kMaxSplitWorkspaceBytes);
    });
  return true;
}

bool sm90_cluster_fits(const GemmDesc& desc, const GemmConfig& c, const HardwareModel& hw, std::string* why) {
  // What the kernels implement: no cluster, or a 2x1 cluster sharing a K-major B tile.
  const bool cluster_shape_ok = (c.cluster_m == 1 && c.cluster_n == 1 && c.multicast == MulticastSide::kNone) ||
                                (c.cluster_m == 2 && c.cluster_n == 1 && c.multicast == MulticastSide::kB);
  if (!cluster_shape_ok)
    return reject(why, [&] {
      return fmt::format("cluster {}x{} with multicast side {} not in {{1x1 none, 2x1 B}}", c.cluster_m, c.cluster_n,
                         static_cast<int>(c.multicast));
    });
  const int cluster_size = c.cluster_m;
  if (cluster_size == 1) return true;
  if (cluster_size > hw.max_cluster_size)
    return reject(
        why, [&] { return fmt::format("cluster size {} > {} on {}", cluster_size, hw.max_cluster_size, hw.name); });
  if (c.num_sms % 2 != 0)
    return reject(why, [&] { return fmt::format("2-CTA cluster needs an even num_sms, got {}", c.num_sms); });
  // Grouped problems pair m-blocks inside the scheduler (an odd block is walked inactive); for dense and
  // batched ones an odd count would waste a whole block per pair column.
  const bool grouped_pairs = desc.type == GemmType::kMGroupedContiguous || desc.type == GemmType::kMGroupedMasked;
  const long long m_blocks = (desc.m + c.block_m - 1) / c.block_m;
  if (m_blocks % 2 != 0 && !grouped_pairs)
    return reject(why,
                  [&] { return fmt::format("2-CTA cluster along M needs an even block count, got {}", m_blocks); });
  if (desc.use_psum_layout) return reject(why, "2-CTA clusters do not pair m-blocks of the prefix-sum grouped layout");
  if (desc.type == GemmType::kKGroupedContiguous)
    return reject(why, "2x1 clusters pair m-blocks of dense, batched and M-grouped problems, not K-grouped ones");
  if (desc.major_b != Major::kKMajor) return reject(why, "B multicast splits a K-major B tile; B is MN-major");
  if (c.block_n % 16 != 0)
    return reject(why, [&] {
      return fmt::format(
          "B multicast splits the B tile into two halves of whole 8-row swizzle atoms; block_n {} is "
          "not a multiple of 16",
          c.block_n);
    });
  return true;
}

}  // namespace tilegemm
