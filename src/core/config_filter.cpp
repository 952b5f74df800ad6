#include "core/config_filter.hpp"

#include <cstdlib>
#include <mutex>

#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {
constexpr const char* kVariable = "TILEGEMM_CONFIG_FILTER";
constexpr const char* kExpected =
    "comma-separated field=value pairs, fields block_m, block_n, block_k, stages, math_wg, cluster_m, cluster_n, "
    "raster, "
    "split_k, k_groups, values positive integers, and swap_ab=0 or 1, each field once";

// The value of the config field a filter name refers to (swap_ab as 0 or 1), or nullopt for an unknown name.
std::optional<int> field_value(const GemmConfig& c, std::string_view name) {
  if (name == "block_m") return c.block_m;
  if (name == "block_n") return c.block_n;
  if (name == "block_k") return c.block_k;
  if (name == "stages") return c.stages;
  if (name == "math_wg") return c.num_math_warpgroups;
  if (name == "cluster_m") return c.cluster_m;
  if (name == "cluster_n") return c.cluster_n;
  if (name == "raster") return c.raster_group;
  if (name == "split_k") return c.split_k;
  if (name == "swap_ab") return static_cast<int>(c.swap_ab);
  return std::nullopt;
}

// Fields only the small-M mma.sync kernels' selectors read (their configs are not GemmConfigs).
bool small_m_field(const std::string& name) {
  return name == "k_groups";
}

// Fields that are flags take 0 or 1; the others positive counts.
bool in_range(const std::string& name, long value) {
  return name == "swap_ab" ? value == 0 || value == 1 : value > 0 && value <= 1 << 20;
}
}  // namespace

bool ConfigFilter::matches(const GemmConfig& config) const {
  for (const auto& [name, value] : terms) {
    const std::optional<int> field = field_value(config, name);
    if (field && *field != value) return false;
  }
  return true;
}

bool ConfigFilter::names(std::initializer_list<std::string_view> fields) const {
  for (std::string_view field : fields)
    if (value_of(field) == 0) return false;
  return true;
}

int ConfigFilter::value_of(std::string_view name) const {
  return pinned(name).value_or(0);
}

std::optional<int> ConfigFilter::pinned(std::string_view name) const {
  for (const auto& [field, value] : terms)
    if (field == name) return value;
  return std::nullopt;
}

ConfigFilter parse_config_filter(const std::string& text) {
  ConfigFilter filter;
  const GemmConfig probe;
  if (text.empty()) return filter;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string term = text.substr(start, end - start);
    const std::size_t eq = term.find('=');
    const std::string name = term.substr(0, eq);
    if (eq == std::string::npos || (!field_value(probe, name) && !small_m_field(name)))
      throw InvalidArgument(kVariable, kExpected, "'" + text + "' (term '" + term + "')");
    const std::string digits = term.substr(eq + 1);
    char* stop = nullptr;
    const long value = std::strtol(digits.c_str(), &stop, 10);
    if (digits.empty() || *stop != '\0' || !in_range(name, value))
      throw InvalidArgument(kVariable, kExpected, "'" + text + "' (term '" + term + "')");
    for (const auto& seen : filter.terms)
      if (seen.first == name) throw InvalidArgument(kVariable, kExpected, "'" + text + "' (" + name + " twice)");
    filter.terms.emplace_back(name, static_cast<int>(value));
    start = end + 1;
  }
  return filter;
}

SmallMPins small_m_pins(const ConfigFilter& filter) {
  return {filter.value_of("block_m"), filter.value_of("stages"), filter.value_of("split_k"),
          filter.value_of("k_groups")};
}

const ConfigFilter& env_config_filter() {
  // Re-parsed whenever reload_env() changed the settings.
  static std::mutex mutex;
  static unsigned generation = ~0u;
  static ConfigFilter filter;
  std::lock_guard lock(mutex);
  if (generation != env().generation) {
    filter = parse_config_filter(env().config_filter);
    generation = env().generation;
  }
  return filter;
}

}  // namespace tilegemm
