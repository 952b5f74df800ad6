#pragma once
// Internal pieces of the SM90 cost model (BF16 and FP8 kernels) shared by the enumerator and the selector.
#include <string>
#include <vector>

#include "tilegemm/env.hpp"
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
// Output tiles of one config (× groups for batched, masked and K-grouped problems).
long long sm90_tiles(const GemmDesc& desc, const GemmConfig& config);
// One way to cut the problem that the selector should cost for a tile shape, with the sentence that says why.
struct SchemeChoice {
  GemmScheme scheme = GemmScheme::kDataParallel;
  int split_k = 1;
  std::string why;  // empty for data-parallel
};
// Data-parallel, plus split-K counts and/or stream-K where the ledger's wave analysis of `base`'s tile shape
// calls for them (dense and batched problems, no cluster); TILEGEMM_GEMM_SCHEME restricts the list.
std::vector<SchemeChoice> sm90_scheme_choices(const GemmDesc& desc, const GemmConfig& base, const HardwareModel& hw);
// The cost of a legal config, with the problem ledger computed once by the caller.
CostBreakdown sm90_cost(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw,
                        const ProblemLedger& problem);

}  // namespace tilegemm
