#pragma once
// The tensor description the deep_gemm extension's bindings take from the Python layer (_tensor.py reads it off a
// torch tensor): (data_ptr, dtype code, shape, strides in elements), and its conversion into a TensorView.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/tensor_view.hpp"

namespace deep_gemm_ext {

using View = std::tuple<std::uintptr_t, int, std::vector<std::int64_t>, std::vector<std::int64_t>>;

inline tilegemm::TensorView to_view(const View& v, const char* name) {
  const auto& [ptr, dtype, shape, strides] = v;
  if (shape.size() != strides.size() || shape.empty() || shape.size() > 4)
    throw tilegemm::InvalidArgument(name, "a tensor of 1 to 4 dimensions with one stride per dimension",
                                    fmt::format("{} sizes and {} strides", shape.size(), strides.size()));
  if (dtype < 0 || dtype > static_cast<int>(tilegemm::DType::kInt64))
    throw tilegemm::InvalidArgument(name, "a known dtype code", std::to_string(dtype));
  tilegemm::TensorView view;
  view.data = reinterpret_cast<void*>(ptr);
  view.dtype = static_cast<tilegemm::DType>(dtype);
  view.ndim = static_cast<int>(shape.size());
  for (int i = 0; i < view.ndim; ++i) view.shape[i] = shape[i], view.strides[i] = strides[i];
  return view;
}

}  // namespace deep_gemm_ext
