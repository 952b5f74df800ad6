// The packed layout of the weight-only quantised GEMM (wq_params.hpp) on the host: layouts and byte counts, pack /
// unpack round trips (int4 with and without zero points, int8, mxfp4; ragged n and k), the fragment-block table read
// back the way the kernel's lanes read it, single codes and scales pinned to their byte, exp_shift, the float64
// reference values, the GPTQ / AWQ importers against encoders written here, and every bad-input path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "expect_invalid.hpp"
#include "tilegemm/weight_quant.hpp"

using namespace tilegemm;

namespace {

constexpr DType kBf16 = DType::kBFloat16;
constexpr DType kFp16 = DType::kFloat16;

bool half_finite(std::uint16_t bits, DType t) {
  return t == kFp16 ? (bits & 0x7C00) != 0x7C00 : (bits & 0x7F80) != 0x7F80;
}

// Value of bf16 / fp16 bits from the IEEE definition (sign, biased exponent, fraction; subnormals).
double half_value(std::uint16_t bits, DType t) {
  const bool bf = t == kBf16;
  const int mant_bits = bf ? 7 : 10, bias = bf ? 127 : 15;
  const int e = (bits >> mant_bits) & (bf ? 0xFF : 0x1F), m = bits & ((1 << mant_bits) - 1);
  const double frac = m / static_cast<double>(1 << mant_bits);
  const double v = e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1.0 + frac, e - bias);
  return bits & 0x8000 ? -v : v;
}

std::uint16_t random_half(std::mt19937& rng, DType t) {
  std::uint16_t bits;
  do bits = static_cast<std::uint16_t>(rng());
  while (!half_finite(bits, t));
  return bits;
}

int logical_groups(WeightFormat f, int k, int group) {
  if (f == WeightFormat::kInt8) return 0;
  return f == WeightFormat::kMxfp4 ? (k + 31) / 32 : k / group;
}

// A random weight of the given shape: every field drawn fresh (finite scales of any magnitude, subnormals included).
WeightCodes random_weight(WeightFormat f, int n, int k, int group, bool zeros, DType dt, std::uint32_t seed) {
  std::mt19937 rng(seed);
  WeightCodes w;
  w.layout = make_weight_layout(f, n, k, group, zeros, dt);
  const int groups = logical_groups(f, k, w.layout.group_size);
  const std::size_t entries = static_cast<std::size_t>(n) * groups;
  w.codes.resize(static_cast<std::size_t>(n) * k);
  for (auto& c : w.codes) c = static_cast<std::uint8_t>(f == WeightFormat::kInt8 ? rng() & 0xFF : rng() & 0xF);
  if (f == WeightFormat::kInt4) {
    w.scales.resize(entries);
    for (auto& s : w.scales) s = random_half(rng, dt);
  }
  if (zeros) {
    w.zeros.resize(entries);
    for (auto& z : w.zeros) z = static_cast<std::uint8_t>(rng() & 0xF);
  }
  if (f == WeightFormat::kMxfp4) {
    w.exponents.resize(entries);
    for (auto& e : w.exponents) e = static_cast<std::uint8_t>(rng() % 255);
  }
  if (f == WeightFormat::kInt8) {
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    w.channel_scales.resize(n);
    for (auto& s : w.channel_scales) s = dist(rng);
  }
  return w;
}

void expect_same_layout(const WeightLayout& a, const WeightLayout& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.act_dtype, b.act_dtype);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.group_size, b.group_size);
  EXPECT_EQ(a.has_zeros, b.has_zeros);
  EXPECT_EQ(a.exp_shift, b.exp_shift);
  EXPECT_EQ(a.n_pad, b.n_pad);
  EXPECT_EQ(a.k_pad, b.k_pad);
}

void expect_same_codes(const WeightCodes& a, const WeightCodes& b) {
  expect_same_layout(a.layout, b.layout);
  EXPECT_EQ(a.codes, b.codes);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.exponents, b.exponents);
  EXPECT_EQ(a.zeros, b.zeros);
  ASSERT_EQ(a.channel_scales.size(), b.channel_scales.size());
  EXPECT_EQ(std::memcmp(a.channel_scales.data(), b.channel_scales.data(), a.channel_scales.size() * sizeof(float)), 0);
}

void expect_same_packed(const PackedWeight& a, const PackedWeight& b) {
  expect_same_layout(a.layout, b.layout);
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.zeros, b.zeros);
  ASSERT_EQ(a.channel_scales.size(), b.channel_scales.size());
  EXPECT_EQ(std::memcmp(a.channel_scales.data(), b.channel_scales.data(), a.channel_scales.size() * sizeof(float)), 0);
}

// The codes of a packed weight [n_pad][k_pad], read as the kernel's lanes read them, straight from the tables of
// wq_params.hpp. Every (row, k) of every fragment block must be read exactly once.
std::vector<int> read_codes_as_lanes(const PackedWeight& p) {
  const WeightLayout& l = p.layout;
  const bool int8 = l.format == WeightFormat::kInt8;
  const int chunks = l.k_pad / 64, block_bytes = int8 ? 1024 : 512;
  std::vector<int> out(static_cast<std::size_t>(l.n_pad) * l.k_pad, -1);
  // 4-bit: nibble j of word s is (row g + kRow[j], k 16t + 4s + kK[j]).
  constexpr int kRow[8] = {0, 8, 0, 8, 0, 8, 0, 8};
  constexpr int kK[8] = {0, 0, 2, 2, 1, 1, 3, 3};
  for (int rb = 0; rb < l.n_pad / 16; ++rb)
    for (int ch = 0; ch < chunks; ++ch) {
      const std::size_t base = (static_cast<std::size_t>(rb) * chunks + ch) * block_bytes;
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, t = lane % 4;
        auto put = [&](int row, int kk, int value) {
          int& slot = out[static_cast<std::size_t>(16 * rb + row) * l.k_pad + 64 * ch + kk];
          EXPECT_EQ(slot, -1) << "(" << 16 * rb + row << ", " << 64 * ch + kk << ") read twice";
          slot = value;
        };
        if (!int8) {
          for (int s = 0; s < 4; ++s)
            for (int j = 0; j < 8; ++j) {
              const int byte = p.data[base + lane * 16 + 4 * s + j / 2];
              put(g + kRow[j], 16 * t + 4 * s + kK[j], (byte >> (4 * (j % 2))) & 0xF);
            }
        } else {
          // Plane h holds steps 2h, 2h + 1; word w: s = 2h + w / 2, k0 = 16t + 4s (+ 2 for odd words); byte b is
          // (row g, k0), (row g, k0 + 1), (row g + 8, k0), (row g + 8, k0 + 1).
          for (int h = 0; h < 2; ++h)
            for (int word = 0; word < 4; ++word)
              for (int b = 0; b < 4; ++b) {
                const int s = 2 * h + word / 2, k0 = 16 * t + 4 * s + (word % 2 ? 2 : 0);
                put(g + (b >= 2 ? 8 : 0), k0 + b % 2, p.data[base + h * 512 + lane * 16 + 4 * word + b]);
              }
        }
      }
    }
  return out;
}

