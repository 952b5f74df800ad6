#include "bench/host_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm::bench_detail {

namespace {
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Chunks are seeded by index so the result does not depend on the thread count.
constexpr std::size_t kChunk = std::size_t{1} << 20;

// (2r + 1) / 2^24 − 1 for a 24-bit r: uniform in (-1, 1) with an odd numerator, so never zero.
float uniform_nonzero(std::uint64_t& state) {
  const auto r = static_cast<std::uint32_t>(splitmix64(state) >> 40);
  return static_cast<float>(2.0 * r + 1.0) / 16777216.0f - 1.0f;
}

void fill_chunk(std::uint16_t* out, std::size_t count, std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) out[i] = float_to_bf16(uniform_nonzero(state));
}

// Runs fill(chunk_out, chunk_count, chunk_seed) over chunks of kChunk elements on up to hardware_concurrency
// threads; chunk seeds depend on the chunk index only.
template <typename T, typename Fill>
void fill_chunked(T* out, std::size_t count, std::uint64_t seed, Fill fill) {
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  const std::size_t threads = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), chunks);
  auto work = [&](std::size_t first) {
    for (std::size_t c = first; c < chunks; c += threads) {
      std::uint64_t chunk_seed = seed ^ (0xD1B54A32D192ED03ULL * (c + 1));
      fill(out + c * kChunk, std::min(kChunk, count - c * kChunk), splitmix64(chunk_seed));
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  if (chunks > 0) work(0);
  for (auto& th : pool) th.join();
}

template <typename Load>
double calc_diff_impl(std::size_t count, Load load) {
  double xy = 0, xx_yy = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double x = load(0, i), y = load(1, i);
    xy += x * y;
    xx_yy += x * x + y * y;
  }
  if (std::isnan(xy) || std::isnan(xx_yy)) return std::nan("");
  if (xx_yy == 0) return 0;
  return 1 - 2 * xy / xx_yy;
}
}  // namespace

void fill_random_bf16(std::uint16_t* out, std::size_t count, std::uint64_t seed) {
  fill_chunked(out, count, seed, fill_chunk);
}

std::uint8_t float_to_e4m3(float value) {
  if (std::isnan(value)) return 0x7F;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const double a = std::fabs(static_cast<double>(value));
  if (a >= 448.0) return sign | 0x7E;
  // Below the smallest normal (2^-6) the grid is k · 2^-9, k = 0..8; k = 8 is 2^-6 itself, whose encoding
  // (exponent field 1, mantissa 0) is again 8, so the subnormal code is the rounded k.
  if (a < 0x1.0p-6) return sign | static_cast<std::uint8_t>(std::nearbyint(a * 512.0));
  int e = 0;
  const double frac = std::frexp(a, &e);  // a = frac · 2^e, frac in [0.5, 1): exponent e − 1
  int exponent = e - 1;
  int mantissa = static_cast<int>(std::nearbyint((frac * 2.0 - 1.0) * 8.0));  // ties to even (default mode)
  if (mantissa == 8) mantissa = 0, ++exponent;
  return sign | static_cast<std::uint8_t>(((exponent + 7) << 3) | mantissa);  // ≤ 448 = 0x7E, never NaN
}

float e4m3_to_float(std::uint8_t bits) {
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  const int exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
}

void fill_random_e4m3(std::uint8_t* out, std::size_t count, std::uint64_t seed) {
  fill_chunked(out, count, seed, [](std::uint8_t* chunk, std::size_t n, std::uint64_t state) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t q = float_to_e4m3(uniform_nonzero(state) * 448.0f);
      if ((q & 0x7F) == 0) q |= 0x01;  // ±0 → ±2^-9
      chunk[i] = q;
    }
  });
}

void fill_random_scales(float* out, std::size_t count, std::uint64_t seed) {
  fill_chunked(out, count, seed, [](float* chunk, std::size_t n, std::uint64_t state) {
    // uniform_nonzero in (-1, 1) → [0.5, 2) through 2^x: positive, and spread over two binades.
    for (std::size_t i = 0; i < n; ++i) chunk[i] = std::exp2(uniform_nonzero(state)) / 448.0f;
  });
}

std::int64_t tma_aligned_rows(std::int64_t rows) {
  return (rows + 3) / 4 * 4;
}

std::vector<float> pack_per_token_scales(std::span<const float> logical, std::int64_t groups, std::int64_t rows,
                                         std::int64_t kb) {
  TILEGEMM_REQUIRE(
      groups >= 0 && rows >= 0 && kb >= 0 && static_cast<std::int64_t>(logical.size()) == groups * rows * kb, "logical",
      fmt::format("{} scales ([{}, {}, {}])", groups * rows * kb, groups, rows, kb), std::to_string(logical.size()));
  const std::int64_t ld = tma_aligned_rows(rows);
  std::vector<float> packed(static_cast<std::size_t>(groups * kb * ld), 0.0f);
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < kb; ++j) packed[(g * kb + j) * ld + r] = logical[(g * rows + r) * kb + j];
  return packed;
}

double calc_diff(const void* x, const void* y, std::size_t count, DType dtype) {
  const void* arrays[2] = {x, y};
  if (dtype == DType::kBFloat16)
    return calc_diff_impl(count, [&](int a, std::size_t i) {
      return static_cast<double>(bf16_to_float(static_cast<const std::uint16_t*>(arrays[a])[i]));
    });
  if (dtype == DType::kFloat32)
    return calc_diff_impl(
        count, [&](int a, std::size_t i) { return static_cast<double>(static_cast<const float*>(arrays[a])[i]); });
  throw InvalidArgument("dtype", "bf16 or fp32", fmt::format("'{}'", dtype_name(dtype)));
}

}  // namespace tilegemm::bench_detail
