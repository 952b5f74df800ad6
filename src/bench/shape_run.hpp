#pragma once
// One shape's prepared operands and the calls run_suite() compares and times. Internal to src/bench: the
// bf16 and fp8 preparations (bf16_runs.cpp, fp8_runs.cpp) fill it, suite_runner.cpp measures it.
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/bench.hpp"
#include "tilegemm/tensor_view.hpp"
#include "timer/device_buffer.hpp"

namespace tilegemm::bench_detail {

struct ShapeRun {
  // Device memory the calls read and write; DeviceBuffers keep their pointer when moved, so the lambdas
  // below may capture raw pointers into them.
  std::vector<DeviceBuffer> buffers;
  DeviceBuffer d_ours, d_cublas;  // both D in the same layout: compared with calc_diff after the first calls
  DType d_dtype = DType::kBFloat16;
  const void* b_data = nullptr;  // B of every group, contiguous: what SuiteOptions::time_b_read reads
  std::size_t b_bytes = 0;

  std::function<void(cudaStream_t)> ours;
  std::function<void(cudaStream_t)> cublas;             // the baseline (the ratio's denominator)
  std::function<void(cudaStream_t)> cublas_per_tensor;  // fp8 only: an extra reference column; else empty
  std::string cublas_method;

  // Fills the row's config / config_full / variant with our kernel's choice; may throw (then the row gets
  // the error and our kernel is not run). Empty when there is nothing to describe.
  std::function<void(BenchRow&)> describe_ours;
};

// Allocates and fills the operands of `shape` (seeded, never-zero random data) and builds the calls.
// `hw` is the device's model (our kernel's config choice).
ShapeRun prepare_bf16_run(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                          std::uint64_t seed);
ShapeRun prepare_fp8_run(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                         std::uint64_t seed);
// Weight-only (options.weight): wq_gemm_nt against cuBLASLt bf16 on the dequantised weight (wq_runs.cpp).
ShapeRun prepare_wq_run(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                        std::uint64_t seed);

// Byte offset into device memory.
inline void* byte_offset(void* base, std::size_t bytes) {
  return static_cast<char*>(base) + bytes;
}

// A 1-D int32 view (group indices, masked_m).
TensorView int32_vector(void* data, std::int64_t size);
// Uploads host data into a fresh device buffer.
DeviceBuffer upload(const void* host, std::size_t bytes, const char* what);

}  // namespace tilegemm::bench_detail
