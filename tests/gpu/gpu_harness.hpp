#pragma once
// Shared machinery of the GPU tests: device detection, guarded device tensors (poisoned output, guard
// bands checked after the run), seeded random inputs, the float64 reference and the one-line case report.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tilegemm/reference.hpp"
#include "tilegemm/tensor_view.hpp"

namespace gpu_test {

using tilegemm::DType;
using tilegemm::TensorView;

// BF16 GEMMs must be within this of the float64 reference (DeepGEMM's bound for its bf16 tests).
constexpr double kMaxDiff = 1e-5;
// Above this many multiply-adds the float64 reference checks a sample of rows instead of all of them.
constexpr double kFullReferenceLimit = 2.0e9;
constexpr int kSampledRows = 64;

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status)));
}

// Empty when a CUDA device is usable, otherwise the reason (for GTEST_SKIP).
inline std::string why_no_gpu() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return fmt::format("no usable CUDA device ({})", cudaGetErrorName(status));
  if (count == 0) return "no CUDA device";
  return {};
}

// Empty when the current device can run the sm_90a kernels.
inline std::string why_no_sm90() {
  std::string why = why_no_gpu();
  if (!why.empty()) return why;
  int device = 0, major = 0, minor = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute");
  if (major != 9)
    return fmt::format("the SM90 kernels need compute capability 9.x, this device is {}.{}", major, minor);
  return {};
}

#define GPU_TEST_REQUIRE_GPU()                         \
  do {                                                 \
    const std::string why_ = ::gpu_test::why_no_gpu(); \
    if (!why_.empty()) GTEST_SKIP() << why_;           \
  } while (0)
#define GPU_TEST_REQUIRE_SM90()                         \
  do {                                                  \
    const std::string why_ = ::gpu_test::why_no_sm90(); \
    if (!why_.empty()) GTEST_SKIP() << why_;            \
  } while (0)

// "full" runs the whole cross product of the case lists; "quick" (default) a covering subset in which every
// layout, dtype, C mode and every listed M, N and K still appears.
inline bool full_level() {
  const char* level = std::getenv("TILEGEMM_GPU_TEST_LEVEL");
  return level && std::string(level) == "full";
}