// Checks every byte of `p` against `w` through the header's tables (padding decodes to weight 0: code 0, int8's 128).
void check_against_table(const WeightCodes& w, const PackedWeight& p) {
  const WeightLayout& l = p.layout;
  const WeightFormat f = l.format;
  const int n = w.layout.n, k = w.layout.k;
  ASSERT_EQ(l.n_pad % 16, 0);
  ASSERT_EQ(l.k_pad % 64, 0);
  ASSERT_TRUE(l.n_pad >= n && l.n_pad < n + 16);
  const int block_bytes = f == WeightFormat::kInt8 ? 1024 : 512;
  ASSERT_EQ(p.data.size(), static_cast<std::size_t>(l.n_pad / 16) * (l.k_pad / 64) * block_bytes);
  const std::vector<int> codes = read_codes_as_lanes(p);
  for (int r = 0; r < l.n_pad; ++r)
    for (int c = 0; c < l.k_pad; ++c) {
      const int pad = f == WeightFormat::kInt8 ? 128 : 0;
      const int want = r < n && c < k ? w.codes[static_cast<std::size_t>(r) * k + c] : pad;
      ASSERT_EQ(codes[static_cast<std::size_t>(r) * l.k_pad + c], want) << "(" << r << ", " << c << ")";
    }
  const int lg = logical_groups(f, k, l.group_size);
  const int groups = f == WeightFormat::kInt8 ? 0 : l.k_pad / l.group_size;
  ASSERT_EQ(p.scales.size(), static_cast<std::size_t>(l.n_pad) * groups * (f == WeightFormat::kInt4 ? 2 : 1));
  ASSERT_EQ(p.zeros.size(), l.has_zeros ? static_cast<std::size_t>(l.n_pad) * groups : 0u);
  for (int r = 0; r < l.n_pad; ++r)
    for (int gi = 0; gi < groups; ++gi) {
      const std::size_t e = (static_cast<std::size_t>(r / 16) * groups + gi) * 16 + r % 16;
      const bool real = r < n && gi < lg;
      const std::size_t from = static_cast<std::size_t>(r) * lg + gi;
      const int scale = f == WeightFormat::kInt4 ? p.scales[2 * e] | p.scales[2 * e + 1] << 8 : p.scales[e];
      const int want = !real ? 0 : f == WeightFormat::kInt4 ? w.scales[from] : w.exponents[from];
      ASSERT_EQ(scale, want) << r << " " << gi;
      if (l.has_zeros) {
        ASSERT_EQ(p.zeros[e], real ? w.zeros[from] : 0) << r << " " << gi;
      }
    }
  ASSERT_EQ(p.channel_scales.size(), f == WeightFormat::kInt8 ? static_cast<std::size_t>(l.n_pad) : 0u);
  for (int r = 0; r < static_cast<int>(p.channel_scales.size()); ++r)
    ASSERT_EQ(p.channel_scales[r], r < n ? w.channel_scales[r] : 0.0f) << r;
}

// pack -> table check -> unpack -> pack, all bit-exact.
void check_round_trip(const WeightCodes& w) {
  const PackedWeight p = pack_weight(w);
  int shift = 0;
  for (const std::uint8_t e : w.exponents) shift = std::max(shift, e - 128);
  EXPECT_EQ(p.layout.exp_shift, shift);
  check_against_table(w, p);
  WeightCodes want = w;
  want.layout.exp_shift = shift;
  const WeightCodes back = unpack_weight(p);
  expect_same_codes(back, want);
  expect_same_packed(pack_weight(back), p);
}

// The byte / nibble of (r, c), written from the header's table.
struct Slot {
  std::size_t byte;
  int shift;
};

Slot four_bit_slot(int k_pad, int r, int c) {
  const std::size_t block = static_cast<std::size_t>(r / 16) * (k_pad / 64) + c / 64;
  const int lane = 4 * ((r % 16) % 8) + (c % 64) / 16, s = (c % 16) / 4;
  const int j = (r % 16 >= 8) + 2 * ((c % 4) >= 2) + 4 * (c % 2);
  return {block * 512 + lane * 16 + 4 * s + j / 2, 4 * (j % 2)};
}

std::size_t int8_slot(int k_pad, int r, int c) {
  const std::size_t block = static_cast<std::size_t>(r / 16) * (k_pad / 64) + c / 64;
  const int lane = 4 * ((r % 16) % 8) + (c % 64) / 16, s = (c % 16) / 4;
  const int h = s / 2, word = 2 * (s % 2) + ((c % 4) >= 2), b = (c % 2) + 2 * (r % 16 >= 8);
  return block * 1024 + h * 512 + lane * 16 + 4 * word + b;
}

// The only byte of `data` other than `background` (asserts there is exactly one).
std::size_t only_nonzero(const std::vector<std::uint8_t>& data, std::uint8_t background = 0) {
  std::size_t at = data.size(), count = 0;
  for (std::size_t i = 0; i < data.size(); ++i)
    if (data[i] != background) at = i, ++count;
  EXPECT_EQ(count, 1u);
  return at;
}

}  // namespace

TEST(WqPack, FormatNames) {
  for (const WeightFormat f : {WeightFormat::kInt4, WeightFormat::kInt8, WeightFormat::kMxfp4})
    EXPECT_EQ(parse_weight_format(weight_format_name(f)), f);
  EXPECT_EQ(weight_format_name(WeightFormat::kInt4), "int4");
  EXPECT_EQ(weight_format_name(WeightFormat::kInt8), "int8");
  EXPECT_EQ(weight_format_name(WeightFormat::kMxfp4), "mxfp4");
  EXPECT_EQ(parse_weight_format("INT4"), WeightFormat::kInt4);
  EXPECT_EQ(parse_weight_format("MxFp4"), WeightFormat::kMxfp4);
  test_util::expect_invalid([] { parse_weight_format("int5"); }, "format", "'int5'");
  test_util::expect_invalid([] { parse_weight_format("", "--weight-format"); }, "--weight-format");
}

