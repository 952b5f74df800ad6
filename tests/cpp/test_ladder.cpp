// The ladder without a GPU: rung table, operand checks naming the argument, the ledger's predicted traffic,
// the report writers and the CLI's ledger-only output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "expect_invalid.hpp"
#include "ladder/ladder.hpp"

using namespace tilegemm;
using test_util::expect_invalid;

namespace {

// Views over a fake, 16-byte aligned device address: the checks never touch memory.
void* fake_ptr() {
  return reinterpret_cast<void*>(std::uintptr_t{1} << 20);
}
TensorView bf16_matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return TensorView::matrix(fake_ptr(), DType::kBFloat16, rows, cols, ld);
}

ladder::LadderOptions shape(int m, int n, int k) {
  ladder::LadderOptions o;
  o.m = m, o.n = n, o.k = k;
  return o;
}

}  // namespace

TEST(LadderRungs, FiveRungsEachWithOneIdea) {
  std::set<std::string> names;
  for (int r = 0; r < ladder::kNumRungs; ++r) {
    const ladder::RungInfo info = ladder::rung_info(r);
    EXPECT_EQ(info.index, r);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.idea.empty());
    EXPECT_EQ(info.removes.empty(), r == 0) << "every rung but the first names what it removes";
  }
  EXPECT_EQ(ladder::rung_info(1).block_m, 128);
  EXPECT_EQ(ladder::rung_info(2).stages, 4);
  EXPECT_EQ(ladder::rung_info(2).smem_bytes, 4 * 2 * 128 * 32 * 2);  // 4 stages of a 128x32 A and B tile
  expect_invalid([] { ladder::rung_info(5); }, "rung");
  expect_invalid([] { ladder::rung_info(-1); }, "rung");
  // Rung 4's tile is the heuristics' choice for the shape.
  const ladder::RungInfo prod = ladder::rung_info_for(4, {4096, 4096, 4096}, hardware_preset("h200"));
  EXPECT_GE(prod.block_m, 64);
  EXPECT_GE(prod.threads, 256);
}

TEST(LadderOperands, BadViewsNameTheArgument) {
  const TensorView a = bf16_matrix(129, 72, 72), b = bf16_matrix(200, 72, 72), d = bf16_matrix(129, 200, 200);
  EXPECT_NO_THROW(ladder::validate_operands(a, b, d));
  EXPECT_NO_THROW(ladder::validate_operands(bf16_matrix(129, 72, 80), b, bf16_matrix(129, 200, 201)));

  TensorView fp32_a = a;
  fp32_a.dtype = DType::kFloat32;
  expect_invalid([&] { ladder::validate_operands(fp32_a, b, d); }, "a", "bf16");
  // MN-major A ([M,K] view of [K,M] storage): the ladder runs the nt layout only.
  expect_invalid(
      [&] { ladder::validate_operands(TensorView::matrix(fake_ptr(), DType::kBFloat16, 129, 72, 1, 129), b, d); }, "a",
      "K-major");
  expect_invalid([&] { ladder::validate_operands(bf16_matrix(129, 72, 76), b, d); }, "a", "multiple of 8");
  TensorView misaligned = a;
  misaligned.data = static_cast<char*>(fake_ptr()) + 2;
  expect_invalid([&] { ladder::validate_operands(misaligned, b, d); }, "a", "aligned");
  expect_invalid([&] { ladder::validate_operands(a, bf16_matrix(200, 64, 72), d); }, "b", "K = 72");
  expect_invalid([&] { ladder::validate_operands(bf16_matrix(129, 12, 16), bf16_matrix(200, 12, 16), d); }, "k",
                 "multiple of 8");
  expect_invalid([&] { ladder::validate_operands(a, b, bf16_matrix(128, 200, 200)); }, "d", "[129, 200]");
  TensorView fp32_d = d;
  fp32_d.dtype = DType::kFloat32;
  expect_invalid([&] { ladder::validate_operands(a, b, fp32_d); }, "d", "bf16");
  expect_invalid(
      [&] { ladder::validate_operands(a, b, TensorView::matrix(fake_ptr(), DType::kBFloat16, 129, 200, 1, 129)); }, "d",
      "column stride 1");
  // The rung index is checked before the operands; neither check needs a GPU.
  expect_invalid([&] { ladder::run_rung(7, a, b, d); }, "rung");
  expect_invalid([&] { ladder::run_rung(2, fp32_a, b, d); }, "a");
}

