#pragma once
// DG_PRINT_CONFIGS (or DG_JIT_DEBUG): each configuration line an operator chooses, once per process, on stderr.
#include <string>

namespace tilegemm::api {

bool config_printing_enabled();
void print_config_line_once(const std::string& line);

// Formats the line only when printing is on (`format` returns it).
template <class Format>
void print_config_once(const Format& format) {
  if (config_printing_enabled()) print_config_line_once(format());
}

}  // namespace tilegemm::api
