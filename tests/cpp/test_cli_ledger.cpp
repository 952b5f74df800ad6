// `tilegemm ledger` end to end: the built binary (TILEGEMM_CLI_PATH), its output and every bad-input path
// (one line on stderr naming the argument, exit status 2, never a crash).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tilegemm/hw.hpp"

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string temp_path(const std::string& name) {
  return (testing::TempDir().empty() ? std::string("/tmp/") : testing::TempDir()) + "tilegemm_cli_ledger_" +
         std::to_string(::getpid()) + "_" + name;
}

// Runs `tilegemm <command_and_args>` through sh, stdout and stderr captured separately.
Result run_tilegemm(const std::string& command_and_args) {
  const std::string out_path = temp_path("stdout"), err_path = temp_path("stderr");
  const std::string cmd =
      std::string("'") + TILEGEMM_CLI_PATH + "' " + command_and_args + " >'" + out_path + "' 2>'" + err_path + "'";
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

Result run_ledger(const std::string& args) {
  return run_tilegemm("ledger " + args);
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// One line on stderr, exit status 2, the argument and `fragment` named in it, nothing on stdout.
void expect_usage_error(const std::string& args, const std::string& argument, const std::string& fragment) {
  SCOPED_TRACE("tilegemm ledger " + args);
  const Result r = run_ledger(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("tilegemm: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(argument), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliLedger, HumanReportOfTheSeedSquareGemm) {
  const Result r = run_ledger("--m 4096 --n 4096 --k 4096 --dtype fp16 --hw h100-sxm --tile 128x128x32 --stages 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("137.439 GFLOP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1365.3 FLOP/B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compute-bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16384 B/stage, 49152 B total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("128 fp32 accumulators/thread"), std::string::npos) << r.out;
}

TEST(CliLedger, JsonCarriesTheNumbersAndTheHardware) {
  const Result r = run_ledger("--m 4096 --n 7168 --k 16384 --hw ascend-950dt --time-us 2229.9 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hardware"]["name"], "ascend-950dt");
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& row = j["results"][0];
  EXPECT_DOUBLE_EQ(row["flops"].get<double>(), 2.0 * 4096 * 7168 * 16384);
  EXPECT_NEAR(row["peak_tflops"].get<double>(), 432.5, 432.5 * 0.005);
  const double frac = row["timing"]["fraction_of_peak"].get<double>();
  EXPECT_GE(frac, 0.997);
  EXPECT_LE(frac, 0.998);
  EXPECT_EQ(row["bound"], "compute");
}

TEST(CliLedger, DeepSeekSuiteTablePrintsOneLinePerShape) {
  Result r = run_ledger("--suite deepseek --dtype fp8 --out-dtype bf16 --hw h200 --tile 128x128x128");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2 + 18) << r.out;  // title, header, 18 shapes
  EXPECT_NE(r.out.find("1792"), std::string::npos);
  EXPECT_NE(r.out.find("76/132"), std::string::npos) << r.out;
  r = run_ledger("--suite deepseek --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["results"].size(), 18u);
}

TEST(CliLedger, DecodeSuiteIsTheWeightsAtTinyM) {
  Result r = run_ledger("--suite decode --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto results = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(results.size(), 24u);
  for (const auto& row : results) EXPECT_EQ(row["bound"], "memory") << row.dump();
}

TEST(CliLedger, HardwareOverridesFromFlagsAndJsonFile) {
  const std::string path = temp_path("hw.json");
  std::ofstream(path) << R"({"hbm_gbps": 4272})";
  Result r = run_ledger("--m 64 --n 7168 --k 16384 --dtype fp8 --hw h200 --hw-json '" + path + "' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["results"][0]["bandwidth_gbps"].get<double>(), 4272);
  r = run_ledger("--m 64 --n 7168 --k 16384 --hw h200 --num-sms 114 --sm-clock-mhz 1000 --hbm-gbps 1000 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hardware"]["num_sms"], 114);
  EXPECT_NEAR(j["results"][0]["peak_tflops"].get<double>(), 114 * 4096 * 1000e6 / 1e12, 1e-6);
  EXPECT_DOUBLE_EQ(j["results"][0]["bandwidth_gbps"].get<double>(), 1000);
  std::remove(path.c_str());
}

TEST(CliLedger, BadSizesAreUsageErrors) {
  expect_usage_error("--m 0 --n 7168 --k 16384", "--m", "got 0");
  expect_usage_error("--m 64 --n -5 --k 16384", "--n", "got -5");
  expect_usage_error("--m 64 --n 7168 --k=-1", "--k", "got -1");
  expect_usage_error("--m 64 --n 7168", "--m/--n/--k", "(missing)");
  expect_usage_error("--m abc --n 1 --k 1", "--m", "abc");
  expect_usage_error("--m 64 --n 64 --k 64 --batch 0", "--batch", "got 0");
  // One size contract with plan, bench and deep_gemm: below 2^31 each (INT64_MAX printed a negative tile count).
  expect_usage_error("--m 9223372036854775807 --n 7168 --k 16384", "--m", "2^31 - 1");
  expect_usage_error("--m 64 --n 2147483648 --k 16384", "--n", "got 2147483648");
  expect_usage_error("--m 2147483647 --n 2147483647 --k 64 --batch 2", "--m", "fewer than 2^62");
  // --grouped: --m is rows per group, as in plan; all groups' rows stay below 2^31.
  expect_usage_error("--m 64 --n 7168 --k 2048 --grouped --batch 100000000", "--batch",
                     "at most 33554431 groups of --m = 64 rows");
  expect_usage_error("--m 64 --n 64 --k 64 --hbm-gbps inf", "--hbm-gbps", "finite");
  // A flag given a value: CLI11 alone would read --grouped=2 (or --json=yes) as the flag.
  expect_usage_error("--m 64 --n 64 --k 64 --batch 2 --grouped=2", "--grouped", "expected no value (a flag");
  expect_usage_error("--m 64 --n 64 --k 64 --json=yes", "--json", "got 'yes'");
  expect_usage_error("--m 64 --n 64 --k 64 --sm-clock-mhz nan", "--sm-clock-mhz", "finite");
  expect_usage_error("--m 64 --n 64 --k 64 --time-us 0", "--time-us", "got 0");
  expect_usage_error("--suite deepseek --m 64", "--suite", "no --m/--n/--k");
  expect_usage_error("--suite llama", "--suite", "'llama'");
}

TEST(CliLedger, BadDtypesAndPresetsAreUsageErrors) {
  expect_usage_error("--m 64 --n 64 --k 64 --dtype fp7", "--dtype", "'fp7'");
  expect_usage_error("--m 64 --n 64 --k 64 --a-dtype bogus", "--a-dtype", "'bogus'");
  expect_usage_error("--m 64 --n 64 --k 64 --out-dtype x", "--out-dtype", "'x'");
  expect_usage_error("--m 64 --n 64 --k 64 --hw b200", "--hw", "'b200'");
  expect_usage_error("--m 64 --n 64 --k 64 --dtype fp4 --hw h200", "--dtype (on --hw h200)", "'fp4'");
  expect_usage_error("--m 64 --n 64 --k 64 --sf-a 1by128", "--sf-a", "'1by128'");
  expect_usage_error("--m 64 --n 64 --k 64 --hbm-gbps 0", "--hbm-gbps", "got 0");
}

TEST(CliLedger, TilesThatCannotFitAreUsageErrors) {
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 256x256x128 --stages 4", "--tile",
                     "exceeds the 232448 B per-block limit");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 256x256x64 --threads 128", "--tile", "512 fp32 accumulators");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 128x128", "--tile", "'128x128'");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 128x0x64", "--tile", "'128x0x64'");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 128x128x64 --threads 100", "--threads", "multiple of 32");
  // 0 silently meant "estimate" (TileShape's default); leaving --regs out is how to ask for that.
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 128x128x64 --regs 0", "--regs", "got 0");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --regs 0", "--regs", "leave --regs out for the estimate");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --tile 128x128x64 --regs -8", "--regs", "got -8");
  expect_usage_error("--m 4096 --n 4096 --k 256 --tile 128x128x64 --split-k 8", "--split-k", "at most");
  expect_usage_error("--m 4096 --n 4096 --k 4096 --hw ascend-950dt --tile 256x512x64", "--tile", "L0C needs");
}

