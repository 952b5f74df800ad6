#pragma once
// A non-owning view of a device tensor: pointer, dtype, shape and strides in elements. This is all the
// C++ API knows about tensors; the Python layer fills it from torch tensors without linking libtorch.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "tilegemm/dtype.hpp"

namespace tilegemm {

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kBFloat16;
  int ndim = 0;
  std::array<std::int64_t, 4> shape{};
  std::array<std::int64_t, 4> strides{};  // in elements

  static TensorView matrix(void* data, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                           std::int64_t col_stride = 1) {
    TensorView v;
    v.data = data, v.dtype = dtype, v.ndim = 2;
    v.shape = {rows, cols, 0, 0};
    v.strides = {row_stride, col_stride, 0, 0};
    return v;
  }
  // [batch, rows, cols] with the given strides.
  static TensorView batched(void* data, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                            std::int64_t batch_stride, std::int64_t row_stride, std::int64_t col_stride = 1) {
    TensorView v;
    v.data = data, v.dtype = dtype, v.ndim = 3;
    v.shape = {batch, rows, cols, 0};
    v.strides = {batch_stride, row_stride, col_stride, 0};
    return v;
  }
  // Row-major (contiguous) with the given sizes, at most 4.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape) {
    TensorView v;
    v.data = data, v.dtype = dtype, v.ndim = static_cast<int>(shape.size());
    int i = 0;
    for (const std::int64_t size : shape) v.shape[i++] = size;
    std::int64_t stride = 1;
    for (i = v.ndim - 1; i >= 0; --i) v.strides[i] = stride, stride *= v.shape[i];
    return v;
  }
  std::int64_t size(int dim) const { return shape[dim < 0 ? dim + ndim : dim]; }
  std::int64_t stride(int dim) const { return strides[dim < 0 ? dim + ndim : dim]; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
};

std::string describe(const TensorView& v);  // "bf16[4096, 7168] strides [7168, 1]"

}  // namespace tilegemm
