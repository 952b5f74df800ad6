// Weight-only quantised GEMM on the host: format names, the packed layout of wq_params.hpp (fragment blocks of 16 rows
// x 64 k, group scales / zero points / exponents [n_pad / 16][groups][16]), pack / unpack and the float64 value of a
// weight. These are the references the kernel's loads and the GPU dequantise are compared against bit for bit. The
// GPTQ / AWQ importers are in wq_import.cpp.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {
namespace {

constexpr double kWqE2m1Magnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

std::string wq_str(std::int64_t v) {
  return fmt::format("{}", v);
}

// v rounded up to a multiple of `to`, refused (naming `argument`) when that does not fit an int.
int wq_round_up(int v, int to, const char* argument) {
  const std::int64_t r = (static_cast<std::int64_t>(v) + to - 1) / to * to;
  TILEGEMM_REQUIRE(r <= INT_MAX, argument, fmt::format("a size whose multiple of {} fits an int", to), wq_str(v));
  return static_cast<int>(r);
}

// Where the code of (row r, col c) lives in `data`: a byte and, for 4-bit codes, the nibble's shift (wq_params.hpp).
struct WqCodeSlot {
  std::size_t byte;
  int shift;
};

WqCodeSlot wq_code_slot(const WeightLayout& l, int r, int c) {
  const int block_bytes = wq::code_bytes_per_block(l.format);
  const std::size_t block = static_cast<std::size_t>(r / wq::kRowBlock) * (l.k_pad / wq::kChunkK) + c / wq::kChunkK;
  const int rr = r % wq::kRowBlock, cc = c % wq::kChunkK;
  const int g = rr % 8, lower = rr / 8;          // row g or g + 8 of the lane
  const int t = cc / 16, kk = cc % 16;           // the lane's 16 k
  const int s = kk / 4;                          // mma step: k 16t + 4s .. 16t + 4s + 3
  const int upper = (kk % 4) / 2, odd = kk % 2;  // the step's second pair (k + 2), the second k of a pair
  const int lane = 4 * g + t;
  const std::size_t base = block * block_bytes;
  if (l.format == WeightFormat::kInt8) {
    const int plane = s / 2, word = 2 * (s % 2) + upper, b = odd + 2 * lower;
    return {base + plane * wq::kLanes * 16 + lane * 16 + 4 * word + b, 0};
  }
  const int j = lower + 2 * upper + 4 * odd;
  return {base + lane * 16 + 4 * s + j / 2, 4 * (j % 2)};
}

// Index of the scale / zero / exponent entry of (row r, group gi) in [n_pad / 16][groups][16].
std::size_t wq_group_slot(const WeightLayout& l, int r, int gi) {
  return (static_cast<std::size_t>(r / wq::kRowBlock) * l.groups() + gi) * wq::kRowBlock + r % wq::kRowBlock;
}

bool wq_half_finite(std::uint16_t bits, DType t) {
  const std::uint16_t exp_mask = t == DType::kFloat16 ? 0x7C00 : 0x7F80;
  return (bits & exp_mask) != exp_mask;
}

// Exact value of bf16 / fp16 bits (fp16 subnormals included).
double wq_half_to_double(std::uint16_t bits, DType t) {
  if (t == DType::kBFloat16) {
    const std::uint32_t f32 = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &f32, sizeof f);
    return f;
  }
  const double sign = bits & 0x8000 ? -1.0 : 1.0;
  const int e = (bits >> 10) & 0x1F, mant = bits & 0x3FF;
  if (e == 0x1F) return mant ? std::nan("") : sign * HUGE_VAL;
  if (e == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(mant + 1024, e - 25);
}

// The layout `l` claims, rebuilt (validated) from its logical fields.
WeightLayout wq_checked_layout(const WeightLayout& l) {
  return make_weight_layout(l.format, l.n, l.k, l.group_size, l.has_zeros, l.act_dtype);
}

void wq_require_size(std::size_t size, std::int64_t expected, const char* field, const std::string& shape) {
  TILEGEMM_REQUIRE(static_cast<std::int64_t>(size) == expected, field, fmt::format("{} entries ({})", expected, shape),
                   fmt::format("{}", size));
}

// Logical scale / zero / exponent entries per row of `w` (int4 k / group, mxfp4 ceil(k / 32), int8 none).
int wq_logical_groups(const WeightLayout& l) {
  if (l.format == WeightFormat::kInt8) return 0;
  return l.format == WeightFormat::kMxfp4 ? (l.k + wq::kMxGroup - 1) / wq::kMxGroup : l.k / l.group_size;
}

// Checks the sizes of every field of `w` against `l` (unused fields must be empty).
void wq_require_sizes(const WeightCodes& w, const WeightLayout& l) {
  const std::int64_t n = l.n, groups = wq_logical_groups(l);
  const bool int4 = l.format == WeightFormat::kInt4, mx = l.format == WeightFormat::kMxfp4;
  wq_require_size(w.codes.size(), n * l.k, "codes", fmt::format("[n {}][k {}]", l.n, l.k));
  const std::string group_shape = fmt::format("[n {}][{} groups]", l.n, groups);
  wq_require_size(w.scales.size(), int4 ? n * groups : 0, "scales", int4 ? group_shape : "none: not int4");
  wq_require_size(w.zeros.size(), l.has_zeros ? n * groups : 0, "zeros",
                  l.has_zeros ? group_shape : "none: the layout has no zero points");
  wq_require_size(w.exponents.size(), mx ? n * groups : 0, "exponents", mx ? group_shape : "none: not mxfp4");
  const bool int8 = l.format == WeightFormat::kInt8;
  wq_require_size(w.channel_scales.size(), int8 ? n : 0, "channel_scales", int8 ? "[n]" : "none: not int8");
}

// The exp_shift of mxfp4 exponents (wq_params.hpp): max(0, max exponent - 128).
int wq_exp_shift(const std::vector<std::uint8_t>& exponents) {
  int shift = 0;
  for (const std::uint8_t e : exponents) shift = std::max(shift, e - 128);
  return shift;
}

}  // namespace

