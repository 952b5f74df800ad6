// UE8M0 packing on the host: hand-checked words for every layout, bit-exact round trips on ragged shapes,
// validation errors naming the offending value and position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "expect_invalid.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/fp8_quant.hpp"

using namespace tilegemm;

namespace {

// Random powers of two 2^e, e in [-40, 20] (the range real FP8 scales live in, and then some).
std::vector<float> random_ue8m0(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exponent(-40, 20);
  std::vector<float> sf(count);
  for (float& v : sf) v = std::ldexp(1.0f, exponent(rng));
  return sf;
}

bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(Fp8Layout, Ue8m0Bytes) {
  EXPECT_EQ(float_to_ue8m0(1.0f), 127);
  EXPECT_EQ(float_to_ue8m0(2.0f), 128);
  EXPECT_EQ(float_to_ue8m0(0x1.0p-126f), 1);
  EXPECT_EQ(ue8m0_to_float(127), 1.0f);
  EXPECT_EQ(ue8m0_to_float(0), 0x1.0p-127f);
  EXPECT_TRUE(std::isnan(ue8m0_to_float(0xFF)));
  for (int e = 1; e < 255; ++e) EXPECT_EQ(float_to_ue8m0(ue8m0_to_float(static_cast<std::uint8_t>(e))), e);
}

TEST(Fp8Layout, Sm100WordsByHand) {
  // One row, kb = 5: word 0 holds K blocks 0..3 (block 0 in the low byte), word 1 block 4 and three 0 bytes.
  const std::vector<float> sf = {1.0f, 2.0f, 0.5f, 4.0f, 0x1.0p-10f};
  const std::vector<std::int32_t> packed = pack_ue8m0_sm100(sf.data(), 1, 1, 5);
  ASSERT_EQ(packed.size(), 2u * 4u);  // 2 packed K columns x TMA-aligned mn of 4
  EXPECT_EQ(static_cast<std::uint32_t>(packed[0]), 0x817E807Fu);
  EXPECT_EQ(packed[1], 0);  // padding rows are zero
  EXPECT_EQ(packed[2], 0);
  EXPECT_EQ(packed[3], 0);
  EXPECT_EQ(static_cast<std::uint32_t>(packed[4]), 127u - 10u);
  EXPECT_EQ(sm100_packed_ue8m0_size(3, 129, 56), 3u * 14u * 132u);
}

TEST(Fp8Layout, AscendHalvesByHand) {
  // Two rows, kb = 3: MN-major, so element (m, p) sits at p * mn + m; K block 2p in the low byte.
  const std::vector<float> sf = {1.0f, 2.0f,  4.0f,   // row 0
                                 0.5f, 0.25f, 8.0f};  // row 1
  const std::vector<std::int16_t> packed = pack_ue8m0_ascend(sf.data(), 1, 2, 3);
  ASSERT_EQ(packed.size(), 4u);
  EXPECT_EQ(static_cast<std::uint16_t>(packed[0]), 0x807Fu);  // row 0, blocks 0 and 1
  EXPECT_EQ(static_cast<std::uint16_t>(packed[1]), 0x7D7Eu);  // row 1, blocks 0 and 1
  EXPECT_EQ(static_cast<std::uint16_t>(packed[2]), 0x0081u);  // row 0, block 2 and the missing block 3
  EXPECT_EQ(static_cast<std::uint16_t>(packed[3]), 0x0082u);
  EXPECT_EQ(ascend_packed_ue8m0_size(2, 7, 5), 2u * 3u * 7u);
}

TEST(Fp8Layout, RoundTripsAreBitExactOnRaggedShapes) {
  for (int groups : {1, 3})
    for (int mn : {1, 7, 129, 4097})
      for (int kb : {1, 2, 3, 4, 5, 56}) {
        SCOPED_TRACE(::testing::Message() << groups << "x" << mn << "x" << kb);
        const std::vector<float> sf = random_ue8m0(static_cast<std::size_t>(groups) * mn * kb, mn * 7 + kb);
        ASSERT_TRUE(bits_equal(unpack_ue8m0_sm100(pack_ue8m0_sm100(sf.data(), groups, mn, kb), groups, mn, kb), sf));
        ASSERT_TRUE(bits_equal(unpack_ue8m0_ascend(pack_ue8m0_ascend(sf.data(), groups, mn, kb), groups, mn, kb), sf));
      }
}

TEST(Fp8Layout, QuantizerUe8m0ScalesPackWithoutLoss) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  std::vector<float> x(5 * 700);
  for (float& v : x) v = dist(rng);
  const Fp8Quantized q = quantize_per_token_1x128(x.data(), 5, 700, true);
  const auto packed = pack_ue8m0_sm100(q.scales.data(), 1, q.scale_rows, q.scale_cols);
  EXPECT_TRUE(bits_equal(unpack_ue8m0_sm100(packed, 1, q.scale_rows, q.scale_cols), q.scales));
  // Without the UE8M0 rounding the same scales are rejected.
  const Fp8Quantized plain = quantize_per_token_1x128(x.data(), 5, 700, false);
  test_util::expect_invalid([&] { pack_ue8m0_sm100(plain.scales.data(), 1, plain.scale_rows, plain.scale_cols); }, "sf",
                            "UE8M0 scales (powers of two, zero mantissa)");
}

