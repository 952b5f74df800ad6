// Random operands (bf16, e4m3), scales and their layouts, and the streaming calc_diff of the harness.
#include <gtest/gtest.h>

#include <cuda_fp8.h>

#include <algorithm>
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
  EXPECT_NEAR(calc_diff(x.data(), y.data(), x.size(), DType::kFloat32), 1 - 2 * 1.001 / (1 + 1.001 * 1.001), 1e-9);
}

TEST(BenchCalcDiff, MatchesTheReferenceCalcDiffOnBf16) {
  std::vector<std::uint16_t> x(1000), y(1000);
  fill_random_bf16(x.data(), x.size(), 1);
  fill_random_bf16(y.data(), y.size(), 2);
  std::vector<double> xd, yd;
  for (std::size_t i = 0; i < x.size(); ++i) xd.push_back(bf16_to_float(x[i])), yd.push_back(bf16_to_float(y[i]));
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

// ---- fp8 operands and scales -------------------------------------------------------------------------------

// The bench's e4m3 converter agrees with cuda_fp8.h's (round to nearest even, satfinite) on every code's
// value, on the midpoints between neighbouring codes (the ties) and on a sweep of arbitrary floats.
TEST(BenchE4m3, MatchesCudaFp8OnCodesTiesAndASweep) {
  auto cuda = [](float x) { return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)); };
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;  // NaN
    const float x = e4m3_to_float(static_cast<std::uint8_t>(code));
    EXPECT_EQ(float_to_e4m3(x), code == 0x80 ? 0x80 : code) << code;
    EXPECT_EQ(float_to_e4m3(x), cuda(x)) << x;
    if ((code & 0x7F) < 0x7E) {  // the tie halfway to the next code up
      const float next = e4m3_to_float(static_cast<std::uint8_t>(code + 1));
      const float mid = 0.5f * (x + next);
      EXPECT_EQ(float_to_e4m3(mid), cuda(mid)) << "tie " << mid;
    }
  }
  for (float x = -500.0f; x <= 500.0f; x += 0.0371f) ASSERT_EQ(float_to_e4m3(x), cuda(x)) << x;
  for (float x = 1e-4f; x < 0.05f; x *= 1.013f) ASSERT_EQ(float_to_e4m3(x), cuda(x)) << x;
  EXPECT_EQ(float_to_e4m3(1e9f), 0x7E);  // saturates at 448
  EXPECT_EQ(float_to_e4m3(-1e9f), 0xFE);
  EXPECT_EQ(float_to_e4m3(std::nanf("")), 0x7F);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), 0x1.0p-9f);
}

TEST(BenchE4m3, RandomOperandsAreNonZeroFiniteAndDeterministic) {
  std::vector<std::uint8_t> v(2'500'000), w(v.size()), other(v.size());
  fill_random_e4m3(v.data(), v.size(), 3);
  fill_random_e4m3(w.data(), w.size(), 3);
  fill_random_e4m3(other.data(), other.size(), 4);
  EXPECT_EQ(v, w);
  EXPECT_NE(v, other);
  double sum = 0, amax = 0;
  int negatives = 0;
  for (std::uint8_t bits : v) {
    ASSERT_NE(bits & 0x7F, 0) << "a zero";
    ASSERT_NE(bits & 0x7F, 0x7F) << "a NaN";
    const double x = e4m3_to_float(bits);
    sum += x, amax = std::max(amax, std::fabs(x)), negatives += x < 0;
  }
  EXPECT_NEAR(sum / v.size(), 0.0, 1.0);  // uniform on (-448, 448)
  EXPECT_EQ(amax, 448.0);                 // the quantisation range is used
  EXPECT_NEAR(negatives / double(v.size()), 0.5, 0.01);
}

TEST(BenchScales, PositiveAroundOneOver448) {
  std::vector<float> s(100'000);
  fill_random_scales(s.data(), s.size(), 11);
  float lo = 1e9f, hi = 0;
  for (float x : s) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_GE(lo, 0.5f / 448.0f);
  EXPECT_LT(hi, 2.0f / 448.0f);
  EXPECT_LT(lo, 0.51f / 448.0f);  // the range is covered
  EXPECT_GT(hi, 1.98f / 448.0f);
}

TEST(BenchScales, PerTokenLayoutIsMnMajorWithRowsPaddedToFour) {
  EXPECT_EQ(tma_aligned_rows(1), 4);
  EXPECT_EQ(tma_aligned_rows(64), 64);
  EXPECT_EQ(tma_aligned_rows(65), 68);
  // 2 groups × 3 rows × 2 K blocks: logical (g, r, j) = 100g + 10r + j.
  std::vector<float> logical;
  for (int g = 0; g < 2; ++g)
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < 2; ++j) logical.push_back(100.0f * g + 10.0f * r + j);
  const auto packed = pack_per_token_scales(logical, 2, 3, 2);
  ASSERT_EQ(packed.size(), 2u * 2 * 4);  // [G][kb][ld = 4]
  EXPECT_EQ(packed, (std::vector<float>{0, 10, 20, 0, 1, 11, 21, 0, 100, 110, 120, 0, 101, 111, 121, 0}));
  EXPECT_THROW(pack_per_token_scales(logical, 2, 3, 3), InvalidArgument);
}

// With M % 4 == 0 and kb % 4 == 0 (every DeepSeek shape) tilegemm's and cuBLASLt's layouts coincide; with a
// ragged M they differ, which is why the bench packs the same logical scales twice.
TEST(BenchScales, OursAndCuBlasLtsLayoutsAgreeOnlyOnAlignedShapes) {
  std::vector<float> logical(64 * 56);
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = float(i);
  EXPECT_EQ(pack_per_token_scales(logical, 1, 64, 56), pack_cublaslt_sfa(logical, 64, 56 * 128));
  std::vector<float> ragged(65 * 2, 1.0f);
  EXPECT_NE(pack_per_token_scales(ragged, 1, 65, 2).size(), pack_cublaslt_sfa(ragged, 65, 256).size());
}
