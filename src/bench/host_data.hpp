#pragma once
// Host-side data for the harness: random bf16 and e4m3 operands (never zero), positive random fp32 scales, the
// scale layouts tilegemm's FP8 kernels read, and a streaming calc_diff.
// Internal to src/bench; tested in tests/cpp/test_bench_host_data.cpp.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tilegemm/dtype.hpp"

namespace tilegemm::bench_detail {

// Bytes of one bf16 element (the bf16 operands and outputs the runs allocate).
inline constexpr std::size_t kBf16Bytes = 2;

// `count` bf16 values uniform in (-1, 1), never exactly zero; deterministic for a seed whatever the
// number of threads it is spread over.
void fill_random_bf16(std::uint16_t* out, std::size_t count, std::uint64_t seed);

// float → e4m3 (OCP "fn": no infinities, max 448) rounding to nearest, ties to even; values beyond ±448
// saturate to ±448 and NaN becomes 0x7F. The inverse is exact.
std::uint8_t float_to_e4m3(float value);
float e4m3_to_float(std::uint8_t bits);

// `count` e4m3 values of uniform(-1, 1) × 448 — what per-block amax quantisation produces — never ±0 (a value
// that would round to zero becomes the smallest subnormal of its sign). Deterministic for a seed.
void fill_random_e4m3(std::uint8_t* out, std::size_t count, std::uint64_t seed);

// `count` positive scales uniform in [0.5, 2) / 448 (dequantised operands of order one), never zero.
void fill_random_scales(float* out, std::size_t count, std::uint64_t seed);

// Logical scales are row-major [rows, kb] (kb = ceil(K/128)); these lay them out as fp8_gemm.hpp's kernels
// read them. Per token (A, MN-major): element (r, j) at j·ld + r with ld = rows rounded up to a multiple of 4
// (tma_aligned_rows); `groups` > 1 repeats that per group (logical [groups, rows, kb] → [groups][kb][ld]).
// Per block (B): [groups, rows, kb] row-major, i.e. the logical layout itself.
std::int64_t tma_aligned_rows(std::int64_t rows);
std::vector<float> pack_per_token_scales(std::span<const float> logical, std::int64_t groups, std::int64_t rows,
                                         std::int64_t kb);

// DeepGEMM's calc_diff (reference.hpp's formula) over two host arrays of `dtype` (bf16 or fp32), streamed:
// the bench's outputs reach 134M elements, too many to copy into vectors of double first.
double calc_diff(const void* x, const void* y, std::size_t count, DType dtype);

}  // namespace tilegemm::bench_detail
