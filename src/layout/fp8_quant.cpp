// Per-token / per-block FP8 quantisation, dequantisation and the MN-major TMA-aligned scale layout on the
// host (the CPU references the GPU layout kernels and the FP8 GEMM tests compare against).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/int_math.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace tilegemm {
namespace {

void require_matrix(const float* x, int rows, int cols) {
  TILEGEMM_REQUIRE(x != nullptr, "x", "a non-null pointer to rows * cols floats", "nullptr");
  TILEGEMM_REQUIRE(rows > 0, "rows", "a positive row count", fmt::format("{}", rows));
  TILEGEMM_REQUIRE(cols > 0, "cols", "a positive column count", fmt::format("{}", cols));
}

// Quantises x in blocks of block_rows x 128 (block_rows = 1 per token, 128 per block).
Fp8Quantized quantize_blocks(const float* x, int rows, int cols, int block_rows, bool ue8m0) {
  require_matrix(x, rows, cols);
  Fp8Quantized q;
  q.rows = rows, q.cols = cols;
  q.scale_rows = ceil_div(rows, block_rows), q.scale_cols = ceil_div(cols, kFp8ScaleBlock);
  q.data.resize(static_cast<std::size_t>(rows) * cols);
  q.scales.resize(static_cast<std::size_t>(q.scale_rows) * q.scale_cols);
  for (int br = 0; br < q.scale_rows; ++br)
    for (int bc = 0; bc < q.scale_cols; ++bc) {
      const int r0 = br * block_rows, r1 = std::min(rows, r0 + block_rows);
      const int c0 = bc * kFp8ScaleBlock, c1 = std::min(cols, c0 + kFp8ScaleBlock);
      // amax that lets a NaN through (std::max would drop it depending on the argument order).
      float amax = 0.0f;
      for (int r = r0; r < r1; ++r)
        for (int c = c0; c < c1; ++c) {
          const float a = std::fabs(x[static_cast<std::size_t>(r) * cols + c]);
          if (std::isnan(a) || a > amax) amax = a;
        }
      float scale = std::isnan(amax) ? amax : std::max(amax, kFp8AmaxFloor) / kE4M3Max;
      if (ue8m0) scale = ceil_to_ue8m0(scale);
      q.scales[static_cast<std::size_t>(br) * q.scale_cols + bc] = scale;
      for (int r = r0; r < r1; ++r)
        for (int c = c0; c < c1; ++c) {
          const std::size_t i = static_cast<std::size_t>(r) * cols + c;
          q.data[i] = float_to_e4m3(x[i] / scale);
        }
    }
  return q;
}

}  // namespace

Fp8Quantized quantize_per_token_1x128(const float* x, int rows, int cols, bool ue8m0) {
  return quantize_blocks(x, rows, cols, 1, ue8m0);
}

Fp8Quantized quantize_per_block_128x128(const float* x, int rows, int cols, bool ue8m0) {
  return quantize_blocks(x, rows, cols, kFp8ScaleBlock, ue8m0);
}

std::vector<float> dequantize(const Fp8Quantized& q, bool per_block) {
  const int block_rows = per_block ? kFp8ScaleBlock : 1;
  const bool sizes_ok = q.rows > 0 && q.cols > 0 && q.data.size() == static_cast<std::size_t>(q.rows) * q.cols &&
                        q.scale_rows == ceil_div(q.rows, block_rows) &&
                        q.scale_cols == ceil_div(q.cols, kFp8ScaleBlock) &&
                        q.scales.size() == static_cast<std::size_t>(q.scale_rows) * q.scale_cols;
  TILEGEMM_REQUIRE(sizes_ok, "q",
                   fmt::format("data [rows, cols] and {} scales [ceil(rows/{}), ceil(cols/128)]",
                               per_block ? "per-block" : "per-token", block_rows),
                   fmt::format("rows {}, cols {}, {} data bytes, scales [{}, {}] holding {} floats", q.rows, q.cols,
                               q.data.size(), q.scale_rows, q.scale_cols, q.scales.size()));
  std::vector<float> out(q.data.size());
  for (int r = 0; r < q.rows; ++r)
    for (int c = 0; c < q.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * q.cols + c;
      const float scale = q.scales[static_cast<std::size_t>(r / block_rows) * q.scale_cols + c / kFp8ScaleBlock];
      out[i] = e4m3_to_float(q.data[i]) * scale;
    }
  return out;
}

int get_tma_aligned_size(int mn, int elem_bytes) {
  TILEGEMM_REQUIRE(elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8 || elem_bytes == 16,
                   "elem_bytes", "1, 2, 4, 8 or 16 (a divisor of the 16-byte TMA alignment)",
                   fmt::format("{}", elem_bytes));
  TILEGEMM_REQUIRE(mn >= 0, "mn", "a non-negative size", fmt::format("{}", mn));
  const int unit = 16 / elem_bytes;
  return ceil_div(mn, unit) * unit;
}

std::vector<float> to_mn_major_tma_aligned(const float* sf, int groups, int mn, int kb) {
  TILEGEMM_REQUIRE(sf != nullptr, "sf", "a non-null pointer to groups * mn * kb floats", "nullptr");
  TILEGEMM_REQUIRE(groups > 0, "groups", "a positive group count", fmt::format("{}", groups));
  TILEGEMM_REQUIRE(mn > 0, "mn", "a positive size", fmt::format("{}", mn));
  TILEGEMM_REQUIRE(kb > 0, "kb", "a positive K-block count", fmt::format("{}", kb));
  const std::size_t aligned = static_cast<std::size_t>(get_tma_aligned_size(mn, 4));
  std::vector<float> out(static_cast<std::size_t>(groups) * kb * aligned, 0.0f);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < mn; ++m)
      for (int k = 0; k < kb; ++k)
        out[(static_cast<std::size_t>(g) * kb + k) * aligned + m] = sf[(static_cast<std::size_t>(g) * mn + m) * kb + k];
  return out;
}

}  // namespace tilegemm