std::string_view weight_format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::kInt4:
      return "int4";
    case WeightFormat::kInt8:
      return "int8";
    case WeightFormat::kMxfp4:
      return "mxfp4";
  }
  throw InvalidArgument("format", "int4, int8 or mxfp4", wq_str(static_cast<int>(f)));
}

WeightFormat parse_weight_format(std::string_view name, const std::string& argument) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const WeightFormat f : {WeightFormat::kInt4, WeightFormat::kInt8, WeightFormat::kMxfp4})
    if (weight_format_name(f) == lower) return f;
  throw InvalidArgument(argument, "a weight format (int4, int8 or mxfp4)", fmt::format("'{}'", name));
}

std::int64_t WeightLayout::data_bytes() const {
  return static_cast<std::int64_t>(n_pad / wq::kRowBlock) * (k_pad / wq::kChunkK) * wq::code_bytes_per_block(format);
}

std::int64_t WeightLayout::scale_bytes() const {
  return static_cast<std::int64_t>(n_pad) * groups() * wq::scale_entry_bytes(format);
}

std::int64_t WeightLayout::zero_bytes() const {
  return has_zeros ? static_cast<std::int64_t>(n_pad) * groups() : 0;
}

WeightLayout make_weight_layout(WeightFormat format, int n, int k, int group_size, bool has_zeros, DType act_dtype) {
  TILEGEMM_REQUIRE(format == WeightFormat::kInt4 || format == WeightFormat::kInt8 || format == WeightFormat::kMxfp4,
                   "format", "int4, int8 or mxfp4", wq_str(static_cast<int>(format)));
  TILEGEMM_REQUIRE(n >= 1, "n", "at least one weight row", wq_str(n));
  TILEGEMM_REQUIRE(k >= 1, "k", "a positive K", wq_str(k));
  TILEGEMM_REQUIRE(k % 8 == 0, "k", "a multiple of 8 (the activations' rows must be 16-byte aligned for TMA)",
                   wq_str(k));
  TILEGEMM_REQUIRE(act_dtype == DType::kBFloat16 || act_dtype == DType::kFloat16, "act_dtype", "bf16 or fp16",
                   std::string(dtype_name(act_dtype)));
  WeightLayout l;
  l.format = format, l.act_dtype = act_dtype, l.n = n, l.k = k, l.has_zeros = has_zeros;
  switch (format) {
    case WeightFormat::kInt4:
      TILEGEMM_REQUIRE(group_size == 32 || group_size == 64 || group_size == 128, "group_size",
                       "32, 64 or 128 for int4", wq_str(group_size));
      TILEGEMM_REQUIRE(k % group_size == 0, "k", fmt::format("a multiple of the group size {}", group_size), wq_str(k));
      l.group_size = group_size;
      break;
    case WeightFormat::kInt8:
      TILEGEMM_REQUIRE(group_size == 0 || group_size == k, "group_size",
                       fmt::format("0 or k = {} (per row) for int8", k), wq_str(group_size));
      TILEGEMM_REQUIRE(!has_zeros, "zeros", "no zero points for int8 (codes are the int8 value + 128)", "zero points");
      break;
    case WeightFormat::kMxfp4:
      TILEGEMM_REQUIRE(group_size == 0 || group_size == wq::kMxGroup, "group_size", "32 (or 0) for mxfp4",
                       wq_str(group_size));
      TILEGEMM_REQUIRE(!has_zeros, "zeros", "no zero points for mxfp4", "zero points");
      TILEGEMM_REQUIRE(act_dtype == DType::kBFloat16, "act_dtype",
                       "bf16 for mxfp4 (the e2m1 exponent scale is folded into a bf16 multiplier: fp16's range is too "
                       "small)",
                       std::string(dtype_name(act_dtype)));
      l.group_size = wq::kMxGroup;
      break;
  }
  l.n_pad = wq_round_up(n, wq::kRowBlock, "n");
  l.k_pad = wq_round_up(k, std::max(wq::kChunkK, l.group_size), "k");
  return l;
}