TEST(WqPack, LayoutShapesAndByteCounts) {
  // int4 g32, ragged n and k: n_pad 32, k_pad 128, 4 groups; 2 x 2 blocks of 512 bytes; bf16 scales.
  WeightLayout l = make_weight_layout(WeightFormat::kInt4, 24, 96, 32, true, kBf16);
  EXPECT_EQ(l.n_pad, 32);
  EXPECT_EQ(l.k_pad, 128);
  EXPECT_EQ(l.group_size, 32);
  EXPECT_EQ(l.groups(), 4);
  EXPECT_EQ(l.data_bytes(), 2048);
  EXPECT_EQ(l.scale_bytes(), 32 * 4 * 2);
  EXPECT_EQ(l.zero_bytes(), 32 * 4);
  EXPECT_EQ(l.exp_shift, 0);
  // int4 g128: K padded to the group (k 128 stays, k 384 stays); no zeros.
  l = make_weight_layout(WeightFormat::kInt4, 1, 384, 128, false, kFp16);
  EXPECT_EQ(l.n_pad, 16);
  EXPECT_EQ(l.k_pad, 384);
  EXPECT_EQ(l.groups(), 3);
  EXPECT_EQ(l.data_bytes(), 6 * 512);
  EXPECT_EQ(l.scale_bytes(), 16 * 3 * 2);
  EXPECT_EQ(l.zero_bytes(), 0);
  // int4 g64, k 64.
  l = make_weight_layout(WeightFormat::kInt4, 40, 64, 64, false, kBf16);
  EXPECT_EQ(l.n_pad, 48);
  EXPECT_EQ(l.k_pad, 64);
  EXPECT_EQ(l.groups(), 1);
  // int8 per row (group k or 0, stored 0): 1024-byte blocks, no group scales.
  for (const int g : {0, 200}) {
    l = make_weight_layout(WeightFormat::kInt8, 40, 200, g, false, kFp16);
    EXPECT_EQ(l.group_size, 0);
    EXPECT_EQ(l.n_pad, 48);
    EXPECT_EQ(l.k_pad, 256);
    EXPECT_EQ(l.groups(), 0);
    EXPECT_EQ(l.data_bytes(), 3 * 4 * 1024);
    EXPECT_EQ(l.scale_bytes(), 0);
    EXPECT_EQ(l.zero_bytes(), 0);
  }
  // mxfp4 (group 0 means 32): k 72 -> k_pad 128, 4 exponent groups of one byte.
  for (const int g : {0, 32}) {
    l = make_weight_layout(WeightFormat::kMxfp4, 1, 72, g, false, kBf16);
    EXPECT_EQ(l.group_size, 32);
    EXPECT_EQ(l.n_pad, 16);
    EXPECT_EQ(l.k_pad, 128);
    EXPECT_EQ(l.groups(), 4);
    EXPECT_EQ(l.data_bytes(), 2 * 512);
    EXPECT_EQ(l.scale_bytes(), 16 * 4);
    EXPECT_EQ(l.zero_bytes(), 0);
  }
}

TEST(WqPack, Int4RoundTripsThroughTheHeaderTable) {
  std::uint32_t seed = 1;
  for (const auto& [n, k] : {std::pair{24, 96}, {40, 384}, {1, 128}, {16, 64}, {33, 256}, {7, 640}})
    for (const int g : {32, 64, 128})
      for (const bool zeros : {false, true})
        for (const DType dt : {kBf16, kFp16}) {
          if (k % g) continue;
          SCOPED_TRACE(::testing::Message()
                       << n << "x" << k << " g" << g << " zeros " << zeros << " dt " << static_cast<int>(dt));
          check_round_trip(random_weight(WeightFormat::kInt4, n, k, g, zeros, dt, seed++));
        }
}

TEST(WqPack, Int8RoundTripsThroughTheHeaderTable) {
  std::uint32_t seed = 100;
  for (const auto& [n, k] : {std::pair{24, 96}, {40, 200}, {1, 8}, {16, 64}, {17, 136}})
    for (const DType dt : {kBf16, kFp16}) {
      SCOPED_TRACE(::testing::Message() << n << "x" << k);
      check_round_trip(random_weight(WeightFormat::kInt8, n, k, k, false, dt, seed++));
    }
}

TEST(WqPack, Mxfp4RoundTripsThroughTheHeaderTable) {
  std::uint32_t seed = 200;
  for (const auto& [n, k] : {std::pair{24, 96}, {40, 72}, {1, 8}, {16, 64}, {31, 520}}) {
    SCOPED_TRACE(::testing::Message() << n << "x" << k);
    check_round_trip(random_weight(WeightFormat::kMxfp4, n, k, 32, false, kBf16, seed++));
  }
}

TEST(WqPack, AcceptsAnUnpaddedLayout) {
  // A layout written by hand (n_pad / k_pad unset, group 0 for mxfp4, group k for int8) packs as make_weight_layout's.
  WeightCodes w = random_weight(WeightFormat::kMxfp4, 24, 96, 32, false, kBf16, 7);
  w.layout.n_pad = w.layout.k_pad = 0;
  w.layout.group_size = 0;
  PackedWeight p = pack_weight(w);
  EXPECT_EQ(p.layout.group_size, 32);
  EXPECT_EQ(p.layout.n_pad, 32);
  EXPECT_EQ(p.layout.k_pad, 128);
  w = random_weight(WeightFormat::kInt8, 24, 96, 0, false, kBf16, 8);
  w.layout.group_size = 96;
  p = pack_weight(w);
  EXPECT_EQ(p.layout.group_size, 0);
  EXPECT_EQ(p.layout.k_pad, 128);
}

