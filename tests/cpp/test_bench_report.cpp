// The report writers on a hand-built report: derived rates, the ratio summary, JSON round trip, Markdown.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

namespace {

BenchStats stats(double median, int samples = 100) {
  BenchStats s;
  s.samples = samples;
  s.median_us = median;
  s.mean_us = median * 1.01;
  s.min_us = median * 0.98;
  s.max_us = median * 1.2;
  s.stddev_us = median * 0.02;
  return s;
}

BenchReport fixture() {
  BenchReport r;
  r.suite = "deepseek";
  BenchEnvironment& e = r.env;
  e.gpu_name = "NVIDIA H200";
  e.pci_bus_id = "00000000:19:00.0";
  e.sm_count = 132;
  e.num_sms = 0;
  e.l2_bytes = 60.0 * (1 << 20);
  e.clocks_before = {true, 1980, 3201, 1980, 120.5, 35};
  e.clocks_after = {true, 1755, 3201, 1980, 650.25, 61};
  e.driver_version = 13000;
  e.runtime_version = 13000;
  e.cublaslt_version = 130100;
  e.tilegemm_version = "0.1.0";
  e.commit = "abc1234-dirty";
  e.flush_bytes = 256LL << 20;
  e.warmup_ms = 25;
  e.rep_ms = 200;
  e.date_utc = "2026-11-30T12:00:00Z";
  e.peak_tflops = 989.4;
  e.hbm_gbps = 4800;

  BenchRow a;  // ours 80 µs, cuBLAS 100 µs → ratio 1.25
  a.m = 4096, a.n = 7168, a.k = 2048;
  a.config = "128x256x64 st4 wg2 cl1x1 sk1";
  a.config_full = "block=128x256x64 stages=4";
  a.flops = 2.0 * 4096 * 7168 * 2048;
  a.min_bytes = 2.0 * (4096.0 * 2048 + 7168.0 * 2048 + 4096.0 * 7168);
  a.floor_us = 40;
  a.ours = stats(80);
  a.cublas = stats(100);
  a.cublas_method = "cublasLt, 1 call per GEMM";
  a.calc_diff = 2.5e-6;

  BenchRow b = a;  // ours 125 µs, cuBLAS 100 µs → ratio 0.8
  b.m = 64, b.n = 2112, b.k = 7168;
  b.flops = 2.0 * 64 * 2112 * 7168;
  b.ours = stats(125);
  b.calc_diff = 1e-6;

  BenchRow c;  // grouped, ours failed: no numbers, an error
  c.kind = "m_grouped_contiguous";
  c.groups = 4, c.m = 32768, c.n = 4096, c.k = 7168;
  c.flops = 2.0 * 32768 * 4096 * 7168;
  c.floor_us = 1000;
  c.cublas = stats(2000);
  c.cublas_method = "cublasLt, 4 calls (one per group)";
  c.error = "m_grouped_bf16_gemm_contiguous: not available";

  r.rows = {a, b, c};
  return r;
}

}  // namespace

