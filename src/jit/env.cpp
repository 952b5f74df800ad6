// The one place that reads tilegemm's environment variables.
#include "tilegemm/env.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/config_filter.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

std::string get(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

bool get_bool(const char* name, bool fallback) {
  std::string value = get(name);
  if (value.empty()) return fallback;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  throw InvalidArgument(name, "0 or 1 (or true/false/yes/no/on/off)", "'" + get(name) + "'");
}

std::string default_cache_dir() {
  if (std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/tilegemm";
  if (std::string home = get("HOME"); !home.empty()) return home + "/.cache/tilegemm";
  // No home directory (some service accounts): a per-user directory under the system temp dir.
  return (std::filesystem::temp_directory_path() / ("tilegemm-cache-" + std::to_string(::getuid()))).string();
}

std::mutex& env_mutex() {
  static std::mutex m;
  return m;
}

Env& installed() {
  static Env value = read_env_from_process();
  return value;
}

}  // namespace

std::string default_device_include_dir(const std::string& source_dir, const std::string& installed_dir) {
  std::error_code ec;
  for (const std::string& dir : {source_dir, installed_dir})
    if (std::filesystem::is_directory(std::filesystem::path(dir) / "tilegemm" / "prim", ec)) return dir;
  return source_dir;
}

Env read_env_from_process() {
  Env e;
  e.jit_cache_dir = get("DG_JIT_CACHE_DIR");
  if (e.jit_cache_dir.empty()) e.jit_cache_dir = default_cache_dir();
  e.jit_use_nvrtc = get_bool("DG_JIT_USE_NVRTC", true);
  e.jit_nvcc_compiler = get("DG_JIT_NVCC_COMPILER");
  if (e.jit_nvcc_compiler.empty()) e.jit_nvcc_compiler = std::string(TILEGEMM_CUDA_BIN_DIR) + "/nvcc";
  e.jit_debug = get_bool("DG_JIT_DEBUG", false);
  e.print_configs = get_bool("DG_PRINT_CONFIGS", false);
  e.jit_print_compiler_command = get_bool("DG_JIT_PRINT_COMPILER_COMMAND", false);
  e.jit_ptxas_verbose = get_bool("DG_JIT_PTXAS_VERBOSE", false);
  e.jit_ptxas_check = get_bool("DG_JIT_PTXAS_CHECK", false);
  e.jit_with_lineinfo = get_bool("DG_JIT_WITH_LINEINFO", false);
  e.jit_dump_ptx = get_bool("DG_JIT_DUMP_PTX", false);
  e.jit_dump_sass = get_bool("DG_JIT_DUMP_SASS", false);
  e.jit_disable = get_bool("DG_JIT_DISABLE", false);
  if (std::string v = get("TILEGEMM_MMA_IN_FLIGHT"); !v.empty()) {
    if (v.size() != 1 || v[0] < '0' || v[0] > '4')
      throw InvalidArgument("TILEGEMM_MMA_IN_FLIGHT", "an integer in [0, 4]", "'" + v + "'");
    e.tune_mma_in_flight = v[0] - '0';
  }
  if (std::string v = get("TILEGEMM_LOAD_OVERLAP_PENALTY"); !v.empty()) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(x >= 0.0 && x <= 1.0))
      throw InvalidArgument("TILEGEMM_LOAD_OVERLAP_PENALTY", "a number in [0, 1]", "'" + v + "'");
    e.tune_load_overlap_penalty = x;
  }
  if (std::string v = get("TILEGEMM_WAVES_PER_LAUNCH"); !v.empty()) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n < 0 || n > 1 << 20)
      throw InvalidArgument("TILEGEMM_WAVES_PER_LAUNCH", "an integer in [0, 1048576] (0 = one launch)", "'" + v + "'");
    e.waves_per_launch = static_cast<int>(n);
  }
  if (std::string v = get("TILEGEMM_CTAS_PER_SM"); !v.empty()) {
    if (v.size() != 1 || v[0] < '1' || v[0] > '4')
      throw InvalidArgument("TILEGEMM_CTAS_PER_SM", "an integer in [1, 4]", "'" + v + "'");
    e.tune_ctas_per_sm = v[0] - '0';
  }
  e.deterministic = get_bool("DG_DETERMINISTIC", false);
  e.pdl = get_bool("DG_ENABLE_PDL", false);
  if (std::string v = get("TILEGEMM_GEMM_SCHEME"); !v.empty()) {
    std::string lower = v;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string expected = "data-parallel, split-k, split-k:N (N in [2, 256]) or stream-k";
    if (lower == "data-parallel") {
      e.force_scheme = 0;
    } else if (lower == "stream-k") {
      e.force_scheme = 2;
    } else if (lower == "split-k") {
      e.force_scheme = 1;
    } else if (lower.rfind("split-k:", 0) == 0) {
      const std::string digits = lower.substr(8);
      char* end = nullptr;
      const long n = std::strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || n < 2 || n > 256)
        throw InvalidArgument("TILEGEMM_GEMM_SCHEME", expected, "'" + v + "'");
      e.force_scheme = 1;
      e.force_split_k = static_cast<int>(n);
    } else {
      throw InvalidArgument("TILEGEMM_GEMM_SCHEME", expected, "'" + v + "'");
    }
  }
  e.config_filter = get("TILEGEMM_CONFIG_FILTER");
  if (!e.config_filter.empty()) parse_config_filter(e.config_filter);  // throws on a malformed filter
  e.device_include_dir = get("TILEGEMM_DEVICE_INCLUDE_DIR");
  if (e.device_include_dir.empty())
    e.device_include_dir =
        default_device_include_dir(TILEGEMM_DEVICE_INCLUDE_DIR, TILEGEMM_INSTALLED_DEVICE_INCLUDE_DIR);
  e.cuda_include_dir = get("TILEGEMM_CUDA_INCLUDE_DIR");
  if (e.cuda_include_dir.empty()) e.cuda_include_dir = TILEGEMM_CUDA_INCLUDE_DIR;
  e.cupti_library = get("TILEGEMM_CUPTI_LIBRARY");
  return e;
}

const Env& env() {
  std::lock_guard lock(env_mutex());
  return installed();
}

void reload_env() {
  std::lock_guard lock(env_mutex());
  Env fresh = read_env_from_process();
  fresh.generation = installed().generation + 1;
  installed() = std::move(fresh);
}

}  // namespace tilegemm
