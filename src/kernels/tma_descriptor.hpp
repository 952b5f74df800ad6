#pragma once
// Host-side encoding of TMA tensor maps (CUtensorMap) for the kernels' 3-D operand views.
#include <array>
#include <cstdint>

#include "tilegemm/dtype.hpp"
#include "tilegemm/gemm_params.hpp"

namespace tilegemm::kernels {

// A 3-D strided view, innermost dimension first: dims {d0, d1, d2}; byte strides of d1 and d2 (d0 is
// contiguous). Box is the tile one TMA instruction moves; swizzle_bytes ∈ {0, 32, 64, 128}.
struct TmaView {
  void* base = nullptr;
  DType dtype = DType::kBFloat16;
  std::array<std::uint64_t, 3> dims{};
  std::array<std::uint64_t, 2> byte_strides{};
  std::array<std::uint32_t, 3> box{};
  int swizzle_bytes = 128;
};

// Encodes the view with cuTensorMapEncodeTiled (reached through the CUDA runtime's driver entry point, so
// no link against libcuda). Throws InvalidArgument for views TMA cannot describe (`what` names the operand)
// and RuntimeError when the driver is missing or rejects the map.
TmaDescriptor encode_tma(const TmaView& view, const char* what);

}  // namespace tilegemm::kernels