// Every check draws fresh inputs from its own seed; the seed is printed so a failure can be replayed.
inline std::uint64_t next_seed() {
  static std::uint64_t base = [] {
    const char* s = std::getenv("TILEGEMM_TEST_SEED");
    return s ? std::strtoull(s, nullptr, 10) : 20251130ull;
  }();
  static std::uint64_t counter = 0;
  return base * 1000003ull + counter++;
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1], never zero (|x| >= 2^-7): a zero input could hide an unwritten or skipped tile.
inline float random_value(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t r = splitmix64(seed ^ splitmix64(index));
  float x = static_cast<float>(static_cast<double>(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  if (std::abs(x) < 0x1.0p-7f) x = std::copysign(0x1.0p-7f, x == 0 ? 1.0f : x);
  return x;
}

template <class F>
void parallel_for(std::int64_t count, F&& body) {
  const auto threads = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t chunk = std::max<std::int64_t>(1, (count + threads - 1) / threads);
  std::vector<std::jthread> pool;
  for (std::int64_t begin = 0; begin < count; begin += chunk)
    pool.emplace_back([&, begin] {
      for (std::int64_t i = begin; i < std::min(count, begin + chunk); ++i) body(i);
    });
}

// A row-major [batch, rows, cols] tensor (row stride `ld` >= cols, batch stride rows·ld) in device memory
// between two guard bands, with a host mirror of the whole allocation. Everything starts poisoned
// (all bits set: a NaN in bf16 and fp32); a kernel must overwrite exactly the elements it owns.
class GuardedTensor {
 public:
  // batch == 0 means a 2-D tensor.
  GuardedTensor(DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, std::int64_t ld = 0)
      : dtype_(dtype), batch_(batch), rows_(rows), cols_(cols), ld_(ld ? ld : cols) {
    elem_ = tilegemm::dtype_bits(dtype) / 8;
    // At least 8 rows of guard on each side so that a tile spilling past either end lands in it.
    guard_ = std::clamp<std::int64_t>(8 * ld_, 1024, 1 << 20);
    body_ = std::max<std::int64_t>(batch_, 1) * rows_ * ld_;
    host_.assign(static_cast<std::size_t>((body_ + 2 * guard_) * elem_), 0xFF);
    cuda_check(cudaMalloc(&device_, host_.size()), "cudaMalloc");
    upload();
  }
  ~GuardedTensor() { cudaFree(device_); }
  GuardedTensor(const GuardedTensor&) = delete;
  GuardedTensor& operator=(const GuardedTensor&) = delete;

  std::int64_t batch() const { return std::max<std::int64_t>(batch_, 1); }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  DType dtype() const { return dtype_; }

  TensorView device_view() const { return view_over(static_cast<char*>(device_) + guard_ * elem_); }
  TensorView host_view() const { return view_over(const_cast<std::uint8_t*>(host_.data()) + guard_ * elem_); }

  std::int64_t offset(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return guard_ + (b * rows_ + r) * ld_ + c;
  }
  double get(std::int64_t b, std::int64_t r, std::int64_t c) const {
    const std::int64_t o = offset(b, r, c);
    if (elem_ == 2) return tilegemm::bf16_to_float(load<std::uint16_t>(o));
    if (dtype_ == DType::kInt32) return load<std::int32_t>(o);
    if (dtype_ == DType::kInt8) return load<std::int8_t>(o);
    return load<float>(o);
  }
  void set(std::int64_t b, std::int64_t r, std::int64_t c, double value) {
    const std::int64_t o = offset(b, r, c);
    if (elem_ == 2) return store(o, tilegemm::float_to_bf16(static_cast<float>(value)));
    if (dtype_ == DType::kInt32) return store(o, static_cast<std::int32_t>(value));
    if (dtype_ == DType::kInt8) return store(o, static_cast<std::int8_t>(value));
    store(o, static_cast<float>(value));
  }
  // Raw 16-bit element bits (fp16 tensors, whose values get/set do not convert).
  void set_bits16(std::int64_t b, std::int64_t r, std::int64_t c, std::uint16_t bits) { store(offset(b, r, c), bits); }
  std::uint16_t bits16(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return load<std::uint16_t>(offset(b, r, c));
  }
  bool is_poison_at(std::int64_t raw_offset) const {
    for (int i = 0; i < elem_; ++i)
      if (host_[static_cast<std::size_t>(raw_offset * elem_ + i)] != 0xFF) return false;
    return true;
  }

  // Fresh random values in every element of the view (padding and guards stay poisoned); then upload.
  void fill_random(std::uint64_t seed) {
    parallel_for(batch() * rows_, [&](std::int64_t row) {
      for (std::int64_t c = 0; c < cols_; ++c)
        set(0, row, c, random_value(seed, static_cast<std::uint64_t>(row * cols_ + c)));
    });
    upload();
  }
  // Rows [r0, r1) of matrix b of the host mirror as a 2-D view (for per-group references).
  TensorView host_slice(std::int64_t b, std::int64_t r0, std::int64_t r1) const {
    auto* base = const_cast<std::uint8_t*>(host_.data()) + offset(b, r0, 0) * elem_;
    return TensorView::matrix(base, dtype_, r1 - r0, cols_, ld_);
  }
  std::vector<std::uint8_t> snapshot() const { return host_; }
  bool unchanged_since(const std::vector<std::uint8_t>& before) const { return host_ == before; }

  void upload() { cuda_check(cudaMemcpy(device_, host_.data(), host_.size(), cudaMemcpyHostToDevice), "upload"); }
  void download() { cuda_check(cudaMemcpy(host_.data(), device_, host_.size(), cudaMemcpyDeviceToHost), "download"); }

  // After download(): `unwritten` counts elements that should have been written but still hold the poison;
  // `stray` counts elements outside the rows that should be written (guards, row padding, rows the
  // predicate excludes) that are no longer poison.
  struct Coverage {
    std::int64_t unwritten = 0, stray_guard = 0, stray_padding = 0, stray_rows = 0;
    bool ok() const { return unwritten == 0 && stray_guard == 0 && stray_padding == 0 && stray_rows == 0; }
    std::string describe() const {
      return fmt::format(
          "unwritten {}, written guard elements {}, written row-padding elements {}, written "
          "excluded-row elements {}",
          unwritten, stray_guard, stray_padding, stray_rows);
    }
  };
  Coverage coverage(const std::function<bool(std::int64_t b, std::int64_t r)>& row_written) const {
    Coverage cov;
    const std::int64_t total = body_ + 2 * guard_;
    for (std::int64_t o = 0; o < total; ++o) {
      if (o < guard_ || o >= guard_ + body_) {
        cov.stray_guard += !is_poison_at(o);
        continue;
      }
      const std::int64_t inner = o - guard_, row = inner / ld_, col = inner % ld_;
      if (col >= cols_) {
        cov.stray_padding += !is_poison_at(o);
      } else if (row_written(row / rows_, row % rows_)) {
        cov.unwritten += is_poison_at(o);
      } else {
        cov.stray_rows += !is_poison_at(o);
      }
    }
    return cov;
  }

 private:
  TensorView view_over(void* data) const {
    return batch_ == 0 ? TensorView::matrix(data, dtype_, rows_, cols_, ld_)
                       : TensorView::batched(data, dtype_, batch_, rows_, cols_, rows_ * ld_, ld_);
  }
  template <class T>
  T load(std::int64_t o) const {
    T v;
    std::memcpy(&v, host_.data() + o * elem_, sizeof(T));
    return v;
  }
  template <class T>
  void store(std::int64_t o, T v) {
    std::memcpy(host_.data() + o * elem_, &v, sizeof(T));
  }

  DType dtype_;
  std::int64_t batch_, rows_, cols_, ld_;
  int elem_ = 0;
  std::int64_t guard_ = 0, body_ = 0;
  std::vector<std::uint8_t> host_;
  void* device_ = nullptr;
};

// A 1-D int32 device tensor (group indices, masked_m).
class DeviceInts {
 public:
  explicit DeviceInts(const std::vector<std::int32_t>& values) : size_(values.size()) {
    cuda_check(cudaMalloc(&device_, std::max<std::size_t>(1, size_) * 4), "cudaMalloc");
    cuda_check(cudaMemcpy(device_, values.data(), size_ * 4, cudaMemcpyHostToDevice), "upload ints");
  }
  ~DeviceInts() { cudaFree(device_); }
  DeviceInts(const DeviceInts&) = delete;
  DeviceInts& operator=(const DeviceInts&) = delete;
  TensorView view() const {
    TensorView v;
    v.data = device_, v.dtype = DType::kInt32, v.ndim = 1;
    v.shape = {static_cast<std::int64_t>(size_), 0, 0, 0};
    v.strides = {1, 0, 0, 0};
    return v;
  }

 private:
  std::size_t size_;
  void* device_ = nullptr;
};

enum class Layout { kNT, kNN, kTN, kTT };
constexpr Layout kAllLayouts[] = {Layout::kNT, Layout::kNN, Layout::kTN, Layout::kTT};
inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kNT:
      return "nt";
    case Layout::kNN:
      return "nn";
    case Layout::kTN:
      return "tn";
    case Layout::kTT:
      return "tt";
  }
  return "?";
}
inline bool a_mn_major(Layout l) {
  return l == Layout::kTN || l == Layout::kTT;
}
// DeepGEMM names: first letter a [M,K] (n) or [K,M] (t); second letter b [K,N] (n) or [N,K] (t).
inline bool b_mn_major(Layout l) {
  return l == Layout::kNN || l == Layout::kTN;
}

