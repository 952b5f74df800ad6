#include "api/validate.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::api {

std::string shape_str(const TensorView& v) {
  std::string s = "[";
  for (int i = 0; i < v.ndim; ++i) s += fmt::format("{}{}", i ? ", " : "", v.shape[i]);
  return s + "]";
}

void require_dtype(const TensorView& v, const char* name, DType want) {
  TILEGEMM_REQUIRE(v.dtype == want, name, std::string(dtype_name(want)), std::string(dtype_name(v.dtype)));
}

void require_ndim(const TensorView& v, const char* name, int ndim) {
  TILEGEMM_REQUIRE(v.ndim == ndim, name, fmt::format("a {}-D tensor", ndim), fmt::format("{}-D {}", v.ndim, shape_str(v)));
  TILEGEMM_REQUIRE(v.data != nullptr || v.numel() == 0, name, "a device pointer", "null");
}

void require_tensor(const TensorView& v, const char* name, int ndim, DType dtype) {
  require_ndim(v, name, ndim);
  require_dtype(v, name, dtype);
}

void require_contiguous_rows(const TensorView& v, const char* name) {
  TILEGEMM_REQUIRE(v.stride(-1) == 1, name, "contiguous rows (last stride 1)", fmt::format("last stride {}", v.stride(-1)));
}

void require_int_size(std::int64_t value, const char* name) {
  TILEGEMM_REQUIRE(value >= 0 && value < (1LL << 31), name, "a size in [0, 2^31)", std::to_string(value));
}

void copy_or_zero(const TensorView& d, const TensorView* c, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  const auto e = static_cast<size_t>(dtype_bits(d.dtype) / 8);
  const std::int64_t batches = d.ndim == 3 ? d.size(0) : 1;
  for (std::int64_t b = 0; b < batches; ++b) {
    auto* dst = static_cast<char*>(d.data) + (d.ndim == 3 ? b * d.stride(0) : 0) * e;
    cudaError_t err;
    if (c != nullptr) {
      const auto* src = static_cast<const char*>(c->data) + (c->ndim == 3 ? b * c->stride(0) : 0) * e;
      err = cudaMemcpy2DAsync(dst, d.stride(-2) * e, src, c->stride(-2) * e, d.size(-1) * e, d.size(-2),
                              cudaMemcpyDeviceToDevice, stream);
    } else {
      err = cudaMemset2DAsync(dst, d.stride(-2) * e, 0, d.size(-1) * e, d.size(-2), stream);
    }
    if (err != cudaSuccess) throw RuntimeError(fmt::format("copying c into d failed: {}", cudaGetErrorString(err)));
  }
}

}  // namespace tilegemm::api