TEST(Fp8Layout, ValidationNamesTheFirstBadScale) {
  std::vector<float> sf = random_ue8m0(2 * 3 * 4, 5);
  sf[(1 * 3 + 2) * 4 + 1] = 0.3f;  // group 1, row 2, K block 1
  test_util::expect_invalid([&] { validate_ue8m0(sf.data(), 2, 3, 4); }, "sf", "0.3 at (1, 2, 1)");
  test_util::expect_invalid([&] { pack_ue8m0_sm100(sf.data(), 2, 3, 4); }, "sf", "0.3 at (1, 2, 1)");
  test_util::expect_invalid([&] { pack_ue8m0_ascend(sf.data(), 2, 3, 4); }, "sf", "0.3 at (1, 2, 1)");
  for (float bad : {0.0f, -1.0f, 1.5f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                    0x1.0p-127f}) {
    std::vector<float> one = {1.0f, bad};
    SCOPED_TRACE(bad);
    test_util::expect_invalid([&] { validate_ue8m0(one.data(), 1, 1, 2); }, "sf", "at (0, 0, 1)");
  }
  EXPECT_NO_THROW(validate_ue8m0(random_ue8m0(64, 1).data(), 4, 4, 4));
}

TEST(Fp8Layout, BadShapesNameTheArgument) {
  const std::vector<float> sf(8, 1.0f);
  test_util::expect_invalid([&] { pack_ue8m0_sm100(nullptr, 1, 1, 1); }, "sf", "nullptr");
  test_util::expect_invalid([&] { pack_ue8m0_sm100(sf.data(), 0, 1, 1); }, "groups");
  test_util::expect_invalid([&] { pack_ue8m0_ascend(sf.data(), 1, -2, 1); }, "mn", "-2");
  test_util::expect_invalid([&] { pack_ue8m0_ascend(sf.data(), 1, 1, 0); }, "kb");
  test_util::expect_invalid([&] { unpack_ue8m0_sm100(std::vector<std::int32_t>(3), 1, 1, 1); }, "packed",
                            "4 int32 words");
  test_util::expect_invalid([&] { unpack_ue8m0_ascend(std::vector<std::int16_t>(3), 1, 2, 3); }, "packed",
                            "4 int16 elements");
}

TEST(Fp8Layout, KGroupedWordsByHand) {
  // Two groups of K = 640 and 256 with gran_k 128: 5 and 2 K-block rows of mn = 4 columns, rows one after
  // another. Group 0 takes packed rows 0 (its rows 0..3) and 1 (its row 4, three 0 bytes); group 1 row 2.
  const int mn = 4, sf_k = 7;
  std::vector<float> sf(sf_k * mn);
  for (int r = 0; r < sf_k; ++r)
    for (int m = 0; m < mn; ++m) sf[r * mn + m] = std::ldexp(1.0f, r - m);  // exponent byte 127 + r - m
  const std::vector<std::int32_t> packed = pack_ue8m0_k_grouped(sf.data(), sf_k, mn, {640, 256}, 128, 128, false);
  ASSERT_EQ(packed.size(), 3u * mn);
  auto word = [](int b0, int b1, int b2, int b3) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(b0) | b1 << 8 | b2 << 16 |
                                     static_cast<std::uint32_t>(b3) << 24);
  };
  for (int m = 0; m < mn; ++m) {
    SCOPED_TRACE(m);
    const int e = 127 - m;
    EXPECT_EQ(packed[0 * mn + m], word(e, e + 1, e + 2, e + 3));
    EXPECT_EQ(packed[1 * mn + m], word(e + 4, 0, 0, 0));
    EXPECT_EQ(packed[2 * mn + m], word(e + 5, e + 6, 0, 0));
  }
  // The same groups as prefix-sum ends with a 256 K alignment: group 1 starts at align(640, 256) = 768, so
  // its end is 1024. An empty group (end 1024 again) owns no packed row.
  EXPECT_EQ(pack_ue8m0_k_grouped(sf.data(), sf_k, mn, {640, 1024, 1024}, 128, 256, true), packed);
  // K sizes that are not multiples of gran_k round up to whole K blocks (640 + 64 needs 6 rows): the row past
  // sf_k reads as 0.0f, whose exponent byte is 0.
  const std::vector<std::int32_t> ragged = pack_ue8m0_k_grouped(sf.data(), sf_k, mn, {640 + 64, 256}, 128, 128, false);
  ASSERT_EQ(ragged.size(), 3u * mn);
  EXPECT_EQ(ragged[1 * mn + 0], word(127 + 4, 127 + 5, 0, 0));
  EXPECT_EQ(ragged[2 * mn + 0], word(127 + 6, 0, 0, 0));
}

TEST(Fp8Layout, KGroupedBadArgumentsNameTheArgument) {
  const std::vector<float> sf(8, 1.0f);
  test_util::expect_invalid([&] { pack_ue8m0_k_grouped(sf.data(), 2, 0, {128}, 128, 128, false); }, "mn");
  test_util::expect_invalid([&] { pack_ue8m0_k_grouped(sf.data(), 2, 4, {128}, 0, 128, false); }, "gran_k");
  test_util::expect_invalid([&] { pack_ue8m0_k_grouped(sf.data(), 2, 4, {128}, 128, 0, true); }, "k_alignment");
  test_util::expect_invalid([&] { pack_ue8m0_k_grouped(nullptr, 2, 4, {128}, 128, 128, false); }, "sf");
}
