// `--report DIR` without a GPU: the recorded H200 reports (tests/cpp/fixtures) read back, the new report
// fields round-trip, and the directory gets report.json, report.md and — with python3 + matplotlib — the
// roofline PNG and SVG; without them, a reason instead of a plot.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string fixture_path(const std::string& name) {
  return std::string(TILEGEMM_SOURCE_DIR) + "/tests/cpp/fixtures/" + name;
}

BenchReport run3() {
  return report_from_json(slurp(fixture_path("bench-bf16-all-run3.json")));
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tilegemm_report_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A python that can import matplotlib: $TILEGEMM_PYTHON, python3 on PATH, or Debian's /usr/bin/python3.
std::optional<std::string> python_with_matplotlib() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("TILEGEMM_PYTHON")) candidates.push_back(p);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (const auto& python : candidates)
    if (std::system(("'" + python + "' -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  return std::nullopt;
}

}  // namespace

TEST(BenchReportFixtures, RecordedReportsReadWithDefaultsForNewerFields) {
  const BenchReport r = run3();
  EXPECT_EQ(r.suite, "all");
  EXPECT_EQ(r.env.gpu_name, "NVIDIA H200");
  EXPECT_EQ(r.env.commit, "6f64f0a");
  EXPECT_DOUBLE_EQ(r.env.peak_tflops, 989.42976);
  EXPECT_DOUBLE_EQ(r.env.hbm_gbps, 4814.304);
  EXPECT_EQ(r.env.flush_policy, "");
  EXPECT_EQ(r.env.flush, "zero");
  EXPECT_DOUBLE_EQ(r.env.copy_gbps, 0.0);
  EXPECT_EQ(r.env.baseline, "");
  ASSERT_EQ(r.rows.size(), 22u);
  EXPECT_EQ(r.rows[0].variant, "");
  EXPECT_EQ(r.rows[0].ours_iterations.rep, 0);
  // The old per-call flush wording is kept for reports without a recorded policy.
  EXPECT_NE(report_to_markdown(r).find("cuda-events, 256 MiB zeroed before each timed call"), std::string::npos);
}

TEST(BenchReportFixtures, NewFieldsRoundTripAndShowInMarkdown) {
  BenchReport in = run3();
  in.env.timer = std::string(timer_backend_name(TimerBackend::kCudaGraph));
  in.env.flush_policy = flush_policy(TimerBackend::kCudaGraph, in.env.flush_bytes);
  in.env.flush = "read";
  in.env.copy_gbps = 4272.5;
  in.env.baseline = baseline_identity(130100);
  in.rows[0].variant = "sm90_bf16 normal, multicast none";
  in.rows[0].ours_iterations = {1250, 2460};
  in.rows[0].ours.samples = 20;
  in.rows[0].cublas_iterations = {1300, 2456};
  const BenchReport out = report_from_json(report_to_json(in));
  EXPECT_EQ(out.env.timer, "cuda-graph");
  EXPECT_EQ(out.env.flush_policy, "256 MiB zeroed once before each graph replay (only its first call starts cold)");
  EXPECT_EQ(out.env.flush, "read");
  EXPECT_DOUBLE_EQ(out.env.copy_gbps, 4272.5);
  EXPECT_EQ(out.env.baseline,
            "cuBLASLt 13.1.0: cublasLtMatmul, FP32 compute (CUBLAS_COMPUTE_32F), first heuristic algorithm, 32 MiB "
            "workspace");
  EXPECT_EQ(out.rows[0].variant, "sm90_bf16 normal, multicast none");
  EXPECT_EQ(out.rows[0].ours_iterations.warmup, 1250);
  EXPECT_EQ(out.rows[0].ours_iterations.rep, 2460);
  EXPECT_EQ(out.rows[0].cublas_iterations.rep, 2456);

  const std::string md = report_to_markdown(out);
  EXPECT_NE(md.find("| timing | cuda-graph, 256 MiB zeroed once before each graph replay"), std::string::npos) << md;
  EXPECT_NE(md.find("| copy ceiling | 4272 GB/s"), std::string::npos);
  EXPECT_NE(md.find("| baseline | cuBLASLt 13.1.0: cublasLtMatmul"), std::string::npos);
  // Graph samples are replays: 2460 timed calls in 20 samples of 123.
  EXPECT_NE(
      md.find("| 64x2112x7168 | sm90_bf16 normal, multicast none | 1250 + 2460 (20 samples of 123) | 3.2% | 18.7 | "
              "1300 + 2456 | 4.4% | 17.5 | `block=64x16x64 stages=16"),
      std::string::npos)
      << md;
  // A row recorded without counts still shows its samples and spread.
  EXPECT_NE(md.find("| 64x24576x1536 | - | "), std::string::npos);
}

TEST(BenchReportFixtures, JsonCarriesIntensityAndSpreadForThePlot) {
  const std::string json = report_to_json(run3());
  EXPECT_NE(json.find("\"shape\": \"64x2112x7168\""), std::string::npos);
  EXPECT_NE(json.find("\"intensity_flop_per_byte\""), std::string::npos);
  EXPECT_NE(json.find("\"ours_relative_spread\""), std::string::npos);
  const BenchRow& row = run3().rows[0];
  EXPECT_NEAR(row.intensity(), row.flops / row.min_bytes, 1e-12);
}

TEST(BenchReportDir, WritesTheRooflinePlotWithMatplotlib) {
  const auto python = python_with_matplotlib();
  if (!python) GTEST_SKIP() << "no python3 with matplotlib (Debian: apt-get install python3-matplotlib)";
  ScopedEnv env("TILEGEMM_PYTHON", *python);
  const fs::path dir = fresh_dir("plot") / "nested";
  const ReportFiles files = write_report_dir(run3(), dir.string());
  ASSERT_TRUE(files.plotted) << files.plot_skipped;
  const std::string png = slurp(files.png_path), svg = slurp(files.svg_path);
  EXPECT_GT(png.size(), 1024u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(svg.size(), 1024u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("4096x32768x512"), std::string::npos);  // labels stay text (svg.fonttype none)
  EXPECT_EQ(report_from_json(slurp(files.json_path)).rows.size(), 22u);
  EXPECT_NE(slurp(files.md_path).find("![Roofline: ours and the baseline per shape](roofline.png)"), std::string::npos);
  fs::remove_all(dir.parent_path());
}

TEST(BenchReportDir, WithoutPythonTheReportIsWrittenAndThePlotSkippedWithAReason) {
  ScopedEnv env("TILEGEMM_PYTHON", "/nonexistent/python3");
  const fs::path dir = fresh_dir("nopython");
  fs::create_directories(dir);
  std::ofstream(dir / "roofline.png") << "stale plot of an earlier run";
  const ReportFiles files = write_report_dir(run3(), dir.string());
  EXPECT_FALSE(files.plotted);
  EXPECT_NE(files.plot_skipped.find("'/nonexistent/python3' not found"), std::string::npos) << files.plot_skipped;
  EXPECT_TRUE(fs::is_regular_file(dir / "report.json"));
  EXPECT_EQ(slurp(dir / "report.md"), report_to_markdown(run3()));  // no image link without an image
  EXPECT_FALSE(fs::exists(dir / "roofline.png"));
  fs::remove_all(dir);
}

TEST(BenchReportDir, AScriptFailureIsReportedWithItsReason) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 on PATH";
  ScopedEnv env("TILEGEMM_PYTHON", "python3");
  const fs::path dir = fresh_dir("norows");
  fs::create_directories(dir);
  BenchReport empty = run3();
  empty.rows.clear();
  std::ofstream(dir / "empty.json") << report_to_json(empty);
  // The script checks its input before importing matplotlib, so this needs no matplotlib.
  const std::string why = plot_roofline((dir / "empty.json").string(), dir.string());
  EXPECT_NE(why.find("roofline.py exited with status 2"), std::string::npos) << why;
  EXPECT_NE(why.find("no rows"), std::string::npos) << why;
  fs::remove_all(dir);
}

TEST(BenchReportDir, AnUncreatableDirectoryNamesTheArgument) {
  const fs::path file = fresh_dir("file");
  std::ofstream(file) << "a regular file";
  try {
    write_report_dir(run3(), (file / "sub").string(), "--report");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--report");
  }
  EXPECT_THROW(write_report_dir(run3(), "", "--report"), InvalidArgument);
  fs::remove(file);
}

// The first python3 on PATH may lack matplotlib (a virtual environment, pyenv) while Debian's python3-matplotlib,
// what scripts/install-deps installs, serves /usr/bin/python3: the plot then uses /usr/bin/python3.
TEST(BenchReportDir, ThePlotFindsThePythonThatHasMatplotlib) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import matplotlib here";
  const fs::path bin = fresh_dir("fake-python");
  fs::create_directories(bin);
  std::ofstream(bin / "python3") << "#!/bin/sh\nexit 1\n";  // a python3 that imports nothing
  fs::permissions(bin / "python3", fs::perms::owner_all);
  const char* path = std::getenv("PATH");
  ScopedEnv first("PATH", bin.string() + ":" + (path ? path : ""));
  ScopedEnv empty("TILEGEMM_PYTHON", "");  // empty: not set
  EXPECT_EQ(plot_python(), "/usr/bin/python3");
  ScopedEnv chosen("TILEGEMM_PYTHON", "/opt/some/python");
  EXPECT_EQ(plot_python(), "/opt/some/python");  // an explicit choice is kept as it is
  fs::remove_all(bin);
}