TEST(LadderTraffic, TheLedgerPredictsWhatEachRungMoves) {
  const HardwareModel hw = hardware_preset("h200");
  const ProblemShape s{4096, 4096, 4096};
  const double mnk = 4096.0 * 4096 * 4096;
  ladder::RungTraffic t[ladder::kNumRungs];
  for (int r = 0; r < ladder::kNumRungs; ++r) t[r] = ladder::predicted_traffic(r, s, hw);
  EXPECT_DOUBLE_EQ(t[0].load_bytes, 2 * mnk * 2);                        // 2K bf16 loads per output element
  EXPECT_DOUBLE_EQ(t[1].load_bytes, 2 * mnk * (1.0 / 128 + 1.0 / 128));  // b·MNK(1/bm + 1/bn)
  EXPECT_DOUBLE_EQ(t[2].load_bytes, t[1].load_bytes);                    // pipelining moves the same bytes
  EXPECT_DOUBLE_EQ(t[3].load_bytes, t[1].load_bytes);                    // ... and so does swizzling
  EXPECT_LE(t[4].load_bytes, t[3].load_bytes);                           // the production tile is at least as big
  // Two 256-thread CTAs of 64 KiB per SM; a row-major wave spans 9 m-blocks x all 32 n-blocks, a rasterised
  // one 16 x 17: rasterisation is what moves the DRAM estimate.
  EXPECT_EQ(t[2].resident_ctas, 2 * hw.num_sms);
  EXPECT_EQ(t[2].wave_n_blocks, 32);
  EXPECT_EQ(t[3].wave_m_blocks, ladder::kRasterGroup);
  EXPECT_LT(t[3].dram_bytes, t[2].dram_bytes);
  EXPECT_DOUBLE_EQ(t[1].dram_bytes, t[2].dram_bytes);
  const double minimum = 3 * 4096.0 * 4096 * 2;
  for (const auto& x : t) {
    EXPECT_DOUBLE_EQ(x.minimum_bytes, minimum);
    EXPECT_GE(x.dram_bytes, minimum);
  }
}