TEST(BenchRow, DerivedRatesComeFromTheMedian) {
  const BenchRow row = fixture().rows[0];
  EXPECT_NEAR(row.ours_tflops(), row.flops / 80e-6 / 1e12, 1e-9);
  EXPECT_NEAR(row.ours_gbps(), row.min_bytes / 80e-6 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(row.ours_pct_floor(), 50.0);
  EXPECT_NEAR(row.cublas_tflops(), row.flops / 100e-6 / 1e12, 1e-9);
  EXPECT_DOUBLE_EQ(row.ratio(), 1.25);
  EXPECT_EQ(row.shape_label(), "4096x7168x2048");
  EXPECT_EQ(fixture().rows[2].shape_label(), "4x8192x4096x7168");
}

TEST(BenchRow, NoRatioWithoutBothMeasurements) {
  const BenchRow row = fixture().rows[2];
  EXPECT_FALSE(row.has_ours());
  EXPECT_DOUBLE_EQ(row.ratio(), 0.0);
  EXPECT_DOUBLE_EQ(row.ours_tflops(), 0.0);
}

TEST(BenchSummary, GeomeanAndMinimumOverComparedRows) {
  const BenchSummary s = summarize_rows(fixture().rows);
  EXPECT_EQ(s.compared, 2);
  EXPECT_NEAR(s.geomean_ratio, 1.0, 1e-12);  // sqrt(1.25 × 0.8)
  EXPECT_DOUBLE_EQ(s.min_ratio, 0.8);
  EXPECT_EQ(s.min_ratio_shape, "64x2112x7168");
  EXPECT_EQ(s.errors, 1);
}

TEST(BenchSummary, RowsWithAnErrorDoNotCountEvenWithNumbers) {
  auto rows = fixture().rows;
  rows[1].error = "calc_diff too large";  // the 0.8 row
  const BenchSummary s = summarize_rows(rows);
  EXPECT_EQ(s.compared, 1);
  EXPECT_DOUBLE_EQ(s.geomean_ratio, 1.25);
  EXPECT_EQ(s.errors, 2);
}

TEST(BenchSummary, EmptyReportHasNoRatio) {
  const BenchSummary s = summarize_rows({});
  EXPECT_EQ(s.compared, 0);
  EXPECT_DOUBLE_EQ(s.geomean_ratio, 0.0);
  EXPECT_DOUBLE_EQ(s.min_ratio, 0.0);
}

TEST(BenchJson, RoundTripKeepsEveryMeasuredField) {
  const BenchReport in = fixture();
  const BenchReport out = report_from_json(report_to_json(in));
  EXPECT_EQ(out.suite, in.suite);
  EXPECT_EQ(out.env.gpu_name, in.env.gpu_name);
  EXPECT_EQ(out.env.pci_bus_id, in.env.pci_bus_id);
  EXPECT_EQ(out.env.sm_count, 132);
  EXPECT_DOUBLE_EQ(out.env.clocks_after.power_w, 650.25);
  EXPECT_TRUE(out.env.clocks_before.available);
  EXPECT_EQ(out.env.cublaslt_version, 130100);
  EXPECT_EQ(out.env.commit, "abc1234-dirty");
  EXPECT_EQ(out.env.timer, "cuda-events");
  EXPECT_EQ(out.env.flush_bytes, 256LL << 20);
  EXPECT_EQ(out.env.date_utc, in.env.date_utc);
  EXPECT_DOUBLE_EQ(out.env.peak_tflops, 989.4);
  ASSERT_EQ(out.rows.size(), in.rows.size());
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const BenchRow &a = in.rows[i], &b = out.rows[i];
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.groups, a.groups);
    EXPECT_EQ(std::tie(b.m, b.n, b.k), std::tie(a.m, a.n, a.k));
    EXPECT_EQ(b.config, a.config);
    EXPECT_EQ(b.config_full, a.config_full);
    EXPECT_DOUBLE_EQ(b.flops, a.flops);
    EXPECT_DOUBLE_EQ(b.floor_us, a.floor_us);
    EXPECT_EQ(b.ours.samples, a.ours.samples);
    EXPECT_DOUBLE_EQ(b.ours.median_us, a.ours.median_us);
    EXPECT_DOUBLE_EQ(b.ours.stddev_us, a.ours.stddev_us);
    EXPECT_DOUBLE_EQ(b.cublas.min_us, a.cublas.min_us);
    EXPECT_EQ(b.cublas_method, a.cublas_method);
    EXPECT_DOUBLE_EQ(b.calc_diff, a.calc_diff);
    EXPECT_EQ(b.error, a.error);
  }
}

TEST(BenchJson, CarriesDerivedRatesAndSummaryForOtherReaders) {
  const std::string json = report_to_json(fixture());
  EXPECT_NE(json.find("\"ratio_vs_cublas\": 1.25"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ours_pct_floor\": 50.0"), std::string::npos);
  EXPECT_NE(json.find("\"geomean_ratio_vs_cublas\""), std::string::npos);
  EXPECT_NE(json.find("\"min_ratio_shape\": \"64x2112x7168\""), std::string::npos);
}

TEST(BenchJson, MalformedOrIncompleteInputNamesTheArgument) {
  try {
    report_from_json("{not json", "--baseline");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--baseline");
  }
  EXPECT_THROW(report_from_json(R"({"suite": "x", "rows": []})"), InvalidArgument);  // no environment
}

