#pragma once
// FNV-1a, 64 bit: the cache key and the artifact checksum. Not cryptographic; it only has to make an
// accidental collision between two kernels (or a corrupted cubin passing its check) vanishingly unlikely.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tilegemm::jit {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;

inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnvOffset) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Hashes a field and a terminator, so ("ab","c") and ("a","bc") hash differently.
inline std::uint64_t fnv1a64_field(std::string_view bytes, std::uint64_t h) {
  h = fnv1a64(bytes, h);
  return fnv1a64(std::string_view("\0", 1), h);
}

inline std::string hex64(std::uint64_t h) {
  return fmt::format("{:016x}", h);
}

}  // namespace tilegemm::jit
