#pragma once
// What the selector chooses among on its own. The kernels run more configs than the selector offers: some were
// measured not to pay (tiles an odd multiple of 8 wide, BF16 stages of four K atoms, FP8 256-row tiles of masked
// problems), some only where they were measured to pay (FP8 stages of several K blocks).
// Legality (sm90_*_config_legal) says what a kernel can run; this says what the selector may pick unasked.
// TILEGEMM_CONFIG_FILTER offers such a config by naming the fields that select it.
#include <string>

#include "core/config_filter.hpp"
#include "tilegemm/gemm_config.hpp"

namespace tilegemm {

// Whether the selector may pick the (legal) `config` for `desc` under `filter`; on false *why (if given) is the
// reason, naming the switch in tilegemm/heuristics.hpp and the filter that offers it. Reads neither the stages nor
// the scheme: the selector checks it once per tile shape.
bool sm90_offered(const GemmDesc& desc, const GemmConfig& config, const ConfigFilter& filter, std::string* why);
// Empty when sm90_offered, else the reason.
std::string sm90_offer_problem(const GemmDesc& desc, const GemmConfig& config, const ConfigFilter& filter);

}  // namespace tilegemm