TEST(WqPack, OneFourBitCodePinsItsNibble) {
  // Hand-computed from the header's table for a 24 x 96 weight (n_pad 32, k_pad 128: two chunks per row block).
  //  (9, 75): block (0, 1) = byte 512; g 1, t 0, k 11 = 16t + 4s + 2 + 1 with s 2: j 7 -> lane 4, word 2, byte 3,
  //           high nibble: 512 + 64 + 8 + 3 = 587.
  //  (18, 36): block (1, 0) = byte 1024; g 2, t 2, k 4 = 4s with s 1: j 0 -> lane 10, word 1, byte 0, low nibble.
  //  (5, 7): block 0; g 5, t 0, k 7 = 4s + 2 + 1 with s 1: j 6 -> lane 20, word 1, byte 3, low nibble: 320 + 4 + 3.
  const struct {
    int r, c;
    std::size_t byte;
    std::uint8_t value;
  } hand[] = {{9, 75, 587, 0xA0}, {18, 36, 1188, 0x0A}, {5, 7, 327, 0x0A}};
  for (const WeightFormat f : {WeightFormat::kInt4, WeightFormat::kMxfp4}) {
    WeightCodes w = random_weight(f, 24, 96, 32, false, kBf16, 9);
    std::fill(w.codes.begin(), w.codes.end(), 0);
    for (const auto& h : hand) {
      w.codes[h.r * 96 + h.c] = 0xA;
      const PackedWeight p = pack_weight(w);
      EXPECT_EQ(only_nonzero(p.data), h.byte) << h.r << ", " << h.c;
      EXPECT_EQ(p.data[h.byte], h.value) << h.r << ", " << h.c;
      w.codes[h.r * 96 + h.c] = 0;
    }
    // Every position of the weight, against the formula written from the table.
    for (int r = 0; r < 24; ++r)
      for (int c = 0; c < 96; ++c) {
        w.codes[r * 96 + c] = 0xB;
        const PackedWeight p = pack_weight(w);
        const Slot want = four_bit_slot(128, r, c);
        ASSERT_EQ(only_nonzero(p.data), want.byte) << r << ", " << c;
        ASSERT_EQ(p.data[want.byte], 0xB << want.shift) << r << ", " << c;
        ASSERT_EQ(unpack_weight(p).codes, w.codes);
        w.codes[r * 96 + c] = 0;
      }
  }
}

TEST(WqPack, OneInt8CodePinsItsByte) {
  // Hand-computed (24 x 96, k_pad 128, 1024-byte blocks of two 512-byte planes):
  //  (9, 75): block 1; g 1, t 0, k 11: s 2 -> plane 1, word 2(s%2) + 1 = 1, byte 1 + 2 = 3: 1024 + 512 + 64 + 4 + 3.
  //  (18, 36): block 2; g 2, t 2, k 4: s 1 -> plane 0, word 2, byte 0: 2048 + 160 + 8.
  //  (5, 7): block 0; g 5, t 0, k 7: s 1 -> plane 0, word 3, byte 1: 320 + 12 + 1.
  const struct {
    int r, c;
    std::size_t byte;
  } hand[] = {{9, 75, 1607}, {18, 36, 2216}, {5, 7, 333}};
  WeightCodes w = random_weight(WeightFormat::kInt8, 24, 96, 0, false, kFp16, 10);
  // Every weight 0 (code 128, as the padding): one code at a time stands out.
  std::fill(w.codes.begin(), w.codes.end(), 128);
  for (const auto& h : hand) {
    w.codes[h.r * 96 + h.c] = 0xAB;
    const PackedWeight p = pack_weight(w);
    EXPECT_EQ(only_nonzero(p.data, 128), h.byte) << h.r << ", " << h.c;
    EXPECT_EQ(p.data[h.byte], 0xAB);
    w.codes[h.r * 96 + h.c] = 128;
  }
  for (int r = 0; r < 24; ++r)
    for (int c = 0; c < 96; ++c) {
      w.codes[r * 96 + c] = 0xFF;
      const PackedWeight p = pack_weight(w);
      ASSERT_EQ(only_nonzero(p.data, 128), int8_slot(128, r, c)) << r << ", " << c;
      ASSERT_EQ(unpack_weight(p).codes, w.codes);
      w.codes[r * 96 + c] = 128;
    }
}

TEST(WqPack, OneScalePinsItsEntry) {
  // (row 37, group 2) of [n_pad / 16][groups][16] with 4 groups: ((37 / 16) * 4 + 2) * 16 + 37 % 16 = 165.
  WeightCodes w = random_weight(WeightFormat::kInt4, 40, 256, 64, true, kBf16, 11);
  std::fill(w.scales.begin(), w.scales.end(), 0);
  std::fill(w.zeros.begin(), w.zeros.end(), 0);
  w.scales[37 * 4 + 2] = 0x3F81;
  w.zeros[37 * 4 + 2] = 13;
  PackedWeight p = pack_weight(w);
  for (std::size_t i = 0; i < p.scales.size(); ++i)  // little-endian: 0x81 then 0x3F
    EXPECT_EQ(p.scales[i], i == 330 ? 0x81 : i == 331 ? 0x3F : 0) << i;
  EXPECT_EQ(p.scales[331], 0x3F);
  EXPECT_EQ(only_nonzero(p.zeros), 165u);
  EXPECT_EQ(p.zeros[165], 13);
  // mxfp4, k 72: 3 exponents per row logically, 4 in the layout.
  w = random_weight(WeightFormat::kMxfp4, 40, 72, 32, false, kBf16, 12);
  std::fill(w.exponents.begin(), w.exponents.end(), 0);
  w.exponents[37 * 3 + 2] = 200;
  p = pack_weight(w);
  EXPECT_EQ(only_nonzero(p.scales), 165u);
  EXPECT_EQ(p.scales[165], 200);
  EXPECT_EQ(p.layout.exp_shift, 72);
  // int8: [n_pad] per-row scales, padding 0.
  w = random_weight(WeightFormat::kInt8, 40, 64, 0, false, kBf16, 13);
  p = pack_weight(w);
  ASSERT_EQ(p.channel_scales.size(), 48u);
  EXPECT_EQ(p.channel_scales[37], w.channel_scales[37]);
  for (int r = 40; r < 48; ++r) EXPECT_EQ(p.channel_scales[r], 0.0f);
}

TEST(WqPack, ExpShift) {
  for (const auto& [max_e, shift] : {std::pair{131, 3}, {120, 0}, {128, 0}, {129, 1}, {254, 126}, {0, 0}}) {
    WeightCodes w = random_weight(WeightFormat::kMxfp4, 24, 72, 32, false, kBf16, 14);
    for (auto& e : w.exponents) e = static_cast<std::uint8_t>(std::min<int>(e, max_e));
    w.exponents[5] = static_cast<std::uint8_t>(max_e);
    EXPECT_EQ(pack_weight(w).layout.exp_shift, shift) << max_e;
  }
  // Other formats: always 0.
  EXPECT_EQ(pack_weight(random_weight(WeightFormat::kInt4, 16, 64, 32, false, kBf16, 15)).layout.exp_shift, 0);
  EXPECT_EQ(pack_weight(random_weight(WeightFormat::kInt8, 16, 64, 0, false, kBf16, 16)).layout.exp_shift, 0);
}

