// `--compare` logic on two real H200 reports (tests/cpp/fixtures: run 3 before and run 4 after a cost-model
// change) and on edited copies: matching, ratios, geometric mean, the noise rule, skipped and unmatched rows.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

using namespace tilegemm;

namespace {

std::string fixture_text(const std::string& name) {
  std::ifstream in(std::string(TILEGEMM_SOURCE_DIR) + "/tests/cpp/fixtures/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const BenchReport& run3() {
  static const BenchReport r = report_from_json(fixture_text("bench-bf16-all-run3.json"));
  return r;
}
const BenchReport& run4() {
  static const BenchReport r = report_from_json(fixture_text("bench-bf16-all-run4.json"));
  return r;
}

const CompareRow& row_for(const ReportComparison& c, const std::string& shape) {
  for (const auto& row : c.rows)
    if (row.shape == shape) return row;
  throw std::runtime_error("no row " + shape);
}

}  // namespace

TEST(BenchCompare, NoiseRuleUsesTheLargerSpread) {
  EXPECT_TRUE(within_noise(1.03, 0.02, 0.04));   // 3 % < 4 %
  EXPECT_FALSE(within_noise(1.05, 0.02, 0.04));  // 5 % > 4 %
  EXPECT_TRUE(within_noise(0.97, 0.04, 0.01));   // symmetric in A and B, and below 1
  EXPECT_FALSE(within_noise(0.95, 0.04, 0.01));
  EXPECT_FALSE(within_noise(1.001, 0, 0));  // no spread measured: any difference counts
  EXPECT_TRUE(within_noise(1.0, 0.01, 0.01));
}

TEST(BenchCompare, RelativeSpreadIsStddevOverMedian) {
  BenchStats s;
  s.samples = 10, s.median_us = 50, s.stddev_us = 2;
  EXPECT_DOUBLE_EQ(relative_spread(s), 0.04);
  EXPECT_DOUBLE_EQ(relative_spread(BenchStats{}), 0.0);  // not measured
}

TEST(BenchCompare, RealRunsMatchEveryShapeAndGiveTheGeomeanOfRatios) {
  const ReportComparison c = compare_reports(run3(), run4());
  ASSERT_EQ(c.rows.size(), 22u);
  EXPECT_EQ(c.compared, 22);
  EXPECT_TRUE(c.only_in_a.empty());
  EXPECT_TRUE(c.only_in_b.empty());
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_TRUE(c.environment_notes.empty());  // same GPU, timer, budgets, versions

  // Independent of compare_reports: the geomean of run3/run4 medians straight from the JSON.
  const auto a = nlohmann::json::parse(fixture_text("bench-bf16-all-run3.json"))["rows"];
  const auto b = nlohmann::json::parse(fixture_text("bench-bf16-all-run4.json"))["rows"];
  double log_sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    log_sum += std::log(a[i]["ours"]["median_us"].get<double>() / b[i]["ours"]["median_us"].get<double>());
  EXPECT_NEAR(c.geomean_ratio, std::exp(log_sum / a.size()), 1e-12);
  EXPECT_NEAR(c.geomean_ratio, 0.994, 0.001);
  EXPECT_EQ(c.baseline_compared, 22);
  EXPECT_NEAR(c.baseline_geomean_ratio, 0.998, 0.001);  // cuBLAS, the control, barely moved
}

TEST(BenchCompare, RealRunsFlagOnlyTheShapesWhoseTileChangedBeyondTheSpread) {
  const ReportComparison c = compare_reports(run3(), run4());
  // Run 4 moved 4096x32768x512 from 256x112 to 128x256 tiles: 250.4 → 222.3 µs, 12.7 % against a 2.8 %
  // spread.
  const CompareRow& faster = row_for(c, "4096x32768x512");
  EXPECT_NEAR(faster.ratio, 1.1268, 1e-3);
  EXPECT_NEAR(faster.spread, 0.0280, 1e-3);
  EXPECT_FALSE(faster.noise);
  EXPECT_EQ(faster.config_a, "256x112x64 st3 wg2 cl1x1 sk1");
  EXPECT_EQ(faster.config_b, "128x256x64 st3 wg2 cl1x1 sk1");
  // ... and 4096x7168x16384 to 128x160 st5: 1364.6 → 1481.3 µs, 7.9 % slower against a 5.3 % spread.
  const CompareRow& slower = row_for(c, "4096x7168x16384");
  EXPECT_NEAR(slower.ratio, 0.9212, 1e-3);
  EXPECT_FALSE(slower.noise);
  // 8 groups × 4096 rows, 128x208 st4 → 128x256 st3: 2.4 % slower, spread 1.5 %.
  EXPECT_FALSE(row_for(c, "8x4096x4096x7168").noise);
  // The 4-group shape with the same N, K is a different row (groups are part of the key).
  EXPECT_TRUE(row_for(c, "4x8192x4096x7168").noise);
  // An unchanged config within its spread: 15.8 µs in both runs.
  const CompareRow& same = row_for(c, "64x7168x2048");
  EXPECT_EQ(same.config_a, same.config_b);
  EXPECT_TRUE(same.noise);
  EXPECT_EQ(c.beyond_noise, 3);
  EXPECT_EQ(c.faster, 1);
  EXPECT_EQ(c.slower, 2);
  // Every other shape is noise, and the counts agree with the rows.
  int noisy = 0;
  for (const auto& row : c.rows) noisy += row.noise;
  EXPECT_EQ(noisy, 19);
}

TEST(BenchCompare, AReportAgainstItselfIsAllNoise) {
  const ReportComparison c = compare_reports(run4(), run4());
  EXPECT_EQ(c.compared, 22);
  EXPECT_DOUBLE_EQ(c.geomean_ratio, 1.0);
  EXPECT_EQ(c.beyond_noise, 0);
  for (const auto& row : c.rows) {
    EXPECT_DOUBLE_EQ(row.ratio, 1.0);
    EXPECT_TRUE(row.noise) << row.shape;
    EXPECT_TRUE(row.baseline_noise) << row.shape;
  }
}

TEST(BenchCompare, UnmatchedErroredAndBaselineOnlyRows) {
  BenchReport a = run3(), b = run4();
  b.rows.erase(b.rows.begin());       // 64x2112x7168 only in A
  a.rows[1].layout = "tn";            // 64x24576x1536: layouts differ → unmatched both ways
  b.rows[5].error = "calc_diff 0.5";  // 128x2112x7168 in B (index shifted by the erase)
  b.rows[6].ours = BenchStats{};      // 128x24576x1536: B is baseline-only
  const ReportComparison c = compare_reports(a, b);
  ASSERT_EQ(c.only_in_a.size(), 2u);
  EXPECT_EQ(c.only_in_a[0], "dense 64x2112x7168 nt bf16");
  EXPECT_EQ(c.only_in_a[1], "dense 64x24576x1536 tn bf16");
  ASSERT_EQ(c.only_in_b.size(), 1u);
  EXPECT_EQ(c.only_in_b[0], "dense 64x24576x1536 nt bf16");
  ASSERT_EQ(c.skipped.size(), 2u);
  EXPECT_EQ(c.skipped[0], "128x2112x7168: B has an error (calc_diff 0.5)");
  EXPECT_EQ(c.skipped[1], "128x24576x1536: B has no numbers of ours");
  EXPECT_EQ(c.rows.size(), 20u);
  EXPECT_EQ(c.compared, 18);
  EXPECT_EQ(c.baseline_compared, 20);  // cuBLAS numbers survive an error of ours
  const CompareRow& errored = row_for(c, "128x2112x7168");
  EXPECT_FALSE(errored.has_ours);
  EXPECT_TRUE(errored.has_baseline);
}

TEST(BenchCompare, DifferentConditionsAreNoted) {
  BenchReport b = run4();
  b.env.timer = "cuda-graph";
  b.env.gpu_name = "NVIDIA H100 80GB HBM3";
  b.env.flush_bytes = 0;
  const ReportComparison c = compare_reports(run3(), b);
  ASSERT_EQ(c.environment_notes.size(), 3u);
  EXPECT_EQ(c.environment_notes[0], "GPU differs: A NVIDIA H200 vs B NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.environment_notes[1], "timer differs: A cuda-events vs B cuda-graph");
  EXPECT_EQ(c.environment_notes[2], "flush bytes differs: A 268435456 vs B 0");
}

TEST(BenchCompare, AReadOnlyFlushIsNotedAgainstAZeroFill) {
  BenchReport b = run4();  // recorded before FlushMode: a zero-fill
  EXPECT_EQ(b.env.flush, "zero") << "a report without the field was zero-filled";
  b.env.flush = std::string(flush_mode_name(FlushMode::kRead));
  const ReportComparison c = compare_reports(run3(), b);
  ASSERT_EQ(c.environment_notes.size(), 1u);
  EXPECT_EQ(c.environment_notes[0], "flush differs: A zero-fill vs B read-only pass");
  EXPECT_TRUE(compare_reports(run3(), run4()).environment_notes.empty());
}

TEST(BenchCompare, MarkdownShowsRatiosVerdictsAndSummary) {
  const std::string md = comparison_to_markdown(compare_reports(run3(), run4()), "run3.json", "run4.json");
  EXPECT_NE(md.find("A = run3.json\nB = run4.json"), std::string::npos) << md;
  EXPECT_NE(md.find("| shape | layout | config A | config B | A µs | B µs | ratio | spread | verdict |"),
            std::string::npos);
  EXPECT_NE(md.find("| 4096x32768x512 | nt | `256x112x64 st3 wg2 cl1x1 sk1` | `128x256x64 st3 wg2 cl1x1 sk1` | "
                    "250.4 | 222.3 | 1.127× | ±2.8% | **B faster** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 64x7168x2048 | nt | `64x64x64 st13 wg1 cl1x1 sk1` | same | 15.8 | 15.8 | 1.000× |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**B slower**"), std::string::npos);
  EXPECT_NE(md.find("Geometric mean ratio (ours, A/B): **0.994×** over 22 shapes; 3 beyond noise (1 faster in "
                    "B, 2 slower in B)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Geometric mean ratio (cuBLAS, A/B): 0.998× over 22 shapes."), std::string::npos);
}
