#pragma once
// Tile-shape rules the SM90 BF16 and FP8 kernels share (one consumer warpgroup owns 64 or 128 rows, tiles of
// contiguous groups stay inside one 128-row group, block_n a multiple of 8: one wgmma
// accumulator column group).
#include <string>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

// Empty when (block_m, math warpgroups, block_n) is a shape both kernels implement for `desc`, else the reason.
// two_pass_contiguous: the kernel runs 256-row tiles of per-row contiguous problems whose halves straddle two
// groups in two passes (the FP8 1D2D kernel, without clusters); otherwise contiguous tiles are <= 128 rows.
// k_split_pair: the kernel runs (64, 2), two consumer warpgroups taking alternate K stages of a 64-row tile (FP8).
std::string sm90_tile_shape_problem(const GemmDesc& desc, const GemmConfig& config, bool two_pass_contiguous = false,
                                    bool k_split_pair = false);

// Empty when the ring depth, the `smem` bytes the kernel needs for `config`, the SM count and the raster group fit
// `hw` (and config.smem_bytes, if set, equals smem), else the reason. `smem_detail` explains the total.
std::string sm90_resource_problem(const GemmConfig& config, int smem, const std::string& smem_detail,
                                  const HardwareModel& hw);

// Empty when the split-K / stream-K scheme of `config` is one both kernels run for `desc` (slice count, problem
// type, no cluster, workspace size), else the reason. `deterministic_stream_k_spills`: the family's fix-up would
// spill registers in deterministic stream-K with this tile (measured per family with ptxas).
std::string sm90_scheme_problem(const GemmDesc& desc, const GemmConfig& config, bool deterministic_stream_k_spills);

// Empty when the cluster shape of `config` is one the family's kernel implements for `desc` (1x1; 2x1 sharing a
// K-major B tile of a dense, batched or per-row M-grouped problem; with `shares_a` (FP8), 1x2 sharing the A tile
// of a dense or batched problem), else the reason.
std::string sm90_cluster_problem(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw,
                                 bool shares_a);

}  // namespace tilegemm
