#pragma once
// Argument checks and small device helpers shared by the public GEMM entry points (src/api/*.cpp).
#include <cstdint>
#include <string>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm::api {

std::string shape_str(const TensorView& v);  // "[4096, 7168]"
void require_dtype(const TensorView& v, const char* name, DType want);
// A device tensor of `ndim` dimensions (a null pointer only when it is empty).
void require_ndim(const TensorView& v, const char* name, int ndim);
void require_tensor(const TensorView& v, const char* name, int ndim, DType dtype);
// The last dimension contiguous (stride 1).
void require_contiguous_rows(const TensorView& v, const char* name);
// A size that fits the kernels' int arithmetic.
void require_int_size(std::int64_t value, const char* name);
// Writes C (or zeros, c == nullptr) into D with the copy engines: K = 0, or before accumulating when C is not D.
void copy_or_zero(const TensorView& d, const TensorView* c, void* stream);

}  // namespace tilegemm::api
