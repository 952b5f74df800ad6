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

void fill_chunk(std::uint16_t* out, std::size_t count, std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) {
    // (2r + 1) / 2^24 − 1 has an odd numerator, so it is never zero.
    const auto r = static_cast<std::uint32_t>(splitmix64(state) >> 40);  // 24 bits
    const float x = static_cast<float>(2.0 * r + 1.0) / 16777216.0f - 1.0f;
    out[i] = float_to_bf16(x);
  }
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
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), chunks);
  auto work = [&](std::size_t first) {
    for (std::size_t c = first; c < chunks; c += threads) {
      std::uint64_t chunk_seed = seed ^ (0xD1B54A32D192ED03ULL * (c + 1));
      fill_chunk(out + c * kChunk, std::min(kChunk, count - c * kChunk), splitmix64(chunk_seed));
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  if (chunks > 0) work(0);
  for (auto& th : pool) th.join();
}

double calc_diff(const void* x, const void* y, std::size_t count, DType dtype) {
  const void* arrays[2] = {x, y};
  if (dtype == DType::kBFloat16)
    return calc_diff_impl(count, [&](int a, std::size_t i) {
      return static_cast<double>(bf16_to_float(static_cast<const std::uint16_t*>(arrays[a])[i]));
    });
  if (dtype == DType::kFloat32)
    return calc_diff_impl(count, [&](int a, std::size_t i) {
      return static_cast<double>(static_cast<const float*>(arrays[a])[i]);
    });
  throw InvalidArgument("dtype", "bf16 or fp32", fmt::format("'{}'", dtype_name(dtype)));
}

}  // namespace tilegemm::bench_detail
