// UE8M0 exponent bytes, their validation and the packed layouts (SM100 4-per-int32, MN-major and K-grouped;
// Ascend 2-per-int16) on the host. These are the references the GPU pack kernels are compared against bit for
// bit.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/int_math.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace tilegemm {
namespace {

void require_shape(int groups, int mn, int kb) {
  TILEGEMM_REQUIRE(groups > 0, "groups", "a positive group count", fmt::format("{}", groups));
  TILEGEMM_REQUIRE(mn > 0, "mn", "a positive size", fmt::format("{}", mn));
  TILEGEMM_REQUIRE(kb > 0, "kb", "a positive K-block count", fmt::format("{}", kb));
}

std::size_t index(int g, int m, int k, int mn, int kb) {
  return (static_cast<std::size_t>(g) * mn + m) * kb + k;
}

}  // namespace

std::uint8_t float_to_ue8m0(float scale) {
  std::uint32_t bits;
  std::memcpy(&bits, &scale, sizeof bits);
  return static_cast<std::uint8_t>(bits >> 23);
}

float ue8m0_to_float(std::uint8_t e) {
  if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(e) - 127);
}

void validate_ue8m0(const float* sf, int groups, int mn, int kb) {
  TILEGEMM_REQUIRE(sf != nullptr, "sf", "a non-null pointer to groups * mn * kb floats", "nullptr");
  require_shape(groups, mn, kb);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k) {
        const float v = sf[index(g, m, k, mn, kb)];
        if (!is_ue8m0(v))
          throw InvalidArgument("sf", "UE8M0 scales (powers of two, zero mantissa)",
                                fmt::format("{} at ({}, {}, {})", v, g, m, k));
      }
}

std::size_t sm100_packed_ue8m0_size(int groups, int mn, int kb) {
  require_shape(groups, mn, kb);
  return static_cast<std::size_t>(groups) * ceil_div(kb, 4) * get_tma_aligned_size(mn, 4);
}

std::vector<std::int32_t> pack_ue8m0_sm100(const float* sf, int groups, int mn, int kb) {
  validate_ue8m0(sf, groups, mn, kb);
  const std::size_t aligned = get_tma_aligned_size(mn, 4), packed_k = ceil_div(kb, 4);
  std::vector<std::int32_t> out(sm100_packed_ue8m0_size(groups, mn, kb), 0);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k) {
        const std::uint32_t byte = float_to_ue8m0(sf[index(g, m, k, mn, kb)]);
        auto& word = out[(g * packed_k + k / 4) * aligned + m];
        word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) | byte << (8 * (k % 4)));
      }
  return out;
}

std::vector<float> unpack_ue8m0_sm100(const std::vector<std::int32_t>& packed, int groups, int mn, int kb) {
  const std::size_t expected = sm100_packed_ue8m0_size(groups, mn, kb);
  TILEGEMM_REQUIRE(packed.size() == expected, "packed", fmt::format("{} int32 words", expected),
                   fmt::format("{}", packed.size()));
  const std::size_t aligned = get_tma_aligned_size(mn, 4), packed_k = ceil_div(kb, 4);
  std::vector<float> out(static_cast<std::size_t>(groups) * mn * kb);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k) {
        const auto word = static_cast<std::uint32_t>(packed[(g * packed_k + k / 4) * aligned + m]);
        out[index(g, m, k, mn, kb)] = ue8m0_to_float(static_cast<std::uint8_t>(word >> (8 * (k % 4))));
      }
  return out;
}

std::size_t ascend_packed_ue8m0_size(int groups, int mn, int kb) {
  require_shape(groups, mn, kb);
  return static_cast<std::size_t>(groups) * ceil_div(kb, 2) * mn;
}

std::vector<std::int16_t> pack_ue8m0_ascend(const float* sf, int groups, int mn, int kb) {
  validate_ue8m0(sf, groups, mn, kb);
  const std::size_t packed_k = ceil_div(kb, 2);
  std::vector<std::int16_t> out(ascend_packed_ue8m0_size(groups, mn, kb), 0);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k) {
        const std::uint16_t byte = float_to_ue8m0(sf[index(g, m, k, mn, kb)]);
        auto& half = out[(g * packed_k + k / 2) * mn + m];
        half = static_cast<std::int16_t>(static_cast<std::uint16_t>(half) | byte << (8 * (k % 2)));
      }
  return out;
}

std::vector<float> unpack_ue8m0_ascend(const std::vector<std::int16_t>& packed, int groups, int mn, int kb) {
  const std::size_t expected = ascend_packed_ue8m0_size(groups, mn, kb);
  TILEGEMM_REQUIRE(packed.size() == expected, "packed", fmt::format("{} int16 elements", expected),
                   fmt::format("{}", packed.size()));
  const std::size_t packed_k = ceil_div(kb, 2);
  std::vector<float> out(static_cast<std::size_t>(groups) * mn * kb);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k) {
        const auto half = static_cast<std::uint16_t>(packed[(g * packed_k + k / 2) * mn + m]);
        out[index(g, m, k, mn, kb)] = ue8m0_to_float(static_cast<std::uint8_t>(half >> (8 * (k % 2))));
      }
  return out;
}

std::vector<std::int32_t> pack_ue8m0_k_grouped(const float* sf, int sf_k, int mn,
                                               const std::vector<int>& grouped_layout, int gran_k, int k_alignment,
                                               bool use_psum_layout) {
  TILEGEMM_REQUIRE(sf != nullptr || sf_k == 0, "sf", "a non-null pointer to sf_k * mn floats", "nullptr");
  TILEGEMM_REQUIRE(sf_k >= 0, "sf_k", "a row count >= 0", fmt::format("{}", sf_k));
  TILEGEMM_REQUIRE(mn > 0, "mn", "a positive size", fmt::format("{}", mn));
  TILEGEMM_REQUIRE(gran_k > 0, "gran_k", "a positive K granularity", fmt::format("{}", gran_k));
  TILEGEMM_REQUIRE(!use_psum_layout || k_alignment > 0, "k_alignment", "a positive alignment with use_psum_layout",
                   fmt::format("{}", k_alignment));
  std::vector<std::int32_t> out;
  int first_row = 0, previous_end = 0;
  for (const int value : grouped_layout) {
    const int start = use_psum_layout ? (previous_end + k_alignment - 1) / k_alignment * k_alignment : 0;
    const int group_k = value - start;
    previous_end = value;
    const int rows = group_k > 0 ? (group_k + gran_k - 1) / gran_k : 0;
    for (int p = 0; p < (rows + 3) / 4; ++p)
      for (int m = 0; m < mn; ++m) {
        std::uint32_t word = 0;
        for (int b = 0; b < 4 && 4 * p + b < rows; ++b) {
          const int row = first_row + 4 * p + b;
          const float v = row < sf_k ? sf[static_cast<std::size_t>(row) * mn + m] : 0.0f;
          word |= static_cast<std::uint32_t>(float_to_ue8m0(v)) << (8 * b);
        }
        out.push_back(static_cast<std::int32_t>(word));
      }
    first_row += rows;
  }
  return out;
}

}  // namespace tilegemm
