#pragma once
// What the selector chooses among on its own. The kernels run more configs than the selector offers: some were
// measured not to pay (FP8 1x2 clusters sharing A, tiles an odd multiple of 8 wide), some are not modelled yet (the
// FP8 K-split warpgroup pair).
// Legality (sm90_*_config_legal) says what a kernel can run; this says what the selector may pick unasked.
// TILEGEMM_CONFIG_FILTER offers such a config by naming the fields that select it.
#include <string>

#include "core/config_filter.hpp"
#include "tilegemm/gemm_config.hpp"

namespace tilegemm {

// Empty when the selector may pick the (legal) `config` for `desc` under `filter`, else the reason, naming the
// switch in tilegemm/heuristics.hpp and the filter that offers it.
std::string sm90_offer_problem(const GemmDesc& desc, const GemmConfig& config, const ConfigFilter& filter);

}  // namespace tilegemm