// The message of report_from_json(`j`) naming "report 'r.json'" (the InvalidArgument it must throw).
std::string reader_error(const nlohmann::json& j) {
  try {
    report_from_json(j.dump(), "report 'r.json'");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

// Was nlohmann's "[json.exception.out_of_range.403] key 'median_us' not found", and a median <= 0 was read
// (the comparison printed "-nan×"): now one line with the path of the key and, for a median, the row's shape.
TEST(BenchJson, AMissingKeyOrABadMedianNamesItsPath) {
  const nlohmann::json good = nlohmann::json::parse(report_to_json(fixture()));
  auto expect_error = [&](nlohmann::json j, const std::string& fragment) {
    const std::string what = reader_error(j);
    EXPECT_EQ(what.rfind("report 'r.json': expected a tilegemm bench report in JSON, got ", 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find("json.exception"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  };
  nlohmann::json j = good;
  j.erase("suite");
  expect_error(j, "no key 'suite'");
  j = good;
  j["environment"].erase("timer");
  expect_error(j, "no key 'environment.timer'");
  j = good;
  j["rows"][1]["ours"].erase("median_us");
  expect_error(j, "no key 'rows[1].ours.median_us'");
  j = good;
  j["rows"][0]["m"] = "4096";
  expect_error(j, "'rows[0].m' = \"4096\" (not an integer)");
  j = good;
  j["rows"] = 5;
  expect_error(j, "'rows' = 5 (not an array)");
  j = good;
  j["rows"][0]["ours"]["median_us"] = 0;
  expect_error(j, "'rows[0].ours.median_us' = 0 in row 4096x7168x2048 (100 samples; a measured median is > 0 us)");
  j = good;
  j["rows"][0]["cublas"]["median_us"] = -3.5;
  expect_error(j, "'rows[0].cublas.median_us' = -3.5 in row 4096x7168x2048");
  j = good;
  j["rows"][0]["ours"]["median_us"] = nullptr;  // what report_to_json writes for a NaN median
  expect_error(j, "'rows[0].ours.median_us' = null (not a number)");
  // Not measured (samples 0) is not an error: its zero median is never divided by.
  j = good;
  j["rows"][0]["ours"] = {{"samples", 0}, {"median_us", 0}, {"mean_us", 0},
                          {"min_us", 0},  {"max_us", 0},    {"stddev_us", 0}};
  EXPECT_EQ(reader_error(j), "(accepted)");
  EXPECT_EQ(reader_error(good), "(accepted)");
}

TEST(BenchMarkdown, EnvironmentBlockOnTop) {
  const std::string md = report_to_markdown(fixture());
  EXPECT_EQ(md.rfind("# tilegemm bench: deepseek\n", 0), 0u);
  EXPECT_NE(md.find("| GPU | NVIDIA H200 (132 SMs, L2 60 MiB, PCI 00000000:19:00.0); ours limited to all SMs |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| clocks before | SM 1980 MHz (max 1980), memory 3201 MHz, 120.5 W, 35 °C |"), std::string::npos);
  EXPECT_NE(md.find("| driver / runtime / cuBLASLt | 13.0 / 13.0 / 13.1.0 |"), std::string::npos);
  EXPECT_NE(md.find("commit abc1234-dirty"), std::string::npos);
  EXPECT_NE(md.find("cuda-events, 256 MiB zeroed before each timed call, warm-up 25 ms, rep 200 ms, median"),
            std::string::npos);
  EXPECT_NE(md.find("2026-11-30T12:00:00Z"), std::string::npos);
}

TEST(BenchMarkdown, OneTableRowPerShape) {
  const std::string md = report_to_markdown(fixture());
  EXPECT_NE(md.find("| M | N | K | layout | config | ours µs | TFLOP/s | % floor | cuBLAS µs | TFLOP/s | "
                    "ratio | diff |"),
            std::string::npos);
  // 4096x7168x2048: 120.3 GFLOP in 80 µs = 1503 TFLOP/s; floor 40 µs = 50 %.
  EXPECT_NE(md.find("| 4096 | 7168 | 2048 | nt | `128x256x64 st4 wg2 cl1x1 sk1` | 80.0 | 1503 | 50% | 100.0 | 1203 | "
                    "1.250× | 2.5e-06 |"),
            std::string::npos)
      << md;
  // 1.94 GFLOP in 125 µs = 15.5 TFLOP/s; its 40 µs floor is 32 % of 125 µs.
  EXPECT_NE(md.find("| 64 | 2112 | 7168 | nt | `128x256x64 st4 wg2 cl1x1 sk1` | 125.0 | 16 | 32% | 100.0 | "
                    "19 | 0.800× |"),
            std::string::npos);
  // The failed grouped row (1.92 TFLOP in 2000 µs = 962 TFLOP/s): M as groups × rows, dashes where ours has
  // no numbers, cuBLAS still shown.
  EXPECT_NE(md.find("| 4×8192 | 4096 | 7168 | nt | - | - | - | - | 2000.0 | 962 | - | - |"), std::string::npos) << md;
}

TEST(BenchMarkdown, RunDetailsShowTheFastestCall) {
  const std::string md = report_to_markdown(fixture());
  // stats(80): min 0.98 x median; the failed row has no numbers of ours.
  EXPECT_NE(md.find("| 4096x7168x2048 | - | 100 samples | 2.0% | 78.4 | 100 samples | 2.0% | 98.0 | "
                    "`block=128x256x64 stages=4` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 4x8192x4096x7168 | - | - | - | - | 100 samples | 2.0% | 1960.0 | - |"), std::string::npos) << md;
}

TEST(BenchMarkdown, SummaryAndErrorsAtTheBottom) {
  const std::string md = report_to_markdown(fixture());
  const auto table = md.find("| M | N | K |");
  const auto summary =
      md.find("Geometric mean ratio vs cuBLAS: **1.000×** over 2 shapes; minimum 0.800× at 64x2112x7168.");
  ASSERT_NE(summary, std::string::npos) << md;
  EXPECT_GT(summary, table);
  EXPECT_NE(md.find("- m_grouped_contiguous 4x8192x4096x7168: m_grouped_bf16_gemm_contiguous: not available"),
            std::string::npos);
  EXPECT_NE(md.find("m_grouped_contiguous (cublasLt, 4 calls (one per group))"), std::string::npos) << md;
}

// ---- fp8 reports: the per-tensor column and masked vs contiguous -------------------------------------------

namespace {

BenchReport fp8_fixture() {
  BenchReport r = fixture();
  r.suite = "all";
  for (auto& row : r.rows) row.dtype = "fp8";
  r.rows[0].cublas_per_tensor = stats(90);  // 120.3 GFLOP in 90 µs = 1336 TFLOP/s
  r.rows[0].cublas_per_tensor_iterations = {10, 2000};
  BenchRow contiguous;  // 8×4096, ours 1000 µs
  contiguous.kind = "m_grouped_contiguous";
  contiguous.dtype = "fp8";
  contiguous.groups = 8, contiguous.m = 32768, contiguous.n = 4096, contiguous.k = 7168;
  contiguous.flops = 2.0 * 32768 * 4096 * 7168;
  contiguous.ours = stats(1000);
  contiguous.cublas = stats(1100);
  BenchRow masked = contiguous;  // its masked twin, 1050 µs
  masked.kind = "m_grouped_masked";
  masked.ours = stats(1050);
  BenchRow lonely = masked;  // no contiguous twin (different K)
  lonely.k = 2048;
  r.rows.push_back(contiguous);
  r.rows.push_back(masked);
  r.rows.push_back(lonely);
  return r;
}

}  // namespace

TEST(BenchFp8Report, PerTensorColumnRoundTripsAndIsNotInTheRatio) {
  const BenchReport r = fp8_fixture();
  EXPECT_NEAR(r.rows[0].cublas_per_tensor_tflops(), 2.0 * 4096 * 7168 * 2048 / 90e-6 * 1e-12, 1e-9);
  EXPECT_DOUBLE_EQ(r.rows[0].ratio(), 1.25);  // cuBLAS block-scaled 100 µs / ours 80 µs
  const BenchReport back = report_from_json(report_to_json(r));
  ASSERT_EQ(back.rows.size(), r.rows.size());
  EXPECT_EQ(back.rows[0].dtype, "fp8");
  EXPECT_EQ(back.rows[0].cublas_per_tensor.samples, 100);
  EXPECT_DOUBLE_EQ(back.rows[0].cublas_per_tensor.median_us, 90);
  EXPECT_EQ(back.rows[0].cublas_per_tensor_iterations.rep, 2000);
  EXPECT_FALSE(back.rows[1].has_cublas_per_tensor());
  EXPECT_EQ(back.rows[4].kind, "m_grouped_masked");
  const std::string json = report_to_json(r);
  EXPECT_NE(json.find("\"cublas_per_tensor_tflops\""), std::string::npos);
  EXPECT_NE(json.find("\"masked_over_contiguous\": 1.05"), std::string::npos) << json;
}

TEST(BenchFp8Report, ReportsWithoutThePerTensorFieldsStillRead) {
  // Drop the fields the way an older (bf16-only) report lacks them.
  nlohmann::json j = nlohmann::json::parse(report_to_json(fp8_fixture()));
  for (auto& row : j.at("rows")) row.erase("cublas_per_tensor"), row.erase("cublas_per_tensor_iterations");
  const BenchReport back = report_from_json(j.dump());
  EXPECT_FALSE(back.rows[0].has_cublas_per_tensor());
  EXPECT_EQ(back.rows[0].cublas_per_tensor_iterations.rep, 0);
}

TEST(BenchFp8Report, MarkdownHasThePerTensorColumnsOnlyWhenMeasured) {
  const std::string md = report_to_markdown(fp8_fixture());
  EXPECT_NE(md.find("| ratio | diff | per-tensor µs | TFLOP/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1.250× | 2.5e-06 | 90.0 | 1336 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.800× | 1.0e-06 | - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("1×128 (A) / 128×128 (B)"), std::string::npos);
  const std::string bf16 = report_to_markdown(fixture());
  EXPECT_EQ(bf16.find("per-tensor"), std::string::npos);
}

TEST(BenchFp8Report, MaskedRowsAreSetAgainstTheirContiguousTwins) {
  const BenchReport r = fp8_fixture();
  const auto pairs = masked_vs_contiguous(r.rows);
  ASSERT_EQ(pairs.size(), 1u);  // the twin-less masked row is left out
  EXPECT_EQ(pairs[0].shape, "8x4096x4096x7168");
  EXPECT_DOUBLE_EQ(pairs[0].ratio, 1.05);
  const std::string md = report_to_markdown(r);
  EXPECT_NE(md.find("| 8x4096x4096x7168 | 1050.0 | 1000.0 | 1.050× |"), std::string::npos) << md;
  // A masked row with an error is not compared.
  BenchReport failed = r;
  failed.rows[4].error = "m_grouped_fp8_gemm_masked: the SM90 FP8 kernel is not implemented yet";
  EXPECT_TRUE(masked_vs_contiguous(failed.rows).empty());
}

// ---- the read-B column (`--read-b`) ------------------------------------------------------------------------

TEST(BenchReadBColumn, PercentIsReadTimeOverOurTimeAndRoundTrips) {
  BenchReport r = fixture();
  r.rows[0].b_read = stats(60);  // ours 80 µs: 75% of the way to a read of B alone
  r.rows[0].b_read_iterations = {5, 3000};
  EXPECT_DOUBLE_EQ(r.rows[0].ours_pct_b_read(), 75.0);
  EXPECT_DOUBLE_EQ(r.rows[1].ours_pct_b_read(), 0.0) << "not measured";
  EXPECT_DOUBLE_EQ(r.rows[0].ratio(), 1.25) << "the read is not part of the ratio";
  const BenchReport back = report_from_json(report_to_json(r));
  EXPECT_DOUBLE_EQ(back.rows[0].b_read.median_us, 60);
  EXPECT_EQ(back.rows[0].b_read_iterations.rep, 3000);
  EXPECT_FALSE(back.rows[1].has_b_read());
  EXPECT_NE(report_to_json(r).find("\"ours_pct_b_read\": 75.0"), std::string::npos);
  // Reports written before the column existed still read.
  nlohmann::json j = nlohmann::json::parse(report_to_json(r));
  for (auto& row : j.at("rows")) row.erase("b_read"), row.erase("b_read_iterations");
  EXPECT_FALSE(report_from_json(j.dump()).rows[0].has_b_read());
}

TEST(BenchReadBColumn, MarkdownHasTheColumnsOnlyWhenMeasured) {
  BenchReport r = fixture();
  EXPECT_EQ(report_to_markdown(r).find("read B"), std::string::npos);
  r.rows[0].b_read = stats(60);
  const std::string md = report_to_markdown(r);
  EXPECT_NE(md.find("| ratio | diff | read B µs | % of read B |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1.250× | 2.5e-06 | 60.0 | 75% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.800× | 1.0e-06 | - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("no GEMM of the shape can be faster"), std::string::npos);
  // Rows 0 (75%) and 1 (read 100 µs against ours 125: 80%) count, row 2 (an error) does not: √(75 · 80) = 77%.
  r.rows[1].b_read = stats(100);
  r.rows[2].b_read = stats(10);
  EXPECT_NE(report_to_markdown(r).find("read of B alone: **77%** (geometric mean over 2 shapes)"), std::string::npos)
      << report_to_markdown(r);
  const BenchSummary s = summarize_rows(r.rows);
  EXPECT_EQ(s.b_read_compared, 2);
  EXPECT_NEAR(s.geomean_pct_b_read, std::sqrt(75.0 * 80.0), 1e-9);
  EXPECT_NE(report_to_json(r).find("\"b_read_compared\": 2"), std::string::npos);
  EXPECT_EQ(summarize_rows(fixture().rows).b_read_compared, 0);
}
