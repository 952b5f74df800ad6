#pragma once
// Tile-shape rules the SM90 BF16 and FP8 kernels share (one consumer warpgroup owns 64 or 128 rows, tiles of
// contiguous groups stay inside one 128-row group, block_n a multiple of 8: one wgmma
// accumulator column group).
// Each rule returns true when the config passes; on false it sets *why (if given) to the reason. The selector's
// search passes why = nullptr, so no reason is formatted there.
#include <concepts>
#include <string>
#include <utility>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

// Shared memory both kernels reserve besides their stages: barriers and the 1024-byte alignment of 128B-swizzled
// TMA destinations.
inline constexpr int kSmemReserveBytes = 1024;

// Returns false and, when why is given, sets *why to the reason `format()` builds (only then is it built).
template <std::invocable Format>
bool reject(std::string* why, Format&& format) {
  if (why) *why = std::forward<Format>(format)();
  return false;
}
inline bool reject(std::string* why, const char* reason) {
  if (why) *why = reason;
  return false;
}

// Whether (block_m, math warpgroups, block_n) is a shape both kernels implement for `desc`.
// two_pass_contiguous: the kernel runs 256-row tiles of per-row contiguous problems whose halves straddle two
// groups in two passes (the FP8 1D2D kernel, without clusters); otherwise contiguous tiles are <= 128 rows.
bool sm90_tile_shape_fits(const GemmDesc& desc, const GemmConfig& config, bool two_pass_contiguous, std::string* why);

// Whether `smem` bytes fit one block. The kernels' shared memory grows with the stages, so once it does not fit
// no deeper ring does (the selector stops there).
inline bool sm90_smem_fits(int smem, const HardwareModel& hw) {
  return smem <= hw.smem_per_block_bytes;
}

// Whether the ring depth, the `smem` bytes the kernel needs for `config`, the SM count and the raster group fit
// `hw` (and config.smem_bytes, if set, equals smem). `smem_detail` explains the total in the reason (needed only when
// why is given and sm90_smem_fits fails).
bool sm90_resource_fits(const GemmConfig& config, int smem, const std::string& smem_detail, const HardwareModel& hw,
                        std::string* why);

// Whether the split-K / stream-K scheme of `config` is one both kernels run for `desc` (slice count, problem
// type, no cluster, workspace size). `deterministic_stream_k_spills`: the family's fix-up would
// spill registers in deterministic stream-K with this tile (measured per family with ptxas).
bool sm90_scheme_fits(const GemmDesc& desc, const GemmConfig& config, bool deterministic_stream_k_spills,
                      std::string* why);

// Whether the cluster shape of `config` is one both kernels implement for `desc` (1x1; 2x1 sharing a K-major B tile
// of a dense, batched or per-row M-grouped problem).
bool sm90_cluster_fits(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw, std::string* why);

}  // namespace tilegemm
