#pragma once
// How the SM90 FP8 kernels read a per-token scale tensor (ScaleLayout, shared_enums.hpp) and the TMA views of the
// two layouts TMA loads. Views are 3-D [G, rows, K blocks] (kernels::as_3d).
#include <cstdint>

#include "kernels/tma_descriptor.hpp"
#include "tilegemm/fp8_params.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::kernels {

// kMnMajor when rows are contiguous and K-block columns 16-byte aligned, kRowMajor when K blocks are contiguous and
// rows 16-byte aligned, else kStrided; both TMA layouts also need a 16-byte aligned base and group stride.
ScaleLayout per_token_scale_layout(const TensorView& sf);

// The layout an FP8 GEMM of `type` with `rows` rows (per group) and reduction `k` reads A's per-token scales in,
// given what their strides allow (per_token_scale_layout): row-major scales take the TMA boxes only where those
// measured faster than the element-wise copies (long K, or large M at medium K), and only in the GEMM types the GPU
// tests ran them in (dense, batched, M-grouped contiguous); else kStrided.
ScaleLayout preferred_sfa_layout(ScaleLayout possible, GemmType type, std::int64_t rows, std::int64_t k);

// kMnMajor: [G][K blocks][rows] with rows innermost, a box of box_rows rows of one K block.
TmaView mn_major_scale_view(const TensorView& sf, int box_rows);

// kRowMajor: [G][rows][K blocks] with K blocks innermost, a box of kRowMajorScaleBoxBlocks K blocks of box_rows rows.
TmaView row_major_scale_view(const TensorView& sf, int box_rows);

// The pointer and element strides the kernel's scale warp reads (kStrided, and 1D2D B's block scales).
ScaleTensor scale_tensor(const TensorView& sf);

}  // namespace tilegemm::kernels
