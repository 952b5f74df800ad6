#pragma once
// Runs an external program (nvcc, cuobjdump) without a shell, so paths with spaces or quotes need no escaping.
#include <string>
#include <vector>

namespace tilegemm::jit {

struct ProcessResult {
  int exit_code = -1;  // -1 when the program could not be started
  std::string output;  // stdout and stderr interleaved
};

// Runs argv[0] (a path, or a name looked up in PATH) with stdout+stderr captured through `log_path`.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path);

// "a 'b c' d" for printing a command line.
std::string shell_quote_join(const std::vector<std::string>& argv);

}  // namespace tilegemm::jit