TEST(CliLedger, AscendOptionsNeedATileAndDeviceNeedsAGpu) {
  expect_usage_error("--m 64 --n 64 --k 64 --hw ascend-950dt --l0-k 32", "--l0-k", "no tile");
  const Result ok = run_ledger("--m 4096 --n 4096 --k 4096 --hw ascend-950dt --tile 128x256x256 --l0-k 64 --json");
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["results"][0]["ascend"]["ok"], true);
  if (tilegemm::gpu_available()) {
    const Result r = run_ledger("--m 64 --n 64 --k 64 --hw device --json");
    EXPECT_EQ(r.status, 0) << r.err;
  } else {
    expect_usage_error("--m 64 --n 64 --k 64 --hw device", "--hw", "no CUDA GPU found");
  }
}

TEST(CliLedger, BadHardwareJsonIsAUsageError) {
  const std::string path = temp_path("bad.json");
  std::ofstream(path) << R"({"hbm_gbps": 4272,)";
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json '" + path + "'", "--hw-json", "malformed JSON");
  std::ofstream(path) << R"({"hbm": 4272})";
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json '" + path + "'", "--hw-json", "unknown key 'hbm'");
  // A number no double holds (was nlohmann's raw out_of_range exception, exit 1), and a zero SM count (was blamed
  // on the math dtype).
  std::ofstream(path) << R"({"hbm_gbps": 1e400})";
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json '" + path + "'", "--hw-json", "outside double's range");
  std::ofstream(path) << R"({"num_sms": 0})";
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json '" + path + "'", "--hw-json key 'num_sms'", "> 0");
  std::ofstream(path) << R"({"flop_per_cycle_fp4": 0})";  // a part without FP4: 0 is a fair value
  EXPECT_EQ(run_ledger("--m 64 --n 64 --k 64 --hw-json '" + path + "'").status, 0);
  std::remove(path.c_str());
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json /nonexistent/hw.json", "--hw-json", "cannot open");
}

