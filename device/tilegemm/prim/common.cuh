#pragma once
// Basic definitions shared by every device header. NVRTC compiles these without a C++ standard library,
// so fixed-width types come from the compiler's builtins rather than <cstdint>.

#include "tilegemm/gemm_params.hpp"  // TmaDescriptor

namespace tilegemm {

using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using i64 = long long;

#define TG_DEVICE __device__ __forceinline__

// std::conditional_t, which NVRTC's library-free compile lacks.
template <bool kFirst, class A, class B>
struct Select {
  using type = A;
};
template <class A, class B>
struct Select<false, A, B> {
  using type = B;
};
template <bool kFirst, class A, class B>
using select_t = typename Select<kFirst, A, B>::type;

template <typename T>
TG_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Address of a shared-memory object in the shared state space (what PTX `.shared` operands take).
TG_DEVICE u32 smem_addr(const void* ptr) {
  return static_cast<u32>(__cvta_generic_to_shared(ptr));
}

// Broadcasts lane 0's value so the compiler knows it is warp-uniform (keeps it in a uniform register).
TG_DEVICE u32 warp_uniform(u32 value) {
  return __shfl_sync(0xffffffffu, value, 0);
}

}  // namespace tilegemm