TEST(WqPack, DequantizedWeightHandValues) {
  WeightCodes w = random_weight(WeightFormat::kInt4, 1, 64, 32, false, kFp16, 17);
  w.codes[0] = 3, w.scales[0] = 0x3800;  // (3 - 8) * 0.5
  EXPECT_EQ(dequantized_weight(w, 0, 0), -2.5);
  w.codes[1] = 15, w.scales[0] = 0x0001;  // fp16's smallest subnormal 2^-24
  EXPECT_EQ(dequantized_weight(w, 0, 1), 7 * std::ldexp(1.0, -24));
  w.codes[32] = 0, w.scales[1] = 0x83FF;  // -1023 * 2^-24 (largest subnormal, negative)
  EXPECT_EQ(dequantized_weight(w, 0, 32), 8 * 1023 * std::ldexp(1.0, -24));
  w.codes[33] = 9, w.scales[1] = 0x7BFF;  // 65504
  EXPECT_EQ(dequantized_weight(w, 0, 33), 65504.0);
  w = random_weight(WeightFormat::kInt4, 1, 64, 64, true, kBf16, 18);
  w.codes[10] = 2, w.zeros[0] = 5, w.scales[0] = 0x3E80;  // (2 - 5) * 0.25
  EXPECT_EQ(dequantized_weight(w, 0, 10), -0.75);
  w.scales[0] = 0x0001;  // bf16 subnormal 2^-133
  EXPECT_EQ(dequantized_weight(w, 0, 10), -3 * std::ldexp(1.0, -133));
  w = random_weight(WeightFormat::kInt8, 2, 8, 0, false, kBf16, 19);
  w.codes[8 + 3] = 0, w.channel_scales[1] = 0.125f;  // (0 - 128) / 8
  EXPECT_EQ(dequantized_weight(w, 1, 3), -16.0);
  w.codes[8 + 4] = 255;
  EXPECT_EQ(dequantized_weight(w, 1, 4), 127 * 0.125);
  w = random_weight(WeightFormat::kMxfp4, 1, 72, 32, false, kBf16, 20);
  w.codes[0] = 0xF, w.exponents[0] = 127;  // -6
  EXPECT_EQ(dequantized_weight(w, 0, 0), -6.0);
  w.codes[40] = 0x3, w.exponents[1] = 130;  // 1.5 * 8
  EXPECT_EQ(dequantized_weight(w, 0, 40), 12.0);
  w.codes[70] = 0x9, w.exponents[2] = 0;  // -0.5 * 2^-127
  EXPECT_EQ(dequantized_weight(w, 0, 70), -std::ldexp(1.0, -128));
  w.codes[71] = 0x8;  // -0
  EXPECT_EQ(dequantized_weight(w, 0, 71), 0.0);
}

TEST(WqPack, DequantizedWeightMatchesTheDefinition) {
  constexpr double kE2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  std::uint32_t seed = 300;
  for (const bool zeros : {false, true})
    for (const DType dt : {kBf16, kFp16}) {
      const WeightCodes w = random_weight(WeightFormat::kInt4, 24, 256, 64, zeros, dt, seed++);
      for (int r = 0; r < 24; ++r)
        for (int c = 0; c < 256; ++c) {
          const int q = w.codes[r * 256 + c], gi = r * 4 + c / 64, z = zeros ? w.zeros[gi] : 8;
          ASSERT_EQ(dequantized_weight(w, r, c), (q - z) * half_value(w.scales[gi], dt)) << r << ", " << c;
        }
    }
  const WeightCodes i8 = random_weight(WeightFormat::kInt8, 24, 96, 0, false, kBf16, seed++);
  for (int r = 0; r < 24; ++r)
    for (int c = 0; c < 96; ++c)
      ASSERT_EQ(dequantized_weight(i8, r, c), (i8.codes[r * 96 + c] - 128) * double{i8.channel_scales[r]});
  const WeightCodes mx = random_weight(WeightFormat::kMxfp4, 24, 72, 32, false, kBf16, seed++);
  for (int r = 0; r < 24; ++r)
    for (int c = 0; c < 72; ++c) {
      const int q = mx.codes[r * 72 + c];
      const double v = (q & 8 ? -1 : 1) * std::ldexp(kE2m1[q & 7], mx.exponents[r * 3 + c / 32] - 127);
      ASSERT_EQ(dequantized_weight(mx, r, c), v) << r << ", " << c;
    }
}

TEST(WqPack, LayoutBadInputNamesTheArgument) {
  using F = WeightFormat;
  test_util::expect_invalid([] { make_weight_layout(F::kInt4, 0, 64, 32, false, kBf16); }, "n", "got 0");
  test_util::expect_invalid([] { make_weight_layout(F::kInt4, 16, 0, 32, false, kBf16); }, "k", "got 0");
  test_util::expect_invalid([] { make_weight_layout(F::kInt8, 16, -8, 0, false, kBf16); }, "k");
  test_util::expect_invalid([] { make_weight_layout(F::kInt8, 16, 100, 0, false, kBf16); }, "k", "16-byte");
  test_util::expect_invalid([] { make_weight_layout(F::kMxfp4, 16, 36, 32, false, kBf16); }, "k", "16-byte");
  test_util::expect_invalid([] { make_weight_layout(F::kInt4, 16, 64, 32, false, DType::kFloat32); }, "act_dtype");
  test_util::expect_invalid([] { make_weight_layout(F::kInt8, 16, 64, 0, false, DType::kInt8); }, "act_dtype");
  for (const int g : {0, 16, 48, 256, -32})
    test_util::expect_invalid([g] { make_weight_layout(F::kInt4, 16, 512, g, false, kBf16); }, "group_size");
  // 200 is a multiple of 8 but not of 32: the int4 groups would not tile K.
  test_util::expect_invalid([] { make_weight_layout(F::kInt4, 16, 200, 32, false, kBf16); }, "k", "group size 32");
  test_util::expect_invalid([] { make_weight_layout(F::kInt4, 16, 192, 128, true, kBf16); }, "k");
  test_util::expect_invalid([] { make_weight_layout(F::kInt8, 16, 128, 64, false, kBf16); }, "group_size");
  test_util::expect_invalid([] { make_weight_layout(F::kInt8, 16, 128, 0, true, kBf16); }, "zeros");
  test_util::expect_invalid([] { make_weight_layout(F::kMxfp4, 16, 128, 64, false, kBf16); }, "group_size");
  test_util::expect_invalid([] { make_weight_layout(F::kMxfp4, 16, 128, 32, true, kBf16); }, "zeros");
  test_util::expect_invalid([] { make_weight_layout(F::kMxfp4, 16, 128, 32, false, kFp16); }, "act_dtype", "bf16");
  test_util::expect_invalid([] { make_weight_layout(static_cast<F>(7), 16, 128, 32, false, kBf16); }, "format");
  // Everything valid is accepted, fp16 included where allowed.
  EXPECT_NO_THROW(make_weight_layout(F::kInt4, 16, 128, 32, true, kFp16));
  EXPECT_NO_THROW(make_weight_layout(F::kInt8, 16, 8, 8, false, kFp16));
}

