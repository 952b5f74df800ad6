// `tilegemm bench` as a user runs it: bad arguments exit 2 naming the argument (on any machine), a
// machine without a GPU exits 1 with "no CUDA GPU found".
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tilegemm/hw.hpp"

namespace {

using cli_test::CliResult;
using cli_test::run_cli;

void expect_usage_error(const std::string& args, const std::string& mentions) {
  const CliResult r = run_cli("bench " + args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(mentions), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;  // an error line, not a crash
}

std::string fixture(const std::string& name) {
  return std::string(TILEGEMM_SOURCE_DIR) + "/tests/cpp/fixtures/" + name;
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tilegemm_bench_cli_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

TEST(BenchCli, BadArgumentsExitTwoNamingTheArgument) {
  expect_usage_error("--suite llama", "--suite");
  expect_usage_error("--flush clean", "--flush");
  expect_usage_error("--layout xy", "--layout");
  expect_usage_error("--dtype int8", "--dtype");
  expect_usage_error("--dtype fp8e5m2", "--dtype");
  expect_usage_error("--dtype fp8 --layout nn", "--layout");
  expect_usage_error("--dtype fp8 --out-dtype fp32", "--out-dtype");
  expect_usage_error("--dtype fp8 --suite masked --layout tt", "--layout");
  expect_usage_error("--suite masked --layout tn", "--layout");
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
  expect_usage_error("--timer wallclock", "--timer");
  expect_usage_error("--from-json /nonexistent/report.json", "--from-json");
  expect_usage_error("--from-json " + fixture("bench-bf16-all-run3.json") + " --suite all", "--suite");
  expect_usage_error("--compare " + fixture("bench-bf16-all-run3.json"), "--compare");  // one file
  expect_usage_error("--compare /nonexistent/a.json " + fixture("bench-bf16-all-run3.json"), "--compare");
  expect_usage_error("--compare " + fixture("bench-bf16-all-run3.json") + " " + fixture("README.md"), "--compare");
  expect_usage_error("--compare a.json b.json --timer graph", "--timer");
  expect_usage_error("--compare a.json b.json --read-b", "--read-b");
  expect_usage_error("--compare a.json b.json --report out", "--report");
  expect_usage_error("--from-json " + fixture("bench-bf16-all-run3.json") + " --report /proc/version/sub", "--report");
}

TEST(BenchCli, WeightOnlyRowsNameTheirBadOptions) {
  expect_usage_error("--weight int2", "--weight");
  expect_usage_error("--weight int4 --group-size 48", "--group-size: expected 32, 64 or 128");
  expect_usage_error("--weight int4 --group-size 128 --m 1 --n 4096 --k 7200", "--k");  // K % 128 != 0
  expect_usage_error("--weight int4 --dtype fp8", "--dtype");
  expect_usage_error("--weight int8 --layout nn", "--layout");
  expect_usage_error("--weight mxfp4 --suite masked", "--suite");
  expect_usage_error("--weight int8 --zeros", "--zeros");
  expect_usage_error("--from-json " + fixture("bench-bf16-all-run3.json") + " --weight int4", "--weight");
}

TEST(BenchCli, NoGpuIsExitOneWithAClearMessage) {
  if (tilegemm::gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  for (const char* args : {"bench", "bench --suite grouped --baseline-only", "bench --m 128 --n 256 --k 512",
                           "bench --suite all --dtype fp8", "bench --suite masked --dtype e4m3 --baseline-only",
                           "bench --m 64 --n 2112 --k 7168 --timer kernel --read-b"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("no CUDA GPU found"), std::string::npos) << r.output;
  }
}

TEST(BenchCli, HelpListsTheOptions) {
  const CliResult r = run_cli("bench --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* option : {"--suite", "--warmup-ms", "--rep-ms", "--json", "--md", "--baseline-only", "--num-sms",
                             "--timer", "--report", "--compare", "--from-json", "--read-b", "cupti-kernel"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
}

TEST(BenchCli, CompareTwoRecordedReports) {
  const CliResult r =
      run_cli("bench --compare " + fixture("bench-bf16-all-run3.json") + " " + fixture("bench-bf16-all-run4.json"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(suite all, NVIDIA H200, commit 6f64f0a, cuda-events, 2026-11-30T12:45:17Z)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| 4096x7168x16384 | nt |"), std::string::npos);
  EXPECT_NE(r.output.find("Geometric mean ratio (ours, A/B): **0.994×** over 22 shapes; 3 beyond noise"),
            std::string::npos);
}

// A report missing a key printed "[json.exception.out_of_range.403] ..."; one with a median <= 0 compared as
// "-nan×" and exited 0. Both are one line naming the file and the key (and the row), exit 2.
TEST(BenchCli, CompareOfABrokenReportNamesTheFileAndTheKey) {
  const auto dir = fresh_dir("broken");
  std::filesystem::create_directories(dir);
  std::ifstream in(fixture("bench-bf16-all-run4.json"));
  const nlohmann::json good = nlohmann::json::parse(in);
  auto write = [&](const std::string& name, const nlohmann::json& j) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << j.dump(2);
    return path;
  };
  nlohmann::json missing = good;
  missing["rows"][3]["ours"].erase("median_us");
  nlohmann::json zero = good;
  zero["rows"][0]["ours"]["median_us"] = 0;
  nlohmann::json negative = good;
  negative["rows"][0]["cublas"]["median_us"] = -1;
  const std::string a = fixture("bench-bf16-all-run3.json");
  const struct {
    std::string path, fragment;
  } cases[] = {
      {write("missing.json", missing), "no key 'rows[3].ours.median_us'"},
      {write("zero.json", zero), "'rows[0].ours.median_us' = 0 in row 64x2112x7168"},
      {write("negative.json", negative), "'rows[0].cublas.median_us' = -1 in row 64x2112x7168"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli("bench --compare " + a + " '" + c.path + "'");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind("tilegemm: error: --compare '" + c.path + "': ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(c.fragment), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
    EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
  }
  std::filesystem::remove_all(dir);
}

TEST(BenchCli, FromJsonWithoutPythonWritesTheReportAndWarnsOnce) {
  const auto dir = fresh_dir("nopython");
  const CliResult r = run_cli("bench --from-json " + fixture("bench-bf16-all-run3.json") + " --report '" +
                                  dir.string() + "' --json '" + (dir / "copy.json").string() + "'",
                              "TILEGEMM_PYTHON=/nonexistent");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("# tilegemm bench: all"), std::string::npos);  // the Markdown on stdout
  const std::string warning = "bench: warning: roofline plot skipped (python interpreter '/nonexistent' not found";
  ASSERT_NE(r.output.find(warning), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(warning), r.output.rfind(warning));
  EXPECT_GT(std::filesystem::file_size(dir / "report.json"), 1000u);
  EXPECT_GT(std::filesystem::file_size(dir / "report.md"), 1000u);
  EXPECT_TRUE(std::filesystem::exists(dir / "copy.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "roofline.png"));
  std::filesystem::remove_all(dir);
}

TEST(BenchCli, FromJsonWithMatplotlibWritesThePlot) {
  std::string python;
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (std::system(("'" + std::string(candidate) + "' -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) {
      python = candidate;
      break;
    }
  if (python.empty()) GTEST_SKIP() << "no python3 with matplotlib";
  const auto dir = fresh_dir("plot");
  const CliResult r =
      run_cli("bench --from-json " + fixture("bench-bf16-all-run4.json") + " --report '" + dir.string() + "'",
              "TILEGEMM_PYTHON=" + python);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("report.json, report.md, roofline.png, roofline.svg"), std::string::npos) << r.output;
  EXPECT_GT(std::filesystem::file_size(dir / "roofline.png"), 1024u);
  EXPECT_GT(std::filesystem::file_size(dir / "roofline.svg"), 1024u);
  std::filesystem::remove_all(dir);
}
