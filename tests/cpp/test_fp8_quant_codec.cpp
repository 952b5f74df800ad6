// The host e4m3 codec and UE8M0 rounding: exhaustive over the 256 codes, every rounding boundary, and a
// brute-force nearest-value search on random floats as an independent reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "expect_invalid.hpp"
#include "tilegemm/fp8_quant.hpp"

using namespace tilegemm;

namespace {

bool is_nan_code(int c) {
  return (c & 0x7F) == 0x7F;
}

// The nearest finite e4m3 code to x by exhaustive search; ties go to the even code (mantissa LSB 0).
// Magnitudes past 448 saturate. Independent of float_to_e4m3's arithmetic.
std::uint8_t brute_force_e4m3(float x) {
  const double a = std::fabs(static_cast<double>(x));
  int best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c <= 0x7E; ++c) {
    const double err = std::fabs(static_cast<double>(e4m3_to_float(static_cast<std::uint8_t>(c))) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) best = c, best_err = err;
  }
  return static_cast<std::uint8_t>((std::signbit(x) ? 0x80 : 0) | best);
}

}  // namespace

TEST(Fp8QuantCodec, KnownCodes) {
  EXPECT_EQ(float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3(-2.0f), 0xC0);
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-448.0f), 0xFE);
  EXPECT_EQ(float_to_e4m3(0x1.0p-9f), 0x01);  // smallest subnormal
  EXPECT_EQ(float_to_e4m3(0x1.0p-6f), 0x08);  // smallest normal
  EXPECT_EQ(float_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x07), 7 * 0x1.0p-9f);
  EXPECT_EQ(e4m3_to_float(0x39), 1.125f);
  EXPECT_TRUE(std::signbit(e4m3_to_float(0x80)));
}

TEST(Fp8QuantCodec, EveryCodeRoundTripsExactly) {
  for (int c = 0; c < 256; ++c) {
    const float v = e4m3_to_float(static_cast<std::uint8_t>(c));
    if (is_nan_code(c)) {
      EXPECT_TRUE(std::isnan(v)) << c;
      EXPECT_EQ(float_to_e4m3(v), 0x7F) << c;
      continue;
    }
    EXPECT_EQ(float_to_e4m3(v), c) << "code " << c << " value " << v;
  }
}

TEST(Fp8QuantCodec, RoundsToNearestEvenAtEveryBoundary) {
  for (int c = 0; c < 0x7E; ++c) {
    for (int sign : {0, 0x80}) {
      const float lo = e4m3_to_float(static_cast<std::uint8_t>(c | sign));
      const float hi = e4m3_to_float(static_cast<std::uint8_t>((c + 1) | sign));
      const float mid = (lo + hi) / 2;  // exact: e4m3 neighbours differ in at most 5 significant bits
      ASSERT_EQ(mid * 2, lo + hi);
      const int even = (c & 1) ? c + 1 : c;
      SCOPED_TRACE(::testing::Message() << "between codes " << c << " and " << c + 1 << " sign " << sign);
      EXPECT_EQ(float_to_e4m3(mid), even | sign);
      EXPECT_EQ(float_to_e4m3(std::nextafter(mid, lo)), c | sign);
      EXPECT_EQ(float_to_e4m3(std::nextafter(mid, hi)), (c + 1) | sign);
    }
  }
}

TEST(Fp8QuantCodec, SaturatesAndMapsNaN) {
  EXPECT_EQ(float_to_e4m3(464.0f), 0x7E);  // would round to 512, which e4m3 lacks
  EXPECT_EQ(float_to_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(0x1.0p-10f), 0x00);  // half the smallest subnormal: tie to even (zero)
  EXPECT_EQ(float_to_e4m3(0x1.0p-30f), 0x00);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::denorm_min()), 0x00);
}

TEST(Fp8QuantCodec, MatchesBruteForceOnRandomFloats) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-14, 10);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::ldexp(mantissa(rng), exponent(rng));
    ASSERT_EQ(float_to_e4m3(x), brute_force_e4m3(x)) << x;
  }
}

TEST(Fp8QuantCodec, CeilToUe8m0RoundsUpToPowersOfTwo) {
  EXPECT_EQ(ceil_to_ue8m0(1.0f), 1.0f);
  EXPECT_EQ(ceil_to_ue8m0(1.5f), 2.0f);
  EXPECT_EQ(ceil_to_ue8m0(0.75f), 1.0f);
  EXPECT_EQ(ceil_to_ue8m0(std::nextafter(0.25f, 1.0f)), 0.5f);
  EXPECT_EQ(ceil_to_ue8m0(1e-4f / 448.0f), 0x1.0p-22f);  // the amax floor's scale: 2.23e-7 → 2^-22
  EXPECT_EQ(ceil_to_ue8m0(1e-40f), 0x1.0p-126f);         // subnormals go to the smallest UE8M0 value
  EXPECT_EQ(ceil_to_ue8m0(0x1.0p127f), 0x1.0p127f);
  EXPECT_TRUE(std::isinf(ceil_to_ue8m0(0x1.8p127f)));
  EXPECT_TRUE(std::isnan(ceil_to_ue8m0(std::numeric_limits<float>::quiet_NaN())));
  test_util::expect_invalid([] { ceil_to_ue8m0(0.0f); }, "scale", "positive");
  test_util::expect_invalid([] { ceil_to_ue8m0(-2.0f); }, "scale", "-2");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(1e-6f, 1e3f);
  for (int i = 0; i < 1000; ++i) {
    const float s = dist(rng), r = ceil_to_ue8m0(s);
    ASSERT_TRUE(is_ue8m0(r)) << s;
    ASSERT_GE(r, s);
    ASSERT_LT(r / 2, s);
  }
}

TEST(Fp8QuantCodec, IsUe8m0AcceptsOnlyPositiveNormalPowersOfTwo) {
  for (float yes : {1.0f, 0.5f, 1024.0f, 0x1.0p-126f, 0x1.0p127f}) EXPECT_TRUE(is_ue8m0(yes)) << yes;
  for (float no : {0.0f, -1.0f, 1.5f, 3.0f, 0x1.0p-127f, std::numeric_limits<float>::infinity(),
                   std::numeric_limits<float>::quiet_NaN(), std::nextafter(1.0f, 2.0f)})
    EXPECT_FALSE(is_ue8m0(no)) << no;
}
