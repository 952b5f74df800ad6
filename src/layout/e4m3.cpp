// The e4m3 (E4M3FN) codec and UE8M0 rounding on the host. Written with frexp/ldexp/nearbyint on exact
// values instead of bit tricks: every step below is exact in float, so the only rounding is the one
// nearbyint performs (round-to-nearest-even in the default floating-point environment).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace tilegemm {

std::uint8_t float_to_e4m3(float x) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  // Everything above 448 (including the values that would round to 448 anyway) saturates.
  if (a >= kE4M3Max) return sign | 0x7E;
  if (a == 0.0f) return sign;
  int exp2 = 0;
  std::frexp(a, &exp2);                  // a = f · 2^exp2, f in [0.5, 1)
  const int e = std::max(exp2 - 1, -6);  // unbiased exponent; subnormals share the quantum of e = -6
  // a / 2^(e-3) is exact; it lies in [8, 16) for normals and [0, 8) for subnormals.
  const int q = static_cast<int>(std::nearbyint(std::ldexp(a, 3 - e)));
  // q == 16 carries into the next exponent and q == 8 from a subnormal becomes the smallest normal: both
  // fall out of the same sum. The result never exceeds 0x7E because a < 448 rounds to at most 448.
  return static_cast<std::uint8_t>(sign | (((e + 7) << 3) + q - 8));
}

float e4m3_to_float(std::uint8_t code) {
  const int exponent = (code >> 3) & 0xF, mantissa = code & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)
                                        : std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
  return (code & 0x80) ? -magnitude : magnitude;
}

bool is_ue8m0(float scale) {
  if (!std::isnormal(scale) || scale < 0) return false;
  std::uint32_t bits;
  std::memcpy(&bits, &scale, sizeof bits);
  return (bits & 0x7FFFFFu) == 0;
}

float ceil_to_ue8m0(float scale) {
  if (std::isnan(scale) || scale == std::numeric_limits<float>::infinity()) return scale;
  TILEGEMM_REQUIRE(scale > 0, "scale", "a positive scale to round up to a power of two", fmt::format("{}", scale));
  constexpr float kSmallest = 0x1.0p-126f;  // UE8M0 codes map to normal floats only
  if (scale <= kSmallest) return kSmallest;
  int exp2 = 0;
  const float f = std::frexp(scale, &exp2);  // scale = f · 2^exp2, f in [0.5, 1)
  // A power of two has f == 0.5 and is kept; anything else goes up to 2^exp2 (inf past 2^127).
  return f == 0.5f ? scale : std::ldexp(1.0f, exp2);
}

}  // namespace tilegemm
