#pragma once
// Integer helpers the library's .cpp files share: one definition instead of a private copy per file, which a unity
// build (several .cpp files in one translation unit) would see as clashing overloads.
#include <concepts>
#include <type_traits>

namespace tilegemm {

// ⌈a / b⌉ for a >= 0, b > 0, in the common type of a and b.
template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> ceil_div(A a, B b) {
  using T = std::common_type_t<A, B>;
  return (static_cast<T>(a) + static_cast<T>(b) - 1) / static_cast<T>(b);
}

}  // namespace tilegemm
