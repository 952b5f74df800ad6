#include "api/print_config.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "tilegemm/env.hpp"

namespace tilegemm::api {

bool config_printing_enabled() {
  return env().print_configs || env().jit_debug;
}

void print_config_line_once(const std::string& line) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard lock(mutex);
  if (seen.insert(line).second) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace tilegemm::api
