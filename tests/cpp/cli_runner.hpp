#pragma once
// Runs the built `tilegemm` CLI (TILEGEMM_CLI_PATH) in a shell and captures its output and exit status, for
// the tests that check what a user sees.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace cli_test {

struct CliResult {
  int status = -1;     // exit status, -1 when the process did not exit normally
  std::string output;  // stdout, plus stderr unless it was discarded
};

// `env` is prepended to the command line (e.g. "DG_PRINT_CONFIGS=1").
inline CliResult run_cli(const std::string& args, const std::string& env = "", bool merge_stderr = true) {
  const std::string command = env + (env.empty() ? "" : " ") + "'" + TILEGEMM_CLI_PATH + "' " + args +
                              (merge_stderr ? " 2>&1" : " 2>/dev/null");
  CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace cli_test
