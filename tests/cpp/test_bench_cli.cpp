// `tilegemm bench` as a user runs it: bad arguments exit 2 naming the argument (on any machine), a
// machine without a GPU exits 1 with "no CUDA GPU found".
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

#include "tilegemm/hw.hpp"

namespace {

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

CliResult run_cli(const std::string& args) {
  const std::string command = std::string("'") + TILEGEMM_CLI_PATH + "' " + args + " 2>&1";
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

void expect_usage_error(const std::string& args, const std::string& mentions) {
  const CliResult r = run_cli("bench " + args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(mentions), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;  // an error line, not a crash
}

}  // namespace

TEST(BenchCli, BadArgumentsExitTwoNamingTheArgument) {
  expect_usage_error("--suite llama", "--suite");
  expect_usage_error("--layout xy", "--layout");
  expect_usage_error("--dtype fp8", "--dtype");
  expect_usage_error("--dtype nonsense", "--dtype");
  expect_usage_error("--out-dtype fp16", "--out-dtype");
  expect_usage_error("--rep-ms 0", "--rep-ms");
  expect_usage_error("--warmup-ms -5", "--warmup-ms");
  expect_usage_error("--num-sms -1", "--num-sms");
  expect_usage_error("--m 128 --n 256", "--m/--n/--k");
  expect_usage_error("--m 0 --n 256 --k 512", "--m");
  expect_usage_error("--suite deepseek --m 128 --n 256 --k 512", "--suite");
  expect_usage_error("--suite grouped --layout tn", "--layout");
  expect_usage_error("--suite grouped --out-dtype fp32", "--out-dtype");
  expect_usage_error("--m abc --n 1 --k 1", "--m");  // CLI11's own parse error
  expect_usage_error("--no-such-flag", "no-such-flag");
}

TEST(BenchCli, NoGpuIsExitOneWithAClearMessage) {
  if (tilegemm::gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  for (const char* args :
       {"bench", "bench --suite grouped --baseline-only", "bench --m 128 --n 256 --k 512"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("no CUDA GPU found"), std::string::npos) << r.output;
  }
}

TEST(BenchCli, HelpListsTheOptions) {
  const CliResult r = run_cli("bench --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* option :
       {"--suite", "--warmup-ms", "--rep-ms", "--json", "--md", "--baseline-only", "--num-sms"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
}
