// Suite definitions, layout names and the ledger numbers of bench shapes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

TEST(BenchSuites, DeepSeekIsEighteenDenseShapes) {
  const auto shapes = suite_shapes("deepseek");
  ASSERT_EQ(shapes.size(), 18u);
  std::set<std::tuple<int, int, int>> seen;
  for (const auto& s : shapes) {
    EXPECT_EQ(s.type, GemmType::kNormal);
    EXPECT_EQ(s.groups, 1);
    seen.insert({s.m, s.n, s.k});
  }
  for (int m : {64, 128, 4096})
    for (auto [n, k] :
         {std::pair{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}})
      EXPECT_TRUE(seen.count({m, n, k})) << m << "x" << n << "x" << k;
}

TEST(BenchSuites, GroupedIsFourMGroupedShapes) {
  const auto shapes = suite_shapes("grouped");
  ASSERT_EQ(shapes.size(), 4u);
  std::set<std::tuple<int, int, int, int>> seen;
  for (const auto& s : shapes) {
    EXPECT_EQ(s.type, GemmType::kMGroupedContiguous);
    EXPECT_EQ(s.total_m(), 32768);
    seen.insert({s.groups, s.m, s.n, s.k});
  }
  EXPECT_TRUE(seen.count({4, 8192, 4096, 7168}));
  EXPECT_TRUE(seen.count({4, 8192, 7168, 2048}));
  EXPECT_TRUE(seen.count({8, 4096, 4096, 7168}));
  EXPECT_TRUE(seen.count({8, 4096, 7168, 2048}));
}

TEST(BenchSuites, AllIsBoth) {
  EXPECT_EQ(suite_shapes("all").size(), 22u);
}

TEST(BenchSuites, UnknownSuiteNamesTheArgumentAndTheChoices) {
  try {
    suite_shapes("llama");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--suite");
    EXPECT_NE(std::string(e.what()).find("deepseek"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'llama'"), std::string::npos);
  }
}

TEST(BenchLayouts, NamesMapToOperandMajors) {
  EXPECT_EQ(parse_layout("NT"), Layout::kNT);
  EXPECT_EQ(layout_name(Layout::kTN), "tn");
  EXPECT_EQ(layout_major_a(Layout::kNT), Major::kKMajor);
  EXPECT_EQ(layout_major_b(Layout::kNT), Major::kKMajor);
  EXPECT_EQ(layout_major_b(Layout::kNN), Major::kMNMajor);  // nn: b stored [K,N]
  EXPECT_EQ(layout_major_a(Layout::kTN), Major::kMNMajor);  // tn: a stored [K,M]
  EXPECT_EQ(layout_major_b(Layout::kTN), Major::kMNMajor);  // tn: d = a.T @ b, b stored [K,N]
  EXPECT_EQ(layout_major_a(Layout::kTT), Major::kMNMajor);
  EXPECT_EQ(layout_major_b(Layout::kTT), Major::kKMajor);   // tt: d = a.T @ b.T, b stored [N,K]
  EXPECT_THROW(parse_layout("xy"), InvalidArgument);
}

TEST(BenchLedger, DenseShapeFlopsBytesAndFloor) {
  const HardwareModel hw = hardware_preset("h200");
  const BenchShape shape{GemmType::kNormal, 1, 64, 7168, 16384};
  const ProblemLedger l = bench_ledger(shape, DType::kBFloat16, hw);
  EXPECT_DOUBLE_EQ(l.flops, 2.0 * 64 * 7168 * 16384);
  EXPECT_DOUBLE_EQ(l.min_bytes, 2.0 * (64.0 * 16384 + 7168.0 * 16384 + 64.0 * 7168));
  // Small M: memory bound, the floor is the bytes over HBM bandwidth.
  EXPECT_NEAR(l.time_floor_s, l.min_bytes / hw.hbm_bytes_per_s(), 1e-12);
}

TEST(BenchLedger, GroupedShapeCountsEveryGroupsWeightsAndTheRowIndex) {
  const HardwareModel hw = hardware_preset("h200");
  const BenchShape shape{GemmType::kMGroupedContiguous, 4, 8192, 4096, 7168};
  const ProblemShape p = ledger_shape(shape);
  EXPECT_EQ(p.m, 32768);
  EXPECT_EQ(p.batch, 4);
  EXPECT_TRUE(p.grouped);
  const ProblemLedger l = bench_ledger(shape, DType::kFloat32, hw);
  EXPECT_DOUBLE_EQ(l.flops, 2.0 * 32768 * 4096 * 7168);
  const double a = 2.0 * 32768 * 7168, b = 2.0 * 4 * 4096 * 7168, d = 4.0 * 32768 * 4096, index = 4.0 * 32768;
  EXPECT_DOUBLE_EQ(l.min_bytes, a + b + d + index);
}

TEST(BenchSuiteOptions, GroupedShapesRejectMNMajorA) {
  SuiteOptions o;
  o.shapes = suite_shapes("grouped");
  o.layout = Layout::kTN;
  try {
    validate_suite_options(o);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--layout");
  }
  o.layout = Layout::kNN;
  EXPECT_NO_THROW(validate_suite_options(o));
  o.out_dtype = DType::kFloat32;  // the M-grouped entry point writes bf16 only
  try {
    validate_suite_options(o);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--out-dtype");
  }
}

TEST(BenchSuiteOptions, BadValuesNameTheirArgument) {
  auto expect_argument = [](SuiteOptions o, const std::string& argument) {
    try {
      validate_suite_options(o);
      ADD_FAILURE() << "expected InvalidArgument for " << argument;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), argument);
    }
  };
  SuiteOptions base;
  base.shapes = {BenchShape{GemmType::kNormal, 1, 128, 256, 512}};
  EXPECT_NO_THROW(validate_suite_options(base));
  SuiteOptions o = base;
  o.out_dtype = DType::kFloat8E4M3;
  expect_argument(o, "--out-dtype");
  o = base;
  o.num_sms = -1;
  expect_argument(o, "--num-sms");
  o = base;
  o.shapes[0].k = 0;
  expect_argument(o, "--k");
  o = base;
  o.timing.rep_ms = 0;
  expect_argument(o, "--rep-ms");
  o = base;
  o.shapes.clear();
  expect_argument(o, "--suite");
}

TEST(BenchSuiteOptions, RunSuiteWithoutAGpuSaysSo) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  SuiteOptions o;
  o.shapes = {BenchShape{GemmType::kNormal, 1, 128, 256, 512}};
  try {
    run_suite(o);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA GPU found"), std::string::npos);
  }
}
