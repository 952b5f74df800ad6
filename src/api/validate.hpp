#pragma once
// Argument checks and small device helpers shared by the public GEMM entry points (src/api/*.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/tensor_view.hpp"

namespace tilegemm::api {

std::string shape_str(const TensorView& v);  // "[4096, 7168]"
void require_dtype(const TensorView& v, const char* name, DType want);
// A device tensor of `ndim` dimensions (a null pointer only when it is empty).
void require_ndim(const TensorView& v, const char* name, int ndim);
void require_tensor(const TensorView& v, const char* name, int ndim, DType dtype);
// The last dimension contiguous (stride 1).
void require_contiguous_rows(const TensorView& v, const char* name);
// What the kernels need of the tensors they move through TMA, A and B read and D written: a 16-byte aligned
// address, positive strides, each a multiple of 16 bytes apart from the contiguous one (dimensions of extent 1
// aside), and for D elements that do not overlap. Checked when the plan is made, after validate_desc (whose
// messages name a ragged dimension), so a call without a GPU names the tensor too, rather than the first launch's
// tensor-map encode.
void require_tma_operands(const TensorView& a, const TensorView& b, const TensorView& d);
// One tensor TMA moves: a 16-byte aligned address and positive strides that are multiples of 16 bytes apart from
// the contiguous one (dimensions of extent 1 aside).
void require_tma_tensor(const TensorView& v, const char* name);
// Rows TMA moves as boxes: the last dimension contiguous, every other stride a positive multiple of 16 bytes, rows
// that do not overlap, a 16-byte aligned address and strides that fit an int.
void require_tma_rows(const TensorView& v, const char* name);
// A size that fits the kernels' int arithmetic.
void require_int_size(std::int64_t value, const char* name);
// C sharing D's data pointer means D += A·Bᵀ in place (the kernels then read and write D's elements only): C must be
// D's very view then, the same strides along every dimension of extent > 1. Otherwise InvalidArgument naming "c".
void require_c_in_place_is_d(const TensorView& c, const TensorView& d);
// The group metadata of grouped GEMMs (shared by the BF16 and FP8 entry points):
// M-grouped contiguous: int32 [M] group index per row, or [G] end rows with use_psum_layout; contiguous; without
// the prefix-sum layout M must be a multiple of `alignment` (each group padded to it).
void require_grouped_layout(const TensorView& grouped_layout, bool use_psum_layout, std::int64_t m, std::int64_t groups,
                            int alignment);
// M-grouped masked operands: a [G, M_max, K], b [G, N, K] (storage shape), d [G, M_max, N]; returns the sizes.
struct MaskedShape {
  std::int64_t groups, m_max, n, k;
};
MaskedShape require_masked_shapes(const TensorView& a, const TensorView& b, const TensorView& d);
// M-grouped masked: int32 masked_m [G] contiguous (read on the device), expected_m a positive hint.
void require_masked_m(const TensorView& masked_m, std::int64_t groups, int expected_m);
// K-grouped: the group sizes on the host (`ks`, each a non-negative multiple of `multiple`, summing to sum_k)
// and as int32 [G] on the device.
void require_group_ks(const std::vector<int>& ks, const TensorView& ks_tensor, std::int64_t groups, int multiple,
                      std::int64_t sum_k);
// K-grouped without C: zeros into d[g] for each group with K = 0 (the kernels skip those groups).
void zero_empty_groups(const TensorView& d, const std::vector<int>& ks, void* stream);

// Writes C (or zeros, c == nullptr) into D with the copy engines: K = 0, or before accumulating when C is not D.
void copy_or_zero(const TensorView& d, const TensorView* c, void* stream);

}  // namespace tilegemm::api