TEST(WqPack, PackBadInputNamesTheField) {
  const WeightCodes i4 = random_weight(WeightFormat::kInt4, 24, 96, 32, true, kBf16, 21);
  const WeightCodes i4_fp16 = random_weight(WeightFormat::kInt4, 24, 96, 32, false, kFp16, 22);
  const WeightCodes i8 = random_weight(WeightFormat::kInt8, 24, 96, 0, false, kBf16, 23);
  const WeightCodes mx = random_weight(WeightFormat::kMxfp4, 24, 72, 32, false, kBf16, 24);
  auto bad = [](WeightCodes w, auto&& edit, const std::string& field, const std::string& fragment = "expected") {
    edit(w);
    test_util::expect_invalid([&] { pack_weight(w); }, field, fragment);
  };
  // Sizes: the expected and the actual count.
  bad(
      i4, [](WeightCodes& w) { w.codes.pop_back(); }, "codes", "expected 2304 entries ([n 24][k 96]), got 2303");
  bad(
      i4, [](WeightCodes& w) { w.scales.push_back(0); }, "scales", "expected 72 entries");
  bad(
      i4, [](WeightCodes& w) { w.zeros.clear(); }, "zeros", "got 0");
  bad(
      i4_fp16, [](WeightCodes& w) { w.zeros.assign(72, 0); }, "zeros", "expected 0 entries");
  bad(
      i4, [](WeightCodes& w) { w.exponents.assign(72, 0); }, "exponents");
  bad(
      i4, [](WeightCodes& w) { w.channel_scales.assign(24, 1.0f); }, "channel_scales");
  bad(
      mx, [](WeightCodes& w) { w.exponents.pop_back(); }, "exponents", "expected 72 entries");
  bad(
      mx, [](WeightCodes& w) { w.scales.assign(72, 0); }, "scales");
  bad(
      i8, [](WeightCodes& w) { w.channel_scales.pop_back(); }, "channel_scales", "expected 24 entries");
  bad(
      i8, [](WeightCodes& w) { w.scales.assign(24, 0); }, "scales");
  // Ranges.
  bad(
      i4, [](WeightCodes& w) { w.codes[100] = 16; }, "codes", "16 at (1, 4)");
  bad(
      mx, [](WeightCodes& w) { w.codes[5] = 0x80; }, "codes");
  bad(
      i4, [](WeightCodes& w) { w.zeros[3] = 16; }, "zeros");
  bad(
      mx, [](WeightCodes& w) { w.exponents[7] = 255; }, "exponents", "255");
  bad(
      i4, [](WeightCodes& w) { w.scales[2] = 0x7FC0; }, "scales", "0x7fc0");  // bf16 NaN
  bad(
      i4, [](WeightCodes& w) { w.scales[2] = 0xFF80; }, "scales");  // bf16 -inf
  bad(
      i4_fp16, [](WeightCodes& w) { w.scales[2] = 0x7C00; }, "scales");  // fp16 +inf
  bad(
      i8, [](WeightCodes& w) { w.channel_scales[3] = std::numeric_limits<float>::infinity(); }, "channel_scales");
  bad(
      i8, [](WeightCodes& w) { w.channel_scales[3] = std::numeric_limits<float>::quiet_NaN(); }, "channel_scales");
  // The layout goes through make_weight_layout.
  bad(
      i4, [](WeightCodes& w) { w.layout.group_size = 48; }, "group_size");
  bad(
      mx, [](WeightCodes& w) { w.layout.act_dtype = kFp16; }, "act_dtype");
  // The scale check decodes the act dtype: 0x7C00 is an fp16 infinity but a finite bf16 (2^121); int8 codes take
  // every byte; mxfp4 exponent 254 is finite.
  WeightCodes ok = i4;
  ok.scales[2] = 0x7C00;
  EXPECT_NO_THROW(pack_weight(ok));
  ok = i8;
  ok.codes[0] = 255;
  EXPECT_NO_THROW(pack_weight(ok));
  ok = mx;
  ok.exponents[0] = 254;
  EXPECT_NO_THROW(pack_weight(ok));
}

TEST(WqPack, UnpackBadInputNamesTheField) {
  const PackedWeight i4 = pack_weight(random_weight(WeightFormat::kInt4, 24, 96, 32, true, kBf16, 25));
  const PackedWeight i8 = pack_weight(random_weight(WeightFormat::kInt8, 24, 96, 0, false, kBf16, 26));
  const PackedWeight mx = pack_weight(random_weight(WeightFormat::kMxfp4, 24, 72, 32, false, kBf16, 27));
  auto bad = [](PackedWeight p, auto&& edit, const std::string& field, const std::string& fragment = "expected") {
    edit(p);
    test_util::expect_invalid([&] { unpack_weight(p); }, field, fragment);
  };
  bad(
      i4, [](PackedWeight& p) { p.data.pop_back(); }, "data", "expected 2048 entries");
  bad(
      i4, [](PackedWeight& p) { p.scales.push_back(0); }, "scales", "expected 256 entries");
  bad(
      i4, [](PackedWeight& p) { p.zeros.clear(); }, "zeros", "expected 128 entries");
  bad(
      i4, [](PackedWeight& p) { p.channel_scales.assign(32, 0.0f); }, "channel_scales");
  bad(
      i8, [](PackedWeight& p) { p.channel_scales.pop_back(); }, "channel_scales", "expected 32 entries");
  bad(
      i8, [](PackedWeight& p) { p.data.resize(4097); }, "data", "expected 4096 entries");
  bad(
      i4, [](PackedWeight& p) { p.layout.n_pad = 24; }, "layout", "n_pad 32");
  bad(
      i4, [](PackedWeight& p) { p.layout.k_pad = 96; }, "layout");
  bad(
      i4, [](PackedWeight& p) { p.layout.k = 100; }, "k");
  bad(
      mx, [](PackedWeight& p) { ++p.layout.exp_shift; }, "exp_shift");
  bad(
      i4, [](PackedWeight& p) { p.layout.exp_shift = 1; }, "exp_shift");
}

