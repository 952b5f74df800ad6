#pragma once
// TILEGEMM_CONFIG_FILTER: pins some fields of the selected config for tests and tuning experiments
// ("block_m=128,block_n=256,stages=3,cluster_m=2"). The selector keeps only legal candidates that match.
// `raster` is not enumerated (each tile shape gets one derived raster group), so it sets the group instead.
// `k_groups` pins the weight-only and FP8 x FP4 kernels' sets of consumer warps; GemmConfig selectors ignore it.
// tf32_hc_prenorm_gemm reads block_m, and split_k and cluster_m for the library's split. swap_ab=1 (or 0) asks for
// a BF16 GEMM run with A and B exchanged (or not; GemmConfig::swap_ab).
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tilegemm/gemm_config.hpp"

namespace tilegemm {

struct ConfigFilter {
  std::vector<std::pair<std::string, int>> terms;  // field name, required value
  bool empty() const { return terms.empty(); }
  bool matches(const GemmConfig& config) const;
  // True when the filter pins every one of `fields`: a candidate that also matches has the values asked for.
  bool names(std::initializer_list<std::string_view> fields) const;
  // The value the filter pins `name` to, or 0 when it does not name it.
  int value_of(std::string_view name) const;
  // The value the filter pins `name` to, or nullopt when it does not name it (swap_ab=0 pins a value of 0).
  std::optional<int> pinned(std::string_view name) const;
};

// Parses "field=value[,field=value...]"; throws InvalidArgument naming TILEGEMM_CONFIG_FILTER on an unknown
// field, a missing or non-positive value, or a repeated field. An empty string is an empty filter.
ConfigFilter parse_config_filter(const std::string& text);

// What a filter pins of a small-M mma.sync kernel's config (weight-only, FP8 x FP4): 0 where it pins nothing.
struct SmallMPins {
  int block_m = 0, stages = 0, split_k = 0, k_groups = 0;
  bool any() const { return block_m || stages || split_k || k_groups; }
};
SmallMPins small_m_pins(const ConfigFilter& filter);

// The process-wide filter from env().config_filter.
const ConfigFilter& env_config_filter();

}  // namespace tilegemm
