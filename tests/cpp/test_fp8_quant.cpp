// Per-token / per-block quantisation, dequantisation, get_tma_aligned_size and the MN-major TMA-aligned
// scale layout on the host, including ragged shapes and every bad-input path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "expect_invalid.hpp"
#include "tilegemm/fp8_quant.hpp"

using namespace tilegemm;

namespace {

std::vector<float> random_matrix(int rows, int cols, std::uint32_t seed, float range = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-range, range);
  std::vector<float> x(static_cast<std::size_t>(rows) * cols);
  for (float& v : x) v = dist(rng);
  return x;
}

// Reference amax of every block_rows x 128 block, row-major [ceil(rows/block_rows), ceil(cols/128)].
std::vector<float> block_amax(const std::vector<float>& x, int rows, int cols, int block_rows) {
  const int scale_cols = (cols + 127) / 128;
  std::vector<float> amax(static_cast<std::size_t>((rows + block_rows - 1) / block_rows) * scale_cols, 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float& a = amax[(r / block_rows) * scale_cols + c / 128];
      a = std::max(a, std::fabs(x[r * cols + c]));
    }
  return amax;
}

// Checks scales and codes against their definition for every element, and the dequantisation error.
void check_quantized(const std::vector<float>& x, int rows, int cols, bool per_block, bool ue8m0) {
  const Fp8Quantized q = per_block ? quantize_per_block_128x128(x.data(), rows, cols, ue8m0)
                                   : quantize_per_token_1x128(x.data(), rows, cols, ue8m0);
  const int block_rows = per_block ? 128 : 1;
  ASSERT_EQ(q.rows, rows);
  ASSERT_EQ(q.cols, cols);
  ASSERT_EQ(q.scale_rows, (rows + block_rows - 1) / block_rows);
  ASSERT_EQ(q.scale_cols, (cols + 127) / 128);
  ASSERT_EQ(q.scales.size(), static_cast<std::size_t>(q.scale_rows) * q.scale_cols);
  ASSERT_EQ(q.data.size(), x.size());
  const std::vector<float> back = dequantize(q, per_block);
  const std::vector<float> amaxes = block_amax(x, rows, cols, block_rows);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      const float amax = amaxes[(r / block_rows) * q.scale_cols + c / 128];
      const float scale = q.scales[(r / block_rows) * q.scale_cols + c / 128];
      const float exact = std::max(amax, kFp8AmaxFloor) / kE4M3Max;
      if (ue8m0) {
        ASSERT_TRUE(is_ue8m0(scale)) << scale;
        ASSERT_GE(scale, exact);
        ASSERT_LT(scale / 2, exact);
      } else {
        ASSERT_EQ(scale, exact) << "(" << r << ", " << c << ")";
      }
      ASSERT_EQ(q.data[i], float_to_e4m3(x[i] / scale)) << "(" << r << ", " << c << ")";
      // e4m3 keeps 3 mantissa bits: relative error <= 2^-4 for normals, absolute <= 2^-10·scale below.
      ASSERT_LE(std::fabs(back[i] - x[i]), std::max(std::fabs(x[i]) * 0x1.0p-4f, scale * 0x1.0p-10f) * 1.0001f)
          << "(" << r << ", " << c << ")";
    }
}

}  // namespace

TEST(Fp8Quant, PerTokenMatchesDefinitionOnRaggedShapes) {
  for (auto [rows, cols] : {std::pair{1, 1}, {3, 128}, {5, 200}, {7, 384}, {2, 129}})
    for (bool ue8m0 : {false, true}) {
      SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " ue8m0 " << ue8m0);
      check_quantized(random_matrix(rows, cols, rows * 31 + cols), rows, cols, false, ue8m0);
    }
}

TEST(Fp8Quant, PerBlockMatchesDefinitionOnRaggedShapes) {
  for (auto [rows, cols] : {std::pair{1, 1}, {128, 128}, {130, 260}, {257, 100}})
    for (bool ue8m0 : {false, true}) {
      SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " ue8m0 " << ue8m0);
      check_quantized(random_matrix(rows, cols, rows * 17 + cols), rows, cols, true, ue8m0);
    }
}

TEST(Fp8Quant, BlockAmaxMapsTo448AndBlocksAreIndependent) {
  // Two per-token blocks in one row with very different magnitudes: each gets its own scale.
  std::vector<float> x(200, 0.001f);
  x[5] = -3.5f;    // amax of block 0
  x[150] = 0.02f;  // amax of block 1 (ragged: columns 128..199)
  const Fp8Quantized q = quantize_per_token_1x128(x.data(), 1, 200, false);
  EXPECT_EQ(q.scales[0], 3.5f / 448.0f);
  EXPECT_EQ(q.scales[1], 0.02f / 448.0f);
  EXPECT_EQ(q.data[5], 0xFE);    // -448
  EXPECT_EQ(q.data[150], 0x7E);  // +448
  // With UE8M0 the amax lands at or below 448 (the scale only grows).
  const Fp8Quantized u = quantize_per_token_1x128(x.data(), 1, 200, true);
  EXPECT_EQ(u.scales[0], 0x1.0p-7f);  // 3.5/448 = 2^-7 exactly
  EXPECT_EQ(u.data[5], 0xFE);
  EXPECT_LT(e4m3_to_float(u.data[150]), 448.0f);
}