TEST(WqPack, DequantizedWeightBadInput) {
  const WeightCodes w = random_weight(WeightFormat::kInt4, 24, 96, 32, false, kBf16, 28);
  test_util::expect_invalid([&] { dequantized_weight(w, -1, 0); }, "row");
  test_util::expect_invalid([&] { dequantized_weight(w, 24, 0); }, "row", "[0, 24)");
  test_util::expect_invalid([&] { dequantized_weight(w, 0, 96); }, "col", "[0, 96)");
  WeightCodes short_scales = w;
  short_scales.scales.pop_back();
  test_util::expect_invalid([&] { dequantized_weight(short_scales, 0, 0); }, "scales");
}

namespace {

// Encoders of the quantisers' layouts, written from the definitions in weight_quant.hpp.
struct Int4Checkpoint {
  int n, k, g;
  std::vector<std::uint8_t> codes;    // [n][k]
  std::vector<std::uint8_t> zeros;    // [n][k / g]
  std::vector<std::uint16_t> scales;  // [n][k / g]
};

Int4Checkpoint random_checkpoint(int n, int k, int g, DType dt, int min_zero, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Int4Checkpoint c{n, k, g, {}, {}, {}};
  c.codes.resize(static_cast<std::size_t>(n) * k);
  for (auto& q : c.codes) q = static_cast<std::uint8_t>(rng() & 0xF);
  c.zeros.resize(static_cast<std::size_t>(n) * (k / g));
  for (auto& z : c.zeros) z = static_cast<std::uint8_t>(min_zero + rng() % (16 - min_zero));
  c.scales.resize(c.zeros.size());
  for (auto& s : c.scales) s = random_half(rng, dt);
  return c;
}

std::vector<std::uint16_t> scales_k_major(const Int4Checkpoint& c) {  // [K / g][N]
  const int groups = c.k / c.g;
  std::vector<std::uint16_t> out(c.scales.size());
  for (int col = 0; col < c.n; ++col)
    for (int gi = 0; gi < groups; ++gi) out[gi * c.n + col] = c.scales[col * groups + gi];
  return out;
}

std::int32_t word_of(const std::uint32_t w) {
  return static_cast<std::int32_t>(w);
}

// GPTQ: qweight [K / 8][N], word (row, col) = codes (col, 8 row .. 8 row + 7), lowest nibble first; qzeros
// [K / g][N / 8], word (gi, c) = zeros of columns 8c .. 8c + 7, lowest nibble first, minus one for GPTQ v1.
void encode_gptq(const Int4Checkpoint& c, bool minus_one, std::vector<std::int32_t>& qweight,
                 std::vector<std::int32_t>& qzeros) {
  const int groups = c.k / c.g;
  qweight.assign(static_cast<std::size_t>(c.k / 8) * c.n, 0);
  for (int row = 0; row < c.k / 8; ++row)
    for (int col = 0; col < c.n; ++col) {
      std::uint32_t w = 0;
      for (int i = 7; i >= 0; --i) w = w << 4 | c.codes[col * c.k + 8 * row + i];
      qweight[row * c.n + col] = word_of(w);
    }
  qzeros.assign(static_cast<std::size_t>(groups) * (c.n / 8), 0);
  for (int gi = 0; gi < groups; ++gi)
    for (int cw = 0; cw < c.n / 8; ++cw) {
      std::uint32_t w = 0;
      for (int i = 7; i >= 0; --i) w = w << 4 | ((c.zeros[(8 * cw + i) * groups + gi] - minus_one) & 0xF);
      qzeros[gi * (c.n / 8) + cw] = word_of(w);
    }
}

// AWQ: qweight [K][N / 8] and qzeros [K / g][N / 8]; column 8c + j sits in nibble kReverse[j] (AutoAWQ's
// AWQ_REVERSE_ORDER, the inverse of its pack order {0, 2, 4, 6, 1, 3, 5, 7}).
void encode_awq(const Int4Checkpoint& c, std::vector<std::int32_t>& qweight, std::vector<std::int32_t>& qzeros) {
  constexpr int kReverse[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  const int groups = c.k / c.g;
  qweight.assign(static_cast<std::size_t>(c.k) * (c.n / 8), 0);
  for (int kk = 0; kk < c.k; ++kk)
    for (int cw = 0; cw < c.n / 8; ++cw) {
      std::uint32_t w = 0;
      for (int j = 0; j < 8; ++j) w |= static_cast<std::uint32_t>(c.codes[(8 * cw + j) * c.k + kk]) << 4 * kReverse[j];
      qweight[kk * (c.n / 8) + cw] = word_of(w);
    }
  qzeros.assign(static_cast<std::size_t>(groups) * (c.n / 8), 0);
  for (int gi = 0; gi < groups; ++gi)
    for (int cw = 0; cw < c.n / 8; ++cw) {
      std::uint32_t w = 0;
      for (int j = 0; j < 8; ++j)
        w |= static_cast<std::uint32_t>(c.zeros[(8 * cw + j) * groups + gi]) << 4 * kReverse[j];
      qzeros[gi * (c.n / 8) + cw] = word_of(w);
    }
}

void check_imported(const Int4Checkpoint& c, const WeightCodes& w, DType dt) {
  expect_same_layout(w.layout, make_weight_layout(WeightFormat::kInt4, c.n, c.k, c.g, true, dt));
  EXPECT_TRUE(w.layout.has_zeros);
  EXPECT_EQ(w.codes, c.codes);
  EXPECT_EQ(w.zeros, c.zeros);
  EXPECT_EQ(w.scales, c.scales);
  EXPECT_TRUE(w.exponents.empty());
  EXPECT_TRUE(w.channel_scales.empty());
  const int groups = c.k / c.g;
  for (int r = 0; r < c.n; ++r)
    for (int kk = 0; kk < c.k; ++kk) {
      const int gi = r * groups + kk / c.g;
      ASSERT_EQ(dequantized_weight(w, r, kk), (c.codes[r * c.k + kk] - c.zeros[gi]) * half_value(c.scales[gi], dt))
          << r << ", " << kk;
    }
  check_round_trip(w);
}

}  // namespace

TEST(WqImport, GptqMatchesAHandEncoding) {
  std::uint32_t seed = 400;
  for (const auto& [n, k, g] : {std::tuple{8, 32, 32}, {24, 256, 64}, {40, 384, 128}, {16, 96, 32}})
    for (const bool minus_one : {false, true})
      for (const DType dt : {kBf16, kFp16}) {
        SCOPED_TRACE(::testing::Message() << n << "x" << k << " g" << g << " minus_one " << minus_one);
        const Int4Checkpoint c = random_checkpoint(n, k, g, dt, minus_one ? 1 : 0, seed++);
        std::vector<std::int32_t> qweight, qzeros;
        encode_gptq(c, minus_one, qweight, qzeros);
        const std::vector<std::uint16_t> scales = scales_k_major(c);
        check_imported(c, import_gptq(qweight.data(), qzeros.data(), scales.data(), n, k, g, minus_one, dt), dt);
      }
}

TEST(WqImport, GptqPinsNibbleOrder) {
  // One word: code (col 3, k 8 + 5) = 0x9 in nibble 5 of qweight[1][3]; zero (col 13, group 1) = 0xC in nibble 5 of
  // qzeros[1][1].
  const int n = 16, k = 64, g = 32;
  std::vector<std::int32_t> qweight(k / 8 * n, 0), qzeros(k / g * n / 8, 0);
  std::vector<std::uint16_t> scales(k / g * n, 0x3F80);
  qweight[1 * n + 3] = 0x9 << 20;
  qzeros[1 * 2 + 1] = static_cast<std::int32_t>(0xC0000000u >> 8);
  const WeightCodes w = import_gptq(qweight.data(), qzeros.data(), scales.data(), n, k, g, false, kBf16);
  for (int r = 0; r < n; ++r)
    for (int kk = 0; kk < k; ++kk) EXPECT_EQ(w.codes[r * k + kk], r == 3 && kk == 13 ? 9 : 0) << r << ", " << kk;
  for (int r = 0; r < n; ++r)
    for (int gi = 0; gi < 2; ++gi) EXPECT_EQ(w.zeros[r * 2 + gi], r == 13 && gi == 1 ? 0xC : 0) << r << ", " << gi;
  // With zeros_minus_one every zero is one more.
  const WeightCodes v1 = import_gptq(qweight.data(), qzeros.data(), scales.data(), n, k, g, true, kBf16);
  EXPECT_EQ(v1.zeros[13 * 2 + 1], 0xD);
  EXPECT_EQ(v1.zeros[0], 1);
}

TEST(WqImport, AwqMatchesAHandEncoding) {
  std::uint32_t seed = 500;
  for (const auto& [n, k, g] : {std::tuple{8, 32, 32}, {24, 256, 64}, {40, 384, 128}, {16, 96, 32}})
    for (const DType dt : {kBf16, kFp16}) {
      SCOPED_TRACE(::testing::Message() << n << "x" << k << " g" << g);
      const Int4Checkpoint c = random_checkpoint(n, k, g, dt, 0, seed++);
      std::vector<std::int32_t> qweight, qzeros;
      encode_awq(c, qweight, qzeros);
      const std::vector<std::uint16_t> scales = scales_k_major(c);
      check_imported(c, import_awq(qweight.data(), qzeros.data(), scales.data(), n, k, g, dt), dt);
    }
}

TEST(WqImport, AwqPinsNibbleOrder) {
  // Nibble 1 of a word is column 8c + 2, nibble 4 column 8c + 1, nibble 7 column 8c + 7.
  const int n = 16, k = 32, g = 32;
  std::vector<std::int32_t> qweight(k * n / 8, 0), qzeros(n / 8, 0);
  std::vector<std::uint16_t> scales(n, 0x3F80);
  qweight[5 * 2 + 1] = 0x3 << 4 | 0x6 << 16;           // k 5: nibble 1 (column 10) = 3, nibble 4 (column 9) = 6
  qzeros[0] = static_cast<std::int32_t>(0xE0000000u);  // column 7: 14
  const WeightCodes w = import_awq(qweight.data(), qzeros.data(), scales.data(), n, k, g, kBf16);
  for (int r = 0; r < n; ++r)
    for (int kk = 0; kk < k; ++kk) {
      const int want = kk != 5 ? 0 : r == 10 ? 3 : r == 9 ? 6 : 0;
      EXPECT_EQ(w.codes[r * k + kk], want) << r << ", " << kk;
    }
  for (int r = 0; r < n; ++r) EXPECT_EQ(w.zeros[r], r == 7 ? 14 : 0) << r;
}

TEST(WqImport, BadInputNamesTheArgument) {
  const int n = 16, k = 64, g = 32;
  const std::vector<std::int32_t> qweight(k * n, 0), qzeros(k / g * n / 8, 0);
  const std::vector<std::uint16_t> scales(k / g * n, 0x3F80);
  const std::int32_t* qw = qweight.data();
  const std::int32_t* qz = qzeros.data();
  const std::uint16_t* sc = scales.data();
  for (const bool awq : {false, true}) {
    auto call = [awq](const std::int32_t* a, const std::int32_t* b, const std::uint16_t* c, int nn, int kk, int gg,
                      DType dt) {
      if (awq)
        import_awq(a, b, c, nn, kk, gg, dt);
      else
        import_gptq(a, b, c, nn, kk, gg, false, dt);
    };
    SCOPED_TRACE(awq ? "awq" : "gptq");
    EXPECT_NO_THROW(call(qw, qz, sc, n, k, g, kBf16));
    test_util::expect_invalid([&] { call(nullptr, qz, sc, n, k, g, kBf16); }, "qweight", "nullptr");
    test_util::expect_invalid([&] { call(qw, nullptr, sc, n, k, g, kBf16); }, "qzeros", "nullptr");
    test_util::expect_invalid([&] { call(qw, qz, nullptr, n, k, g, kBf16); }, "scales", "nullptr");
    test_util::expect_invalid([&] { call(qw, qz, sc, 12, k, g, kBf16); }, "n", "multiple of 8");
    test_util::expect_invalid([&] { call(qw, qz, sc, 0, k, g, kBf16); }, "n");
    test_util::expect_invalid([&] { call(qw, qz, sc, 8, 36, g, kBf16); }, "k", "multiple of 8");
    test_util::expect_invalid([&] { call(qw, qz, sc, 8, 48, g, kBf16); }, "k", "group size 32");
    test_util::expect_invalid([&] { call(qw, qz, sc, 8, 64, 16, kBf16); }, "group_size");
    test_util::expect_invalid([&] { call(qw, qz, sc, 8, 64, g, DType::kFloat32); }, "act_dtype");
  }
  // GPTQ v1: a stored 15 would be zero point 16.
  std::vector<std::int32_t> high = qzeros;
  high[3] = 0xF << 8;
  EXPECT_NO_THROW(import_gptq(qw, high.data(), sc, n, k, g, false, kBf16));
  test_util::expect_invalid([&] { import_gptq(qw, high.data(), sc, n, k, g, true, kBf16); }, "qzeros", "16");
}