PackedWeight pack_weight(const WeightCodes& w) {
  PackedWeight p;
  WeightLayout& l = p.layout;
  l = wq_checked_layout(w.layout);
  wq_require_sizes(w, l);
  const bool nibbles = l.format != WeightFormat::kInt8;
  for (std::size_t i = 0; i < w.codes.size(); ++i)
    TILEGEMM_REQUIRE(!nibbles || w.codes[i] < 16, "codes", "4-bit codes 0..15",
                     fmt::format("{} at ({}, {})", w.codes[i], i / l.k, i % l.k));
  for (std::size_t i = 0; i < w.zeros.size(); ++i)
    TILEGEMM_REQUIRE(w.zeros[i] < 16, "zeros", "zero points 0..15", fmt::format("{} at entry {}", w.zeros[i], i));
  for (std::size_t i = 0; i < w.exponents.size(); ++i)
    TILEGEMM_REQUIRE(w.exponents[i] != 0xFF, "exponents", "UE8M0 exponents 0..254 (255 is NaN)",
                     fmt::format("255 at entry {}", i));
  for (std::size_t i = 0; i < w.scales.size(); ++i)
    TILEGEMM_REQUIRE(wq_half_finite(w.scales[i], l.act_dtype), "scales",
                     fmt::format("finite {} scales", dtype_name(l.act_dtype)),
                     fmt::format("bits {:#06x} at entry {}", w.scales[i], i));
  for (std::size_t i = 0; i < w.channel_scales.size(); ++i)
    TILEGEMM_REQUIRE(std::isfinite(w.channel_scales[i]), "channel_scales", "finite per-row scales",
                     fmt::format("{} at row {}", w.channel_scales[i], i));
  if (l.format == WeightFormat::kMxfp4) l.exp_shift = wq_exp_shift(w.exponents);

  // Padding decodes to weight 0: code 0 for 4-bit formats, 128 (zero after the offset) for int8.
  p.data.assign(l.data_bytes(), l.format == WeightFormat::kInt8 ? 128 : 0);
  p.scales.assign(l.scale_bytes(), 0);
  p.zeros.assign(l.zero_bytes(), 0);
  if (l.format == WeightFormat::kInt8) p.channel_scales.assign(l.n_pad, 0.0f);
  for (int r = 0; r < l.n; ++r)
    for (int c = 0; c < l.k; ++c) {
      const WqCodeSlot slot = wq_code_slot(l, r, c);
      const auto code = static_cast<std::uint8_t>(w.codes[static_cast<std::size_t>(r) * l.k + c] << slot.shift);
      if (l.format == WeightFormat::kInt8)
        p.data[slot.byte] = code;  // over the padding's 128
      else
        p.data[slot.byte] |= code;
    }
  const int groups = wq_logical_groups(l);
  for (int r = 0; r < l.n; ++r)
    for (int gi = 0; gi < groups; ++gi) {
      const std::size_t from = static_cast<std::size_t>(r) * groups + gi, to = wq_group_slot(l, r, gi);
      if (l.format == WeightFormat::kInt4) {
        p.scales[2 * to] = static_cast<std::uint8_t>(w.scales[from] & 0xFF);
        p.scales[2 * to + 1] = static_cast<std::uint8_t>(w.scales[from] >> 8);
      } else {
        p.scales[to] = w.exponents[from];
      }
      if (l.has_zeros) p.zeros[to] = w.zeros[from];
    }
  std::copy(w.channel_scales.begin(), w.channel_scales.end(), p.channel_scales.begin());
  return p;
}

