#include "heuristics/sm90_tile_rules.hpp"

#include <fmt/format.h>

namespace tilegemm {

std::string sm90_tile_shape_problem(const GemmDesc& desc, const GemmConfig& c) {
  const bool shape_ok = (c.block_m == 64 && c.num_math_warpgroups == 1) ||
                        (c.block_m == 128 && (c.num_math_warpgroups == 1 || c.num_math_warpgroups == 2)) ||
                        (c.block_m == 256 && c.num_math_warpgroups == 2);
  if (!shape_ok)
    return fmt::format("(block_m, math warpgroups) = ({}, {}) not in {{(64,1), (128,1), (128,2), (256,2)}}", c.block_m,
                       c.num_math_warpgroups);
  if (desc.type == GemmType::kMGroupedContiguous && c.block_m > 128)
    return fmt::format("block_m {} > 128: contiguous groups are aligned to 128 rows, a tile must not straddle two "
                       "groups", c.block_m);
  if (c.block_n < 16 || c.block_n > 256 || c.block_n % 16 != 0)
    return fmt::format("block_n {} is not a multiple of 16 in [16, 256]", c.block_n);
  return {};
}

std::string sm90_resource_problem(const GemmConfig& c, int smem, const std::string& smem_detail,
                                  const HardwareModel& hw) {
  constexpr int kMinStages = 2, kMaxStages = 16;  // the kernels take any ring depth; shared memory bounds it
  if (c.stages < kMinStages || c.stages > kMaxStages)
    return fmt::format("stages {} not in [{}, {}]", c.stages, kMinStages, kMaxStages);
  if (smem > hw.smem_per_block_bytes)
    return fmt::format("shared memory {} B ({}) > {} B per block", smem, smem_detail, hw.smem_per_block_bytes);
  if (c.smem_bytes != 0 && c.smem_bytes != smem)
    return fmt::format("config.smem_bytes {} != the {} B the kernel needs", c.smem_bytes, smem);
  if (c.num_sms < 1 || c.num_sms > hw.num_sms) return fmt::format("num_sms {} not in [1, {}]", c.num_sms, hw.num_sms);
  if (c.raster_group < 1) return fmt::format("raster_group {} < 1", c.raster_group);
  return {};
}

}  // namespace tilegemm