// Only regular files of bounded size are read: an endless device (/dev/zero) or a directory is refused at once
// (the first used to read until memory ran out), and so is a file past the bound.
TEST(CliLedger, HardwareJsonMustBeABoundedRegularFile) {
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json /dev/zero", "--hw-json", "not a regular file");
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json /tmp", "--hw-json", "a directory");
  const std::string path = temp_path("huge.json");
  { std::ofstream create(path); }
  std::filesystem::resize_file(path, (std::uintmax_t{64} << 20) + 1);  // sparse: no 64 MiB written
  expect_usage_error("--m 64 --n 64 --k 64 --hw-json '" + path + "'", "--hw-json", "at most 64 MiB");
  std::remove(path.c_str());
}

}  // namespace

// One problem, one set of numbers: the ledger's selector line is the config `tilegemm plan` picks, with its floors,
// on the DeepSeek suite and on M-grouped problems, where --m means rows per group in both commands.
TEST(CliLedger, SelectorLineIsWhatThePlannerPicks) {
  auto expect_same = [](const nlohmann::json& row, const nlohmann::json& plan) {
    SCOPED_TRACE(plan["problem"].get<std::string>());
    ASSERT_TRUE(row.contains("selector")) << row.dump();
    const auto& sel = row["selector"];
    const auto& config = plan["config"];
    for (const char* key : {"block_m", "block_n", "block_k", "split_k"}) EXPECT_EQ(sel[key], config[key]) << key;
    EXPECT_EQ(sel["tiles"], plan["cost"]["tiles"]);
    EXPECT_DOUBLE_EQ(sel["dram_floor_us"].get<double>(), plan["cost"]["dram_floor_us"].get<double>());
    EXPECT_DOUBLE_EQ(sel["compute_floor_us"].get<double>(), plan["cost"]["compute_floor_us"].get<double>());
  };
  const Result ledger = run_ledger("--suite deepseek --json"), plan = run_tilegemm("plan --suite deepseek --json");
  ASSERT_EQ(ledger.status, 0) << ledger.err;
  ASSERT_EQ(plan.status, 0) << plan.err;
  const auto rows = nlohmann::json::parse(ledger.out)["results"], plans = nlohmann::json::parse(plan.out);
  ASSERT_EQ(rows.size(), 18u);
  ASSERT_EQ(plans.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) expect_same(rows[i], plans[i]);
  for (const char* shape : {"--m 8192 --n 4096 --k 7168", "--m 4096 --n 7168 --k 2048"}) {
    const Result g = run_ledger(std::string(shape) + " --grouped --batch 4 --json");
    const Result p =
        run_tilegemm(std::string("plan ") + shape + " --gemm-type m_grouped_contiguous --num-groups 4 --json");
    ASSERT_EQ(g.status, 0) << g.err;
    ASSERT_EQ(p.status, 0) << p.err;
    expect_same(nlohmann::json::parse(g.out)["results"][0], nlohmann::json::parse(p.out)[0]);
  }
  // The text names both: the textbook rule with the tile it assumed, and what the planner launches.
  const Result text = run_ledger("--m 64 --n 2112 --k 7168");
  EXPECT_NE(text.out.find("split-K (textbook rule, tile 128x128x64)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("selector           64x16x128 data-parallel"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("planner floors     DRAM 7.37 us"), std::string::npos) << text.out;
}

TEST(CliLedger, GroupedMCountsRowsPerGroupAsInPlan) {
  const Result r = run_ledger("--m 256 --n 4096 --k 7168 --grouped --batch 8 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_EQ(row["m"].get<std::int64_t>(), 2048);  // the problem holds all groups' rows
  EXPECT_DOUBLE_EQ(row["flops"].get<double>(), 2.0 * 2048 * 4096 * 7168);
  const Result text = run_ledger("--m 256 --n 4096 --k 7168 --grouped --batch 8");
  EXPECT_NE(text.out.find("M=2048 N=4096 K=7168 (8 groups of 256 rows)"), std::string::npos) << text.out;
}

namespace {

TEST(CliVersion, NamesTheVersionTheCommitAndCuda) {
  const Result r = run_tilegemm("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  EXPECT_EQ(r.out.rfind(std::string("tilegemm ") + TILEGEMM_VERSION + " (commit ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("; CUDA "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" build, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", driver "), std::string::npos) << r.out;
  if (std::filesystem::exists(std::string(TILEGEMM_SOURCE_DIR) + "/.git"))  // built from a git checkout
    EXPECT_EQ(r.out.find("commit unknown"), std::string::npos) << r.out;
}

}  // namespace

// The MQA-logits operators' ledger without their configuration: floors, bound, and options named on bad input.
TEST(CliLedger, MqaLogitsFloorsAndBound) {
  const Result r = run_ledger("--op paged_mqa_logits --batch 256 --context 8192 --heads 64 --next-n 2 --hw h100-sxm");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("-> dram-bound"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("partitions"), std::string::npos) << r.out;  // the ledger alone, not the launch
  const Result j = run_ledger("--op mqa_logits --m 4 --n 6 --heads 64 --head-dim 64 --json");
  ASSERT_EQ(j.status, 0) << j.err;
  const auto out = nlohmann::json::parse(j.out);
  // DeepGEMM's test windows [0, i + n - m): rows 0..3 see 2, 3, 4 and 5 tokens.
  EXPECT_DOUBLE_EQ(out["visible"].get<double>(), 2 + 3 + 4 + 5);
  EXPECT_DOUBLE_EQ(out["ledger"]["flops"].get<double>(), 2.0 * 14 * 64 * 64);
  expect_usage_error("--op mqa_logits --m 4 --n 6 --head-dim 96", "--head-dim", "32, 64 or 128");
  expect_usage_error("--op attention --m 4 --n 6", "--op", "mqa_logits");
}
