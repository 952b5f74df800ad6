// Suite definitions, layout names and the ledger numbers of bench shapes.
#include <gtest/gtest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

namespace {
// A dense suite is exactly the six DeepSeek weights at each of the given M.
void expect_deepseek_weights_at(const std::string& suite, std::initializer_list<int> ms) {
  const auto shapes = suite_shapes(suite);
  ASSERT_EQ(shapes.size(), 6 * ms.size()) << suite;
  std::set<std::tuple<int, int, int>> seen;
  for (const auto& s : shapes) {
    EXPECT_EQ(s.type, GemmType::kNormal);
    EXPECT_EQ(s.groups, 1);
    seen.insert({s.m, s.n, s.k});
  }
  for (int m : ms)
    for (auto [n, k] : {std::pair{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}})
      EXPECT_TRUE(seen.count({m, n, k})) << suite << ": " << m << "x" << n << "x" << k;
}
}  // namespace

TEST(BenchSuites, DeepSeekIsEighteenDenseShapes) {
  expect_deepseek_weights_at("deepseek", {64, 128, 4096});
}

TEST(BenchSuites, DecodeIsTheSameWeightsAtTinyM) {
  expect_deepseek_weights_at("decode", {1, 8, 16, 32});
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

TEST(BenchSuites, MaskedTwinsTheGroupedShapes) {
  const auto grouped = suite_shapes("grouped"), masked = suite_shapes("masked");
  ASSERT_EQ(masked.size(), grouped.size());
  for (std::size_t i = 0; i < masked.size(); ++i) {
    EXPECT_EQ(masked[i].type, GemmType::kMGroupedMasked);
    // Same groups, rows per group (M_max = masked_m = expected_m) and (N, K): the same total M.
    EXPECT_EQ(masked[i].groups, grouped[i].groups);
    EXPECT_EQ(masked[i].m, grouped[i].m);
    EXPECT_EQ(masked[i].n, grouped[i].n);
    EXPECT_EQ(masked[i].k, grouped[i].k);
    EXPECT_EQ(masked[i].total_m(), 32768);
  }
}

TEST(BenchSuites, AllIsTheThree) {
  const auto all = suite_shapes("all");
  ASSERT_EQ(all.size(), 26u);
  EXPECT_EQ(all[17].type, GemmType::kNormal);
  EXPECT_EQ(all[18].type, GemmType::kMGroupedContiguous);
  EXPECT_EQ(all[22].type, GemmType::kMGroupedMasked);
  EXPECT_EQ(suite_names(), (std::vector<std::string>{"deepseek", "decode", "grouped", "masked", "all"}));
}

TEST(BenchSuites, UnknownSuiteNamesTheArgumentAndTheChoices) {
  try {
    suite_shapes("llama");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--suite");
    EXPECT_NE(std::string(e.what()).find("deepseek, decode, grouped, masked, all"), std::string::npos);
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
  EXPECT_EQ(layout_major_b(Layout::kTT), Major::kKMajor);  // tt: d = a.T @ b.T, b stored [N,K]
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

TEST(BenchLedger, Fp8CountsOneByteOperandsScalesAndTheFp8Peak) {
  const HardwareModel hw = hardware_preset("h200");
  const BenchShape shape{GemmType::kNormal, 1, 4096, 7168, 2048};
  const ProblemLedger l = bench_ledger(shape, DType::kFloat8E4M3, DType::kBFloat16, hw);
  EXPECT_EQ(l.math, DType::kFloat8E4M3);
  EXPECT_DOUBLE_EQ(l.peak_flops, hw.peak_flops(DType::kFloat8E4M3));
  EXPECT_DOUBLE_EQ(l.bytes.a, 4096.0 * 2048);
  EXPECT_DOUBLE_EQ(l.bytes.b, 7168.0 * 2048);
  EXPECT_DOUBLE_EQ(l.bytes.sf_a, 4.0 * 4096 * 16);  // 1x128 per token
  EXPECT_DOUBLE_EQ(l.bytes.sf_b, 4.0 * 56 * 16);    // 128x128 blocks
  EXPECT_DOUBLE_EQ(l.bytes.d, 2.0 * 4096 * 7168);
  // Large M is compute bound: the floor is the FLOPs over the fp8 peak, half the bf16 floor.
  const ProblemLedger bf16 = bench_ledger(shape, DType::kBFloat16, hw);
  EXPECT_NEAR(l.compute_floor_s * 2, bf16.compute_floor_s, 1e-12);
}

TEST(BenchLedger, GroupedFp8ScalesPerGroupAndMaskedMovesOneCountPerGroup) {
  const HardwareModel hw = hardware_preset("h200");
  const BenchShape contiguous{GemmType::kMGroupedContiguous, 8, 4096, 4096, 7168};
  const BenchShape masked{GemmType::kMGroupedMasked, 8, 4096, 4096, 7168};
  const ProblemLedger lc = bench_ledger(contiguous, DType::kFloat8E4M3, DType::kBFloat16, hw);
  const ProblemLedger lm = bench_ledger(masked, DType::kFloat8E4M3, DType::kBFloat16, hw);
  EXPECT_DOUBLE_EQ(lc.flops, 2.0 * 32768 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(lm.flops, lc.flops);
  EXPECT_DOUBLE_EQ(lc.bytes.b, 8.0 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(lc.bytes.sf_b, 8 * 4.0 * 32 * 56);
  EXPECT_DOUBLE_EQ(lc.bytes.extra, 4.0 * 32768);  // a group index per row
  EXPECT_DOUBLE_EQ(lm.bytes.extra, 4.0 * 8);      // masked_m per group
  EXPECT_TRUE(ledger_shape(masked).grouped);
}

TEST(BenchSuiteOptions, Fp8TakesNtBf16AndEveryShapeKind) {
  SuiteOptions o;
  o.dtype = DType::kFloat8E4M3;
  o.shapes = suite_shapes("all");
  EXPECT_NO_THROW(validate_suite_options(o));
  auto expect_argument = [](SuiteOptions bad, const std::string& argument, const std::string& fragment) {
    try {
      validate_suite_options(bad);
      ADD_FAILURE() << "expected InvalidArgument for " << argument;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), argument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  SuiteOptions nn = o;
  nn.shapes = suite_shapes("deepseek");
  nn.layout = Layout::kNN;
  expect_argument(nn, "--layout", "nt for --dtype fp8");
  SuiteOptions fp32 = o;
  fp32.shapes = suite_shapes("deepseek");
  fp32.out_dtype = DType::kFloat32;
  expect_argument(fp32, "--out-dtype", "bf16 for --dtype fp8");
  SuiteOptions int8 = o;
  int8.dtype = DType::kInt8;
  expect_argument(int8, "--dtype", "bf16 or fp8");
  SuiteOptions masked_tn;
  masked_tn.shapes = suite_shapes("masked");
  masked_tn.layout = Layout::kTN;
  expect_argument(masked_tn, "--layout", "A must be K-major");
}
