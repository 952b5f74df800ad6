#pragma once
// Internal pieces of the SM90 BF16 cost model shared by the enumerator and the selector.
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

// The ledger's view of a desc: masked groups count expected_m rows each; contiguous groups are `grouped`.
ProblemShape sm90_problem_shape(const GemmDesc& desc);
OperandDtypes sm90_operand_dtypes(const GemmDesc& desc);
// Output tiles the persistent scheduler walks (exact for 128-aligned contiguous groups).
std::int64_t sm90_output_tiles(const ProblemShape& shape, int block_m, int block_n);
// m-blocks per raster group that make a wave's A and B panels about equally tall (fewest DRAM bytes).
int choose_raster_group(const ProblemShape& shape, int block_m, int block_n, int num_sms);
// The cost of a legal config, with the problem ledger computed once by the caller.
CostBreakdown sm90_bf16_cost(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw,
                             const ProblemLedger& problem);

}  // namespace tilegemm
