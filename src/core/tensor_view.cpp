#include "tilegemm/tensor_view.hpp"

#include <fmt/format.h>

namespace tilegemm {

// "bf16[4096, 7168] strides [7168, 1]": what error messages print for a tensor argument.
std::string describe(const TensorView& v) {
  std::string shape, strides;
  for (int i = 0; i < v.ndim && i < static_cast<int>(v.shape.size()); ++i) {
    shape += fmt::format("{}{}", i ? ", " : "", v.shape[i]);
    strides += fmt::format("{}{}", i ? ", " : "", v.strides[i]);
  }
  return fmt::format("{}[{}] strides [{}]", dtype_name(v.dtype), shape, strides);
}

}  // namespace tilegemm