WeightCodes unpack_weight(const PackedWeight& p) {
  const WeightLayout& l = p.layout;
  const WeightLayout want = wq_checked_layout(l);
  TILEGEMM_REQUIRE(l.n_pad == want.n_pad && l.k_pad == want.k_pad, "layout",
                   fmt::format("n_pad {} and k_pad {} (make_weight_layout's)", want.n_pad, want.k_pad),
                   fmt::format("n_pad {} and k_pad {}", l.n_pad, l.k_pad));
  const bool int8 = l.format == WeightFormat::kInt8;
  wq_require_size(p.data.size(), l.data_bytes(), "data", "bytes of the packed codes");
  wq_require_size(p.scales.size(), l.scale_bytes(), "scales", "bytes of [n_pad / 16][groups][16] scales");
  wq_require_size(p.zeros.size(), l.zero_bytes(), "zeros", "bytes of [n_pad / 16][groups][16] zero points");
  wq_require_size(p.channel_scales.size(), int8 ? l.n_pad : 0, "channel_scales", int8 ? "[n_pad]" : "none: not int8");

  WeightCodes w;
  w.layout = l;
  const int groups = wq_logical_groups(l);
  const std::size_t group_entries = static_cast<std::size_t>(l.n) * groups;
  w.codes.resize(static_cast<std::size_t>(l.n) * l.k);
  if (l.format == WeightFormat::kInt4) w.scales.resize(group_entries);
  if (l.format == WeightFormat::kMxfp4) w.exponents.resize(group_entries);
  if (l.has_zeros) w.zeros.resize(group_entries);
  for (int r = 0; r < l.n; ++r)
    for (int c = 0; c < l.k; ++c) {
      const WqCodeSlot slot = wq_code_slot(l, r, c);
      w.codes[static_cast<std::size_t>(r) * l.k + c] =
          static_cast<std::uint8_t>(int8 ? p.data[slot.byte] : (p.data[slot.byte] >> slot.shift) & 0xF);
    }
  for (int r = 0; r < l.n; ++r)
    for (int gi = 0; gi < groups; ++gi) {
      const std::size_t to = static_cast<std::size_t>(r) * groups + gi, from = wq_group_slot(l, r, gi);
      if (l.format == WeightFormat::kInt4)
        w.scales[to] = static_cast<std::uint16_t>(p.scales[2 * from] | p.scales[2 * from + 1] << 8);
      else
        w.exponents[to] = p.scales[from];
      if (l.has_zeros) w.zeros[to] = p.zeros[from];
    }
  if (int8) w.channel_scales.assign(p.channel_scales.begin(), p.channel_scales.begin() + l.n);
  const int shift = l.format == WeightFormat::kMxfp4 ? wq_exp_shift(w.exponents) : 0;
  TILEGEMM_REQUIRE(l.exp_shift == shift, "exp_shift", fmt::format("{} (from the exponents)", shift),
                   wq_str(l.exp_shift));
  return w;
}

double dequantized_weight(const WeightCodes& w, int row, int col) {
  const WeightLayout l = wq_checked_layout(w.layout);
  wq_require_sizes(w, l);
  TILEGEMM_REQUIRE(row >= 0 && row < l.n, "row", fmt::format("a row in [0, {})", l.n), wq_str(row));
  TILEGEMM_REQUIRE(col >= 0 && col < l.k, "col", fmt::format("a column in [0, {})", l.k), wq_str(col));
  const int q = w.codes[static_cast<std::size_t>(row) * l.k + col];
  const std::size_t group =
      l.group_size ? static_cast<std::size_t>(row) * wq_logical_groups(l) + col / l.group_size : 0;
  switch (l.format) {
    case WeightFormat::kInt4: {
      const int z = l.has_zeros ? w.zeros[group] : 8;
      return (q - z) * wq_half_to_double(w.scales[group], l.act_dtype);
    }
    case WeightFormat::kInt8:
      return (q - 128) * static_cast<double>(w.channel_scales[row]);
    case WeightFormat::kMxfp4: {
      const double v = kWqE2m1Magnitudes[q & 7] * (q & 8 ? -1.0 : 1.0);
      return std::ldexp(v, static_cast<int>(w.exponents[group]) - 127);
    }
  }
  return 0.0;
}

}  // namespace tilegemm
