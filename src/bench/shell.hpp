#pragma once
// Runs a shell command for the environment capture (nvidia-smi, git). Internal to src/bench.
#include <optional>
#include <string>

namespace tilegemm::bench_detail {

// stdout of `command` (stderr discarded) when it exits with status 0; nullopt otherwise (including a
// missing program). Never throws.
std::optional<std::string> run_shell(const std::string& command);

struct ShellResult {
  int status = -1;     // exit status; -1 when the shell could not be started or was killed
  std::string output;  // stdout and stderr together
};
// Runs `command` with stderr folded into stdout. Never throws.
ShellResult run_shell_capture(const std::string& command);

// Single-quotes `text` for /bin/sh.
std::string shell_quote(const std::string& text);

}  // namespace tilegemm::bench_detail
