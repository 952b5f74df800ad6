#pragma once
// Host-side FP8 (e4m3) quantisation helpers with DeepGEMM's fine-grained scaling, for tests and users who
// need FP8 operands and scales in the layouts of fp8_gemm.hpp. Everything here is plain C++ (no CUDA).
//
// e4m3 is OCP E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits, no infinities, 0x7F/0xFF are NaN,
// largest finite ±448, smallest subnormal 2^-9.
#include <cstdint>
#include <vector>

namespace tilegemm {

// Largest finite e4m3 value; the quantisers map each block's amax onto it.
inline constexpr float kE4M3Max = 448.0f;
// DeepGEMM clamps each block's amax to at least this, so all-zero blocks get a finite, non-zero scale.
inline constexpr float kFp8AmaxFloor = 1e-4f;
// K (and, per block, MN) granularity of the scales.
inline constexpr int kFp8ScaleBlock = 128;

// Round-to-nearest-even; finite values beyond ±448 and ±inf saturate to ±448; NaN → 0x7F; -0 → 0x80.
std::uint8_t float_to_e4m3(float x);
// Exact (every e4m3 value is a float); 0x7F and 0xFF give NaN.
float e4m3_to_float(std::uint8_t code);

// UE8M0 is an 8-bit biased exponent (value 2^(e-127)); a scale is representable iff it is a positive normal
// float with a zero mantissa. ceil_to_ue8m0 rounds a positive scale UP to such a power of two (so x / scale
// never leaves the e4m3 range): values at or below 2^-126 give 2^-126, values above 2^127 give +inf, NaN and
// +inf pass through; zero and negative scales throw InvalidArgument("scale", ...).
float ceil_to_ue8m0(float scale);
bool is_ue8m0(float scale);

// Quantised operand: data row-major [rows, cols] (e4m3 codes), scales row-major [scale_rows, scale_cols].
struct Fp8Quantized {
  std::vector<std::uint8_t> data;
  std::vector<float> scales;
  int rows = 0, cols = 0, scale_rows = 0, scale_cols = 0;
};

// Per-token 1x128 (DeepGEMM's per_token_cast_to_fp8): one scale per row and 128-column block, scales
// [rows, ceil(cols/128)]. Per-block 128x128 (per_block_cast_to_fp8): scales [ceil(rows/128), ceil(cols/128)].
// Scale = max(amax, 1e-4) / 448 over the block's real elements (a ragged last block is not padded with
// anything that could change its amax); with `ue8m0` the scale is rounded up by ceil_to_ue8m0.
// data = e4m3(x / scale), so x ≈ e4m3_to_float(data) * scale. A NaN in a block makes its scale NaN.
// Throws InvalidArgument naming "x", "rows" or "cols" on a null pointer or a non-positive size.
Fp8Quantized quantize_per_token_1x128(const float* x, int rows, int cols, bool ue8m0);
Fp8Quantized quantize_per_block_128x128(const float* x, int rows, int cols, bool ue8m0);

// Back to floats, row-major [rows, cols]: e4m3_to_float(data) * scale of the element's block. `per_block`
// says which scale granularity q holds; throws InvalidArgument("q", ...) when its sizes do not match that.
std::vector<float> dequantize(const Fp8Quantized& q, bool per_block);

// Elements of a `elem_bytes`-wide type that make 16 bytes (one TMA alignment unit): mn rounded up to a
// multiple of 16 / elem_bytes. elem_bytes must be 1, 2, 4, 8 or 16; mn must be >= 0.
int get_tma_aligned_size(int mn, int elem_bytes);

// Row-major fp32 scales [groups, mn, kb] → the per-token layout fp8_gemm.hpp consumes: per group a
// [kb][get_tma_aligned_size(mn, 4)] block (each K-block column of mn scales contiguous, padded with 0.0f),
// groups one after another. Result size groups * kb * get_tma_aligned_size(mn, 4).
std::vector<float> to_mn_major_tma_aligned(const float* sf, int groups, int mn, int kb);

}  // namespace tilegemm