// How C enters: none, a separate tensor, or D itself (D += A·Bᵀ).
enum class CMode { kNone, kSeparate, kInPlace };
constexpr CMode kAllCModes[] = {CMode::kNone, CMode::kSeparate, CMode::kInPlace};
inline const char* c_mode_name(CMode c) {
  return c == CMode::kNone ? "none" : c == CMode::kSeparate ? "separate" : "in-place";
}

// Rows the reference checks: all, or kSampledRows spread at random (always the first and the last).
inline std::vector<std::int64_t> rows_to_check(std::int64_t m, double multiply_adds, std::uint64_t seed) {
  std::vector<std::int64_t> rows;
  if (multiply_adds <= kFullReferenceLimit || m <= kSampledRows) {
    rows.resize(static_cast<std::size_t>(m));
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> all(static_cast<std::size_t>(m));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin() + 1, all.end() - 1, rng);
  rows.assign(all.begin(), all.begin() + kSampledRows - 1);
  rows.push_back(m - 1);
  std::sort(rows.begin(), rows.end());
  return rows;
}

// A random M-grouped contiguous layout: sizes in [0, 2·mean_m], group 1 empty and group 0 not a multiple of the
// alignment; each group starts on an aligned row. row_group is the per-row index (-1 = padding), ends the
// prefix-sum layout (each group's end row).
struct ContiguousGroups {
  std::vector<std::int64_t> sizes, starts;
  std::int64_t m_total = 0;
  std::vector<std::int32_t> row_group, ends;
};

// Groups of the given sizes, each starting at a multiple of `alignment`, padding rows marked -1.
inline ContiguousGroups contiguous_groups_of(std::vector<std::int64_t> sizes, std::int64_t alignment) {
  ContiguousGroups g;
  const int groups = static_cast<int>(sizes.size());
  g.sizes = std::move(sizes);
  g.starts.resize(groups);
  for (int i = 0; i < groups; ++i)
    g.starts[i] = g.m_total, g.m_total += (g.sizes[i] + alignment - 1) / alignment * alignment;
  g.row_group.assign(static_cast<std::size_t>(g.m_total), -1);
  g.ends.resize(groups);
  for (int i = 0; i < groups; ++i) {
    for (std::int64_t r = 0; r < g.sizes[i]; ++r) g.row_group[g.starts[i] + r] = i;
    g.ends[i] = static_cast<std::int32_t>(g.starts[i] + g.sizes[i]);
  }
  return g;
}

inline ContiguousGroups random_contiguous_groups(int groups, int mean_m, std::int64_t alignment, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> size_dist(0, 2 * mean_m);
  std::vector<std::int64_t> sizes(groups);
  for (auto& s : sizes) s = size_dist(rng);
  if (groups > 1) sizes[1] = 0;
  if (sizes[0] % alignment == 0) sizes[0] += 1;
  return contiguous_groups_of(std::move(sizes), alignment);
}

// The case line every GPU test prints: shape | layout | dtype | calc_diff | ok.
inline void report(const std::string& op, const std::string& shape, const std::string& layout, const std::string& dtype,
                   const std::string& check, bool ok) {
  std::printf("[%s] %s | %s | %s | %s | %s\n", op.c_str(), shape.c_str(), layout.c_str(), dtype.c_str(), check.c_str(),
              ok ? "ok" : "FAIL");
  std::fflush(stdout);
}

}  // namespace gpu_test