TEST(LadderReportTest, LedgerOnlyReportAndBadSizes) {
  const HardwareModel hw = hardware_preset("h200");
  expect_invalid([&] { ladder::ledger_report(shape(0, 8, 8), hw); }, "--m");
  expect_invalid([&] { ladder::ledger_report(shape(8, -1, 8), hw); }, "--n");
  expect_invalid([&] { ladder::ledger_report(shape(8, 8, 12), hw); }, "--k", "multiple of 8");
  auto no_reps = shape(8, 8, 8);
  no_reps.rep_ms = 0;
  expect_invalid([&] { ladder::ledger_report(no_reps, hw); }, "--reps-ms");

  const ladder::LadderReport report = ladder::ledger_report(shape(4096, 4096, 4096), hw);
  ASSERT_EQ(report.rows.size(), 5u);
  EXPECT_FALSE(report.all_passed()) << "nothing measured is not a pass";
  const std::string md = ladder::report_to_markdown(report);
  EXPECT_NE(md.find("M=4096 N=4096 K=4096"), std::string::npos);
  EXPECT_NE(md.find("| 0 | naive | 16x16 outputs | – | – | – | 274.9 GB"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3 | swizzle+raster | 128x128x32 s4 |"), std::string::npos) << md;
  const auto json = nlohmann::json::parse(ladder::report_to_json(report));
  EXPECT_EQ(json["rows"].size(), 5u);
  EXPECT_FALSE(json["rows"][0]["measured"].get<bool>());
  EXPECT_TRUE(json["rows"][0]["calc_diff"].is_null());
}

TEST(LadderReportTest, MeasuredRowsShowWhatEachRungBought) {
  ladder::LadderReport report = ladder::ledger_report(shape(256, 256, 256), hardware_preset("h200"));
  report.gpu_name = "NVIDIA H200";
  report.checked_rows = 256;
  const double medians[] = {400, 40, 20, 16, 8};
  for (int r = 0; r < 5; ++r) {
    auto& row = report.rows[static_cast<std::size_t>(r)];
    row.measured = true, row.passed = true, row.calc_diff = 1e-6;
    row.stats.median_us = medians[r], row.stats.samples = 10;
    row.tflops = 2.0 * 256 * 256 * 256 / (medians[r] * 1e-6) / 1e12;
    if (r > 0) row.speedup = medians[r - 1] / medians[r];
  }
  EXPECT_TRUE(report.all_passed());
  std::string md = ladder::report_to_markdown(report);
  EXPECT_NE(md.find("| 10.00× |"), std::string::npos) << md;
  EXPECT_NE(md.find("bought 1.25×"), std::string::npos) << md;
  EXPECT_NE(md.find("on 256 of 256 rows"), std::string::npos) << md;

  // An unwritten element makes calc_diff NaN: a FAIL in the table, null (not NaN) in the JSON.
  report.rows[2].calc_diff = std::nan("");
  report.rows[2].passed = false;
  report.rows[2].error = "calc_diff nan >= 1e-05";
  EXPECT_FALSE(report.all_passed());
  md = ladder::report_to_markdown(report);
  EXPECT_NE(md.find("| nan | FAIL |"), std::string::npos) << md;
  EXPECT_NE(md.find("- rung 2: calc_diff nan"), std::string::npos) << md;
  const auto json = nlohmann::json::parse(ladder::report_to_json(report));
  EXPECT_TRUE(json["rows"][2]["calc_diff"].is_null());
  EXPECT_FALSE(json["all_passed"].get<bool>());
}

TEST(LadderCli, WithoutAGpuPrintsTheLedgerTableAndExitsZero) {
  if (ladder::why_no_ladder_gpu().empty()) GTEST_SKIP() << "an SM90 GPU is present: the CLI would measure";
  const auto json_path = std::filesystem::temp_directory_path() / fmt::format("ladder-{}.json", ::getpid());
  const auto r = cli_test::run_cli(fmt::format("ladder --m 4096 --n 4096 --k 4096 --json '{}'", json_path.string()));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("printing the ledger's predictions only"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Not measured:"), std::string::npos) << r.output;
  for (const char* rung :
       {"| 0 | naive", "| 1 | smem+mma", "| 2 | cp.async", "| 3 | swizzle+raster", "| 4 | tma+wgmma"})
    EXPECT_NE(r.output.find(rung), std::string::npos) << rung;
  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str());
  EXPECT_EQ(json["rows"].size(), 5u);
  EXPECT_EQ(json["m"].get<int>(), 4096);
  std::filesystem::remove(json_path);
}

TEST(LadderCli, BadArgumentsExitTwoNamingTheArgument) {
  auto r = cli_test::run_cli("ladder --m 256 --n 256 --k 100");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--k: expected a positive multiple of 8"), std::string::npos) << r.output;
  r = cli_test::run_cli("ladder --m 0 --n 256 --k 256");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--m: expected"), std::string::npos) << r.output;
  r = cli_test::run_cli("ladder --m 256 --k 256");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--n"), std::string::npos) << r.output;
  r = cli_test::run_cli("ladder --m 256 --n 256 --k 256 --reps-ms 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--reps-ms"), std::string::npos) << r.output;
  r = cli_test::run_cli("ladder --m 256 --n 256 --k 256 --hw nope");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--hw"), std::string::npos) << r.output;
}
