// Random operands and the streaming calc_diff of the harness.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bench/host_data.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

using namespace tilegemm;
using namespace tilegemm::bench_detail;

TEST(BenchRandom, ValuesAreNonZeroInsideTheUnitIntervalAndVaried) {
  std::vector<std::uint16_t> v(3'000'000);  // spans several chunks
  fill_random_bf16(v.data(), v.size(), 42);
  double sum = 0, sum_sq = 0;
  int negatives = 0;
  for (auto bits : v) {
    const float x = bf16_to_float(bits);
    ASSERT_NE(x, 0.0f);
    ASSERT_LE(std::fabs(x), 1.0f);
    sum += x, sum_sq += double(x) * x, negatives += x < 0;
  }
  const double n = double(v.size());
  EXPECT_NEAR(sum / n, 0.0, 0.01);           // uniform on (-1, 1): mean 0
  EXPECT_NEAR(sum_sq / n, 1.0 / 3.0, 0.01);  // and variance 1/3
  EXPECT_NEAR(negatives / n, 0.5, 0.01);
}

TEST(BenchRandom, DeterministicPerSeedAndDifferentAcrossSeeds) {
  std::vector<std::uint16_t> a(5000), b(5000), c(5000);
  fill_random_bf16(a.data(), a.size(), 7);
  fill_random_bf16(b.data(), b.size(), 7);
  fill_random_bf16(c.data(), c.size(), 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(BenchCalcDiff, IdenticalIsZeroAndScaledIsSmall) {
  std::vector<float> x{1.f, -2.f, 3.f, 0.5f}, y = x;
  EXPECT_DOUBLE_EQ(calc_diff(x.data(), y.data(), x.size(), DType::kFloat32), 0.0);
  for (auto& v : y) v *= 1.001f;
  // 1 − 2·1.001/(1 + 1.001²) ≈ 5e-7
  EXPECT_NEAR(calc_diff(x.data(), y.data(), x.size(), DType::kFloat32), 1 - 2 * 1.001 / (1 + 1.001 * 1.001),
              1e-9);
}

TEST(BenchCalcDiff, MatchesTheReferenceCalcDiffOnBf16) {
  std::vector<std::uint16_t> x(1000), y(1000);
  fill_random_bf16(x.data(), x.size(), 1);
  fill_random_bf16(y.data(), y.size(), 2);
  std::vector<double> xd, yd;
  for (std::size_t i = 0; i < x.size(); ++i)
    xd.push_back(bf16_to_float(x[i])), yd.push_back(bf16_to_float(y[i]));
  EXPECT_NEAR(calc_diff(x.data(), y.data(), x.size(), DType::kBFloat16), tilegemm::calc_diff(xd, yd), 1e-12);
}

TEST(BenchCalcDiff, NanPropagatesAndZerosAreEqual) {
  std::vector<float> x{1.f, std::nanf("")}, y{1.f, 1.f}, zeros{0.f, 0.f};
  EXPECT_TRUE(std::isnan(calc_diff(x.data(), y.data(), 2, DType::kFloat32)));
  EXPECT_DOUBLE_EQ(calc_diff(zeros.data(), zeros.data(), 2, DType::kFloat32), 0.0);
  // The poison the runner writes into D before our first call (all-ones bytes) reads as NaN.
  std::vector<std::uint16_t> poison{0xFFFF, 0xFFFF}, ones{0x3F80, 0x3F80};
  EXPECT_TRUE(std::isnan(calc_diff(poison.data(), ones.data(), 2, DType::kBFloat16)));
}

TEST(BenchCalcDiff, OtherDtypesAreRejected) {
  std::vector<std::uint8_t> x(4);
  EXPECT_THROW(calc_diff(x.data(), x.data(), 4, DType::kFloat8E4M3), InvalidArgument);
}
