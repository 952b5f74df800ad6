#pragma once
// RAII device memory and CUDA error checks for the harness. Internal to src/bench.
#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::bench_detail {

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw RuntimeError(fmt::format("{} failed: {} ({})", what, cudaGetErrorString(status), static_cast<int>(status)));
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) cuda_check(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({} bytes)", bytes).c_str());
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A pair of events per timed call; destroyed together.
class EventPool {
 public:
  explicit EventPool(std::size_t count) : events_(count, nullptr) {
    for (auto& e : events_) cuda_check(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~EventPool() {
    for (auto e : events_)
      if (e) cudaEventDestroy(e);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace tilegemm::bench_detail
