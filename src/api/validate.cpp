#include "api/validate.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <utility>

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
  TILEGEMM_REQUIRE(v.ndim == ndim, name, fmt::format("a {}-D tensor", ndim),
                   fmt::format("{}-D {}", v.ndim, shape_str(v)));
  TILEGEMM_REQUIRE(v.data != nullptr || v.numel() == 0, name, "a device pointer", "null");
}

void require_tensor(const TensorView& v, const char* name, int ndim, DType dtype) {
  require_ndim(v, name, ndim);
  require_dtype(v, name, dtype);
}

void require_contiguous_rows(const TensorView& v, const char* name) {
  TILEGEMM_REQUIRE(v.stride(-1) == 1, name, "contiguous rows (last stride 1)",
                   fmt::format("last stride {}", v.stride(-1)));
}

namespace {
// Each dimension (of extent > 1, innermost first by stride) steps past the whole span of the ones inside it.
void require_distinct_elements(const TensorView& v, const char* name) {
  std::array<int, 4> dims{};
  int n = 0;
  for (int i = 0; i < v.ndim; ++i)
    if (v.shape[i] > 1) dims[n++] = i;
  // By stride, innermost first; an insertion sort of at most four (GCC 12 reads std::sort's unrolled insertion
  // threshold of 16 as indexing past the array and warns).
  for (int j = 1; j < n; ++j)
    for (int k = j; k > 0 && v.strides[dims[k]] < v.strides[dims[k - 1]]; --k) std::swap(dims[k], dims[k - 1]);
  std::int64_t span = 1;  // elements covered by the dimensions inside
  for (int j = 0; j < n; ++j) {
    TILEGEMM_REQUIRE(v.strides[dims[j]] >= span, name, "an output whose elements do not overlap",
                     fmt::format("{}: dimension {} steps {} elements over a span of {}", describe(v), dims[j],
                                 v.strides[dims[j]], span));
    span = v.strides[dims[j]] * v.shape[dims[j]];
  }
}
}  // namespace

void require_tma_tensor(const TensorView& v, const char* name) {
  const auto address = reinterpret_cast<std::uintptr_t>(v.data);
  TILEGEMM_REQUIRE(address % 16 == 0, name, "a 16-byte aligned address (the kernels move it through TMA)",
                   fmt::format("{:#x}", address));
  const std::int64_t bytes = dtype_bits(v.dtype) / 8;
  for (int i = 0; i < v.ndim; ++i) {
    if (v.shape[i] <= 1 || v.strides[i] == 1) continue;
    TILEGEMM_REQUIRE(v.strides[i] > 0 && v.strides[i] * bytes % 16 == 0, name,
                     "positive strides that are multiples of 16 bytes apart from the contiguous one (TMA)",
                     fmt::format("a stride of {} bytes along dimension {} ({})", v.strides[i] * bytes, i, describe(v)));
  }
}

void require_tma_rows(const TensorView& v, const char* name) {
  const std::int64_t elem = dtype_bits(v.dtype) / 8;
  bool ok = v.stride(-1) == 1 || v.size(-1) <= 1;
  for (int i = 0; i + 1 < v.ndim; ++i) ok = ok && (v.size(i) <= 1 || (v.stride(i) > 0 && v.stride(i) * elem % 16 == 0));
  if (v.ndim >= 2) ok = ok && (v.size(-2) <= 1 || v.stride(-2) >= v.size(-1));
  TILEGEMM_REQUIRE(ok, name,
                   "contiguous rows that do not overlap, starting on 16-byte boundaries (other strides positive "
                   "multiples of 16 bytes)",
                   describe(v));
  TILEGEMM_REQUIRE(reinterpret_cast<std::uintptr_t>(v.data) % 16 == 0, name, "a 16-byte aligned address",
                   fmt::format("{}", v.data));
  for (int i = 0; i < v.ndim; ++i) require_int_size(v.stride(i), name);
}

void require_tma_operands(const TensorView& a, const TensorView& b, const TensorView& d) {
  require_tma_tensor(a, "a");
  require_tma_tensor(b, "b");
  require_tma_tensor(d, "d");
  require_distinct_elements(d, "d");
}

void require_int_size(std::int64_t value, const char* name) {
  TILEGEMM_REQUIRE(value >= 0 && value < (1LL << 31), name, "a size in [0, 2^31)", std::to_string(value));
}

