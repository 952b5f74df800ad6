#include "reference/host_view.hpp"

#include <bit>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm::reference_detail {

std::string view_string(const TensorView& v) {
  std::string shape, strides;
  for (int i = 0; i < v.ndim && i < 4; ++i) {
    shape += fmt::format("{}{}", i ? ", " : "", v.shape[i]);
    strides += fmt::format("{}{}", i ? ", " : "", v.strides[i]);
  }
  return fmt::format("{}[{}] strides [{}]", dtype_name(v.dtype), shape, strides);
}

void require_host_matrix(const TensorView& v, const std::string& argument) {
  TILEGEMM_REQUIRE(v.ndim == 2 || v.ndim == 3, argument, "a 2-D or 3-D view", view_string(v));
  TILEGEMM_REQUIRE(v.dtype == DType::kBFloat16 || v.dtype == DType::kFloat16 || v.dtype == DType::kFloat32, argument,
                   "dtype bf16, fp16 or fp32", view_string(v));
  for (int i = 0; i < v.ndim; ++i) TILEGEMM_REQUIRE(v.shape[i] >= 0, argument, "non-negative sizes", view_string(v));
  TILEGEMM_REQUIRE(v.numel() == 0 || v.data != nullptr, argument, "a non-null data pointer", "nullptr");
}

namespace {
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf / NaN
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // Subnormal half: normalise into a float exponent.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) mantissa <<= 1, ++shift;
    mantissa &= 0x3FFu;
    exponent = static_cast<std::uint32_t>(1 - shift);
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
}  // namespace

float load_float(const void* data, DType dtype, std::int64_t offset) {
  switch (dtype) {
    case DType::kBFloat16:
      return bf16_to_float(static_cast<const std::uint16_t*>(data)[offset]);
    case DType::kFloat16:
      return half_to_float(static_cast<const std::uint16_t*>(data)[offset]);
    case DType::kFloat32:
      return static_cast<const float*>(data)[offset];
    default:
      break;
  }
  throw InvalidArgument("dtype", "bf16, fp16 or fp32", std::string(dtype_name(dtype)));
}

std::vector<float> rows_as_floats(const TensorView& v, std::int64_t batch, std::int64_t row_begin,
                                  std::int64_t row_end) {
  const int r = v.ndim - 2;
  const std::int64_t cols = v.shape[r + 1];
  const std::int64_t base = r == 1 ? batch * v.strides[0] : 0;
  std::vector<float> out(static_cast<std::size_t>((row_end - row_begin) * cols));
  std::size_t i = 0;
  for (std::int64_t row = row_begin; row < row_end; ++row)
    for (std::int64_t col = 0; col < cols; ++col)
      out[i++] = load_float(v.data, v.dtype, base + row * v.strides[r] + col * v.strides[r + 1]);
  return out;
}

}  // namespace tilegemm::reference_detail
