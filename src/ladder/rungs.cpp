// What each rung is: its idea, the bottleneck it removes and its fixed tile (rungs 0-3 mirror the constants
// of device/tilegemm/kernels/ladder/*.cuh; rung 4 asks the heuristics).
#include <array>

#include <fmt/format.h>

#include "ladder/ladder.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm::ladder {

namespace {

const std::array<RungInfo, kNumRungs>& table() {
  static const std::array<RungInfo, kNumRungs> rungs = {{
      {0, "naive", "one thread per output, fp32 FMA from global memory", "", 16, 16, 8, 1, 256, 0},
      {1, "smem+mma", "128x128x32 tiles in shared memory, tensor cores (ldmatrix + mma.sync)",
       "2K global loads per output (no on-chip reuse) and CUDA-core math", 128, 128, 32, 1, 256, 16384},
      {2, "cp.async", "4-stage cp.async ring: loads of the next K-slices overlap the MMAs",
       "load, wait, compute, wait: the tensor cores idle a full memory latency per K-slice", 128, 128, 32, 4, 256,
       65536},
      {3, "swizzle+raster", "XOR-swizzled shared tiles and rasterised tile order",
       "4-way bank conflicts on every ldmatrix and row-by-row CTA order thinning L2 reuse", 128, 128, 32, 4, 256,
       65536},
      {4, "tma+wgmma", "TMA loads, wgmma, producer/consumer warp specialisation, persistent CTAs (bf16_gemm)",
       "register-file operand traffic of mma.sync, address math and copies issued by the math warps", 0, 0, 0, 0, 0, 0},
  }};
  return rungs;
}

}  // namespace

RungInfo rung_info(int rung) {
  TILEGEMM_REQUIRE(rung >= 0 && rung < kNumRungs, "rung", fmt::format("a rung in [0, {})", kNumRungs),
                   std::to_string(rung));
  return table()[static_cast<std::size_t>(rung)];
}

RungInfo rung_info_for(int rung, const ProblemShape& shape, const HardwareModel& hw) {
  RungInfo info = rung_info(rung);
  if (rung != kProductionRung) return info;
  GemmDesc desc;
  desc.m = static_cast<int>(shape.m), desc.n = static_cast<int>(shape.n), desc.k = static_cast<int>(shape.k);
  const GemmConfig config = select_config(desc, hw);
  info.block_m = config.block_m, info.block_n = config.block_n, info.block_k = config.block_k;
  info.stages = config.stages;
  info.threads = config.num_threads();
  info.smem_bytes = config.smem_bytes;
  return info;
}

}  // namespace tilegemm::ladder
