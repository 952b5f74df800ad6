// The ledger's prediction for each rung: the operand bytes its CTAs request (the tile model) and an HBM estimate
// in which the A and B panels of one wave of resident CTAs are read once per wave (the same wave model as the SM90
// cost model) — the number rasterisation moves.
#include <algorithm>

#include "ladder/ladder.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm::ladder {

namespace {

// Registers per thread the occupancy estimate uses for rungs 0-3: what ptxas reported for sm_90a (rung 0:
// 32; rungs 1-3: 125-126 under the 128 cap of __launch_bounds__(256, 2)).
int rung_registers(int rung) {
  return rung == 0 ? 32 : 128;
}

}  // namespace

RungTraffic predicted_traffic(int rung, const ProblemShape& shape, const HardwareModel& hw) {
  const RungInfo info = rung_info_for(rung, shape, hw);
  const OperandDtypes dtypes = OperandDtypes::uniform(DType::kBFloat16);
  const ProblemLedger problem = problem_ledger(shape, dtypes, hw);
  RungTraffic t;
  t.minimum_bytes = problem.min_bytes;
  t.load_bytes = rung == 0 ? problem.naive_ab_bytes : tiled_ab_bytes(shape, dtypes, info.block_m, info.block_n);

  const std::int64_t m_blocks = ceil_div(shape.m, info.block_m), n_blocks = ceil_div(shape.n, info.block_n);
  std::int64_t wave_m = 0, wave_n = 0;
  if (rung == kProductionRung) {
    // Persistent: one CTA per SM walking tiles in panels of the config's raster group.
    GemmDesc desc;
    desc.m = static_cast<int>(shape.m), desc.n = static_cast<int>(shape.n), desc.k = static_cast<int>(shape.k);
    const GemmConfig config = select_config(desc, hw);
    t.resident_ctas = config.num_sms;
    wave_m = std::min<std::int64_t>(config.raster_group, m_blocks);
    wave_n = std::min<std::int64_t>(ceil_div(t.resident_ctas, wave_m), n_blocks);
  } else {
    const OccupancyEstimate occ = blocks_per_sm(hw, info.threads, rung_registers(rung), info.smem_bytes);
    t.resident_ctas = hw.num_sms * std::max(1, occ.blocks_per_sm);
    if (rung == 3) {  // panels of kRasterGroup m-blocks, walked along M first
      wave_m = std::min<std::int64_t>(kRasterGroup, m_blocks);
      wave_n = std::min<std::int64_t>(ceil_div(t.resident_ctas, wave_m), n_blocks);
    } else {  // row-major grid: whole rows of n-blocks, then the next m-block
      wave_n = std::min<std::int64_t>(t.resident_ctas, n_blocks);
      wave_m = std::min<std::int64_t>(ceil_div(t.resident_ctas, n_blocks), m_blocks);
    }
  }
  t.wave_m_blocks = static_cast<int>(wave_m);
  t.wave_n_blocks = static_cast<int>(wave_n);
  const double wave_ab =
      tiled_ab_bytes(shape, dtypes, static_cast<int>(wave_m * info.block_m), static_cast<int>(wave_n * info.block_n));
  t.dram_bytes = std::max(wave_ab, problem.bytes.ab()) + problem.bytes.d;
  return t;
}

}  // namespace tilegemm::ladder
