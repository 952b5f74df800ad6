#pragma once
// Shims that let the device scheduler headers (device/tilegemm/sched/) compile as host code, so CPU tests can
// walk every CTA's schedule: they only need blockIdx / gridDim, min, __ldg and two intrinsics. Include this
// before any scheduler header, in one translation unit per test binary that sets blockIdx / gridDim.
#include <algorithm>

#define __device__
#define __forceinline__ inline  // header functions are defined in every test that includes them
namespace tilegemm_test_shim {
struct Dim3Shim {
  unsigned x = 0, y = 0, z = 0;
};
}  // namespace tilegemm_test_shim
static tilegemm_test_shim::Dim3Shim blockIdx, gridDim;
template <class T>
T __ldg(const T* p) {
  return *p;
}
inline unsigned __cvta_generic_to_shared(const void*) {
  return 0;
}
inline unsigned __shfl_sync(unsigned, unsigned v, int) {
  return v;
}
using std::min;
