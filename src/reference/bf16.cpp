// bf16 <-> float on the host. bf16 is the top half of an IEEE float, so widening is a shift and narrowing
// is a rounding of the low 16 bits.
#include <bit>
#include <cstdint>

#include "tilegemm/reference.hpp"

namespace tilegemm {

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  // NOTE: NaN must be handled before rounding: adding the bias to a NaN with a low payload could carry
  // into the exponent and turn it into an infinity. Setting the quiet bit keeps it a NaN after truncation.
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest, ties to even: add 0x7FFF plus the lowest kept bit, then truncate. Overflow of the
  // largest finite values rounds correctly into infinity.
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace tilegemm
