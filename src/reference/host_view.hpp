#pragma once
// Internal: reading host views of bf16/fp16/fp32 storage and checking their shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm::reference_detail {

// "bf16[4, 8] strides [8, 1]" — for error messages.
std::string view_string(const TensorView& v);

// Throws InvalidArgument naming `argument` unless the view is 2-D or 3-D with non-negative sizes, a
// readable element type and a non-null pointer when it holds elements.
void require_host_matrix(const TensorView& v, const std::string& argument);

// Element `offset` (in elements) from `data` as float. Every supported storage type (bf16, fp16, fp32)
// converts to float exactly.
float load_float(const void* data, DType dtype, std::int64_t offset);

// Rows [row_begin, row_end) of matrix `batch` of a 2-D/3-D view, densely packed row-major as floats.
std::vector<float> rows_as_floats(const TensorView& v, std::int64_t batch, std::int64_t row_begin,
                                  std::int64_t row_end);

}  // namespace tilegemm::reference_detail