void require_c_in_place_is_d(const TensorView& c, const TensorView& d) {
  if (c.data != d.data) return;
  bool same = c.ndim == d.ndim;
  for (int i = 0; same && i < c.ndim; ++i)
    same = c.shape[i] == d.shape[i] && (c.shape[i] <= 1 || c.strides[i] == d.strides[i]);
  TILEGEMM_REQUIRE(same, "c", "d itself (the same strides) when it shares d's memory, or a tensor of its own",
                   fmt::format("{} at d's address, d {}", describe(c), describe(d)));
}

void require_grouped_layout(const TensorView& grouped_layout, bool use_psum_layout, std::int64_t m, std::int64_t groups,
                            int alignment) {
  require_tensor(grouped_layout, "grouped_layout", 1, DType::kInt32);
  const std::int64_t want = use_psum_layout ? groups : m;
  TILEGEMM_REQUIRE(grouped_layout.size(0) == want && grouped_layout.stride(0) == 1, "grouped_layout",
                   use_psum_layout
                       ? fmt::format("contiguous [G={}] (each group's end row, with use_psum_layout)", groups)
                       : fmt::format("contiguous [M={}] (one group index per row)", m),
                   fmt::format("{} stride {}", shape_str(grouped_layout), grouped_layout.stride(0)));
  if (!use_psum_layout)
    TILEGEMM_REQUIRE(m % alignment == 0, "a", fmt::format("M a multiple of the group alignment {}", alignment),
                     std::to_string(m));
}

MaskedShape require_masked_shapes(const TensorView& a, const TensorView& b, const TensorView& d) {
  const MaskedShape x{a.size(0), a.size(1), b.size(1), a.size(2)};
  TILEGEMM_REQUIRE(b.size(0) == x.groups && b.size(2) == x.k, "b",
                   fmt::format("[G={}, N, K={}] to match a {}", x.groups, x.k, shape_str(a)), shape_str(b));
  TILEGEMM_REQUIRE(d.size(0) == x.groups && d.size(1) == x.m_max && d.size(2) == x.n, "d",
                   fmt::format("[G={}, M={}, N={}]", x.groups, x.m_max, x.n), shape_str(d));
  return x;
}

void require_masked_m(const TensorView& masked_m, std::int64_t groups, int expected_m) {
  require_tensor(masked_m, "masked_m", 1, DType::kInt32);
  TILEGEMM_REQUIRE(masked_m.size(0) == groups && masked_m.stride(0) == 1, "masked_m",
                   fmt::format("contiguous [G={}] (one row count per group)", groups),
                   fmt::format("{} stride {}", shape_str(masked_m), masked_m.stride(0)));
  TILEGEMM_REQUIRE(expected_m > 0, "expected_m", "a positive row-count hint", std::to_string(expected_m));
}

void require_group_ks(const std::vector<int>& ks, const TensorView& ks_tensor, std::int64_t groups, int multiple,
                      std::int64_t sum_k) {
  require_tensor(ks_tensor, "ks_tensor", 1, DType::kInt32);
  TILEGEMM_REQUIRE(static_cast<std::int64_t>(ks.size()) == groups, "ks",
                   fmt::format("{} group sizes (one per group of d)", groups), std::to_string(ks.size()));
  TILEGEMM_REQUIRE(ks_tensor.size(0) == groups && ks_tensor.stride(0) == 1, "ks_tensor",
                   fmt::format("contiguous [G={}]", groups),
                   fmt::format("{} stride {}", shape_str(ks_tensor), ks_tensor.stride(0)));
  std::int64_t total = 0;
  for (std::size_t g = 0; g < ks.size(); ++g) {
    TILEGEMM_REQUIRE(ks[g] >= 0 && ks[g] % multiple == 0, fmt::format("ks[{}]", g),
                     fmt::format("a non-negative multiple of {} (each group starts on a whole K block)", multiple),
                     std::to_string(ks[g]));
    total += ks[g];
  }
  TILEGEMM_REQUIRE(total == sum_k, "ks", fmt::format("sizes summing to a's K extent {}", sum_k),
                   fmt::format("a sum of {}", total));
}

void zero_empty_groups(const TensorView& d, const std::vector<int>& ks, void* stream) {
  const auto group_bytes = static_cast<std::size_t>(d.stride(0)) * (dtype_bits(d.dtype) / 8);
  for (std::size_t g = 0; g < ks.size(); ++g)
    if (ks[g] == 0)
      copy_or_zero(
          TensorView::matrix(static_cast<char*>(d.data) + g * group_bytes, d.dtype, d.size(1), d.size(2), d.stride(1)),
          nullptr, stream);
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
