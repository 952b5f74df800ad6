// The problem-level ledger against the seeds' worked numbers (tolerance 0.5% unless exact).
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {
namespace {

void expect_near_rel(double actual, double expected, double rel = 0.005) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "expected " << expected << ", got " << actual;
}

ProblemShape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  ProblemShape s;
  s.m = m, s.n = n, s.k = k;
  return s;
}

// Seed 000 §1.1 / §2.1: 4096³ fp16, the seed's C being our output D.
TEST(LedgerProblem, Square4096Fp16MatchesSeed000) {
  const ProblemLedger p =
      problem_ledger(shape(4096, 4096, 4096), OperandDtypes::uniform(DType::kFloat16), hardware_preset("h100-sxm"));
  EXPECT_DOUBLE_EQ(p.flops, 137438953472.0);
  EXPECT_DOUBLE_EQ(p.min_bytes, 100663296.0);  // 96 MiB
  EXPECT_DOUBLE_EQ(p.bytes.a, 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(p.bytes.c, 0.0);
  EXPECT_NEAR(p.intensity_all, 1365.3, 0.05);  // 2M/(3b)
  EXPECT_EQ(p.bound, BoundClass::kCompute);
  expect_near_rel(p.naive_ab_bytes, 2.75e11);
  EXPECT_DOUBLE_EQ(p.naive_ab_bytes, 2.0 * 4096.0 * 4096 * 4096 * 2);
  EXPECT_DOUBLE_EQ(p.time_floor_s, std::max(p.compute_floor_s, p.memory_floor_s));
  expect_near_rel(p.compute_floor_s, 137438953472.0 / 989.4e12);
}

TEST(LedgerProblem, AddendCIsReadOnceInItsOwnDtype) {
  OperandDtypes d = OperandDtypes::uniform(DType::kBFloat16);
  d.d = DType::kFloat32;
  d.with_c = true;
  d.c = DType::kFloat32;
  const ProblemLedger p = problem_ledger(shape(256, 512, 1024), d, hardware_preset("h200"));
  EXPECT_DOUBLE_EQ(p.bytes.c, 256.0 * 512 * 4);
  EXPECT_DOUBLE_EQ(p.bytes.d, 256.0 * 512 * 4);
  EXPECT_DOUBLE_EQ(p.min_bytes, 256.0 * 1024 * 2 + 512.0 * 1024 * 2 + 2 * 256.0 * 512 * 4);
}

// Seed 004 §5.2: M=4096 N=7168 K=16384 bf16 at 2229.9 µs on Ascend 950DT is 99.7–99.8% of 432.5 TFLOP/s.
TEST(LedgerTiming, Ascend950DtDenseBf16IsNinetyNinePointSevenPercent) {
  const ProblemLedger p = problem_ledger(shape(4096, 7168, 16384), OperandDtypes::uniform(DType::kBFloat16),
                                         hardware_preset("ascend-950dt"));
  const TimingLedger t = timing_ledger(p, 2229.9);
  EXPECT_GE(t.fraction_of_peak, 0.997);
  EXPECT_LE(t.fraction_of_peak, 0.998);
  expect_near_rel(t.tflops, 431.4);
  EXPECT_DOUBLE_EQ(t.fraction_of_floor, t.fraction_of_peak);  // compute-bound: the floor is the compute floor
  EXPECT_EQ(p.bound, BoundClass::kCompute);
}

// Seed 004 §5.3: fp8 A+B intensity 2MN/((M+N)·1) ≈ 251 at M=128 and ≈ 5213 at M=4096 (N=7168);
// the 950DT balance 865e12 / 3500e9 ≈ 247.
TEST(LedgerProblem, Fp8IntensityAndBalanceMatchSeed004) {
  const HardwareModel hw = hardware_preset("ascend-950dt");
  OperandDtypes d = OperandDtypes::uniform(DType::kFloat8E4M3);
  d.d = DType::kBFloat16;
  const ProblemLedger small = problem_ledger(shape(128, 7168, 7168), d, hw);
  const ProblemLedger large = problem_ledger(shape(4096, 7168, 7168), d, hw);
  EXPECT_NEAR(small.intensity_ab, 2.0 * 128 * 7168 / (128 + 7168), 1e-9);
  expect_near_rel(small.intensity_ab, 251);
  expect_near_rel(large.intensity_ab, 5213);
  expect_near_rel(small.machine_balance, 247);
  EXPECT_NEAR(small.machine_balance, hw.peak_flops(DType::kFloat8E4M3) / 3500e9, 1e-9);
  EXPECT_EQ(large.bound, BoundClass::kCompute);
  // Counting D as well, M=128 drops just under the balance point: the seed's "bandwidth problem".
  EXPECT_LT(small.intensity_all, small.machine_balance);
  EXPECT_EQ(small.bound, BoundClass::kMemory);
}

// Seed 004 §5.7: HC prenorm M=8192 N=24 K=28672, A bf16, B fp32 (TF32 math), D fp32 plus an fp32 [M] sum.
TEST(LedgerProblem, HcPrenormIsMemoryBoundAtSeed004Numbers) {
  OperandDtypes d;
  d.a = DType::kBFloat16;
  d.b = DType::kFloat32;
  d.d = DType::kFloat32;
  d.math = DType::kTFloat32;
  ProblemShape s = shape(8192, 24, 28672);
  s.extra_bytes = 8192.0 * 4;  // sqr_sum [M] fp32
  const HardwareModel hw = hardware_preset("ascend-950dt");
  const ProblemLedger p = problem_ledger(s, d, hw);
  expect_near_rel(p.min_bytes, 4.733e8);
  EXPECT_DOUBLE_EQ(p.min_bytes, 8192.0 * 28672 * 2 + 24.0 * 28672 * 4 + 8192.0 * 24 * 4 + 8192.0 * 4);
  EXPECT_GE(p.intensity_all, 23.8);
  EXPECT_LE(p.intensity_all, 23.9);
  EXPECT_EQ(p.bound, BoundClass::kMemory);
  EXPECT_EQ(p.math, DType::kTFloat32);
  const TimingLedger t = timing_ledger(p, 136.7);
  expect_near_rel(t.gbps, 3463);
  EXPECT_DOUBLE_EQ(t.fraction_of_floor, t.fraction_of_bandwidth);
  // Same verdict on Hopper.
  EXPECT_EQ(problem_ledger(s, d, hardware_preset("h200")).bound, BoundClass::kMemory);
}

TEST(LedgerProblem, PackedFourBitAndScaleFactorBytes) {
  OperandDtypes d;
  d.a = DType::kFloat8E4M3;
  d.b = DType::kFloat4E2M1;
  d.d = DType::kBFloat16;
  d.sf_a = ScaleFactors{1, 128, 32};    // A: one fp32 per row per 128 K
  d.sf_b = ScaleFactors{128, 128, 32};  // B: one fp32 per 128×128 block
  const ProblemLedger p = problem_ledger(shape(4096, 7168, 16384), d, hardware_preset("ascend-950dt"));
  EXPECT_DOUBLE_EQ(p.bytes.b, 7168.0 * 16384 / 2);  // two per byte
  EXPECT_DOUBLE_EQ(p.bytes.sf_a, 4096.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(p.bytes.sf_b, 56.0 * 128 * 4);
  EXPECT_EQ(p.math, DType::kFloat8E4M3);  // fp8×fp4 runs at the fp8 rate (seed 004 §5.2)
  d.sf_a.bits = 8;                        // UE8M0
  EXPECT_DOUBLE_EQ(problem_ledger(shape(4096, 7168, 16384), d, hardware_preset("ascend-950dt")).bytes.sf_a,
                   4096.0 * 128);
}

TEST(LedgerProblem, BatchedMultipliesEverythingGroupedOnlyB) {
  const HardwareModel hw = hardware_preset("h200");
  const OperandDtypes d = OperandDtypes::uniform(DType::kBFloat16);
  const ProblemLedger one = problem_ledger(shape(512, 4096, 7168), d, hw);
  ProblemShape batched = shape(512, 4096, 7168);
  batched.batch = 4;
  const ProblemLedger b = problem_ledger(batched, d, hw);
  EXPECT_DOUBLE_EQ(b.flops, 4 * one.flops);
  EXPECT_DOUBLE_EQ(b.min_bytes, 4 * one.min_bytes);
  ProblemShape grouped = shape(4 * 512, 4096, 7168);
  grouped.batch = 4;
  grouped.grouped = true;
  const ProblemLedger g = problem_ledger(grouped, d, hw);
  EXPECT_DOUBLE_EQ(g.flops, 4 * one.flops);
  EXPECT_DOUBLE_EQ(g.bytes.b, 4 * one.bytes.b);
  EXPECT_DOUBLE_EQ(g.bytes.a, 4 * one.bytes.a);
}

using test_util::expect_invalid;

TEST(LedgerProblem, BadInputNamesTheArgument) {
  const HardwareModel hw = hardware_preset("h200");
  const OperandDtypes d = OperandDtypes::uniform(DType::kBFloat16);
  expect_invalid([&] { problem_ledger(shape(0, 1, 1), d, hw); }, "--m", "got 0");
  expect_invalid([&] { problem_ledger(shape(1, -3, 1), d, hw); }, "--n", "got -3");
  expect_invalid([&] { problem_ledger(shape(1, 1, 0), d, hw); }, "--k", "positive");
  ProblemShape s = shape(1, 1, 1);
  s.batch = 0;
  expect_invalid([&] { problem_ledger(s, d, hw); }, "--batch", "got 0");
  OperandDtypes fp4 = OperandDtypes::uniform(DType::kFloat4E2M1);
  expect_invalid([&] { problem_ledger(shape(64, 64, 64), fp4, hw); }, "math dtype", "fp4");
  OperandDtypes bad_sf = d;
  bad_sf.sf_a = ScaleFactors{0, 128, 32};
  expect_invalid([&] { problem_ledger(shape(64, 64, 64), bad_sf, hw); }, "--sf-a", "0x128");
  const ProblemLedger p = problem_ledger(shape(64, 64, 64), d, hw);
  expect_invalid([&] { timing_ledger(p, 0); }, "--time-us", "got 0");
  expect_invalid([&] { timing_ledger(p, -5); }, "--time-us", "got -5");
}

TEST(LedgerSuite, DeepSeekSuiteHasEighteenShapes) {
  const auto suite = deepseek_suite();
  ASSERT_EQ(suite.size(), 18u);
  EXPECT_EQ(suite.front().m, 64);
  EXPECT_EQ(suite.front().n, 2112);
  EXPECT_EQ(suite.front().k, 7168);
  EXPECT_EQ(suite.back().m, 4096);
  EXPECT_EQ(suite.back().n, 7168);
  EXPECT_EQ(suite.back().k, 2048);
  EXPECT_EQ(suite[9].m, 128);
  EXPECT_EQ(suite[9].n, 7168);
  EXPECT_EQ(suite[9].k, 16384);
}

}  // namespace
}  // namespace tilegemm