TEST(Fp8Quant, ZeroBlockUsesTheAmaxFloor) {
  const std::vector<float> x(256, 0.0f);
  const Fp8Quantized q = quantize_per_block_128x128(x.data(), 2, 128, false);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], 1e-4f / 448.0f);
  for (std::uint8_t d : q.data) EXPECT_EQ(d, 0);
  EXPECT_EQ(quantize_per_block_128x128(x.data(), 2, 128, true).scales[0], 0x1.0p-22f);
}

TEST(Fp8Quant, NaNPropagatesThroughItsBlockOnly) {
  std::vector<float> x(256, 1.0f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  for (bool ue8m0 : {false, true}) {
    const Fp8Quantized q = quantize_per_token_1x128(x.data(), 1, 256, ue8m0);
    EXPECT_TRUE(std::isnan(q.scales[0]));
    EXPECT_EQ(q.data[3], 0x7F);
    EXPECT_FALSE(std::isnan(q.scales[1]));
    const std::vector<float> back = dequantize(q, false);
    EXPECT_TRUE(std::isnan(back[0]));
    EXPECT_NEAR(back[200], 1.0f, 1e-6f);
  }
}

TEST(Fp8Quant, BadInputNamesTheArgument) {
  const std::vector<float> x(16, 1.0f);
  test_util::expect_invalid([] { quantize_per_token_1x128(nullptr, 1, 1, false); }, "x", "nullptr");
  test_util::expect_invalid([&] { quantize_per_token_1x128(x.data(), 0, 4, false); }, "rows", "0");
  test_util::expect_invalid([&] { quantize_per_block_128x128(x.data(), 4, -1, true); }, "cols", "-1");
  Fp8Quantized q = quantize_per_token_1x128(x.data(), 2, 8, false);
  // Per-token scales read as per-block: 2 scale rows where ceil(2/128) = 1 is expected.
  test_util::expect_invalid([&] { dequantize(q, true); }, "q", "per-block");
  q.scales.pop_back();
  test_util::expect_invalid([&] { dequantize(q, false); }, "q", "holding 1 floats");
}

TEST(Fp8Quant, TmaAlignedSize) {
  EXPECT_EQ(get_tma_aligned_size(0, 4), 0);
  EXPECT_EQ(get_tma_aligned_size(1, 4), 4);
  EXPECT_EQ(get_tma_aligned_size(4, 4), 4);
  EXPECT_EQ(get_tma_aligned_size(129, 4), 132);
  EXPECT_EQ(get_tma_aligned_size(4097, 4), 4100);
  EXPECT_EQ(get_tma_aligned_size(7, 1), 16);
  EXPECT_EQ(get_tma_aligned_size(9, 2), 16);
  EXPECT_EQ(get_tma_aligned_size(3, 16), 3);
  test_util::expect_invalid([] { get_tma_aligned_size(4, 3); }, "elem_bytes", "3");
  test_util::expect_invalid([] { get_tma_aligned_size(-1, 4); }, "mn", "-1");
}

TEST(Fp8Quant, MnMajorTmaAlignedLayout) {
  const int groups = 2, mn = 5, kb = 3, aligned = 8;
  std::vector<float> sf(groups * mn * kb);
  for (std::size_t i = 0; i < sf.size(); ++i) sf[i] = static_cast<float>(i + 1);
  const std::vector<float> out = to_mn_major_tma_aligned(sf.data(), groups, mn, kb);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(groups * kb * aligned));
  for (int g = 0; g < groups; ++g)
    for (int k = 0; k < kb; ++k)
      for (int m = 0; m < aligned; ++m) {
        const float got = out[(g * kb + k) * aligned + m];
        if (m < mn)
          EXPECT_EQ(got, sf[(g * mn + m) * kb + k]) << g << " " << k << " " << m;
        else
          EXPECT_EQ(got, 0.0f) << "padding " << g << " " << k << " " << m;
      }
  // mn already a multiple of 4: no padding, a plain per-group transpose.
  const std::vector<float> square = to_mn_major_tma_aligned(sf.data(), 1, 4, 2);
  EXPECT_EQ(square, (std::vector<float>{1, 3, 5, 7, 2, 4, 6, 8}));
  test_util::expect_invalid([] { to_mn_major_tma_aligned(nullptr, 1, 1, 1); }, "sf");
  test_util::expect_invalid([&] { to_mn_major_tma_aligned(sf.data(), 0, 1, 1); }, "groups");
  test_util::expect_invalid([&] { to_mn_major_tma_aligned(sf.data(), 1, 0, 1); }, "mn");
  test_util::expect_invalid([&] { to_mn_major_tma_aligned(sf.data(), 1, 1, 0); }, "kb");
}
