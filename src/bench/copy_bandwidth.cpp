// The copy-bandwidth ceiling recorded in reports: the best of a few device-to-device copies of a buffer
// far larger than L2, counted as read + write bytes (how the anchors' 4272 GB/s on the H200 was measured).
// It is the bandwidth a memory-bound kernel can actually reach, below the datasheet HBM number.
#include <algorithm>

#include "bench/bench.hpp"
#include "tilegemm/hw.hpp"
#include "timer/device_buffer.hpp"

namespace tilegemm {

using bench_detail::cuda_check;
using bench_detail::DeviceBuffer;
using bench_detail::EventPool;

double measure_copy_gbps(int device) {
  if (!gpu_available()) throw RuntimeError("no CUDA GPU found: measure_copy_gbps needs an NVIDIA GPU");
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  constexpr std::size_t kBytes = 512u << 20;  // several times any L2 so far (H200: 60 MiB)
  constexpr int kCopies = 10;
  DeviceBuffer src(kBytes), dst(kBytes);
  cuda_check(cudaMemset(src.get(), 1, kBytes), "cudaMemset(copy source)");
  cuda_check(cudaMemcpy(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice), "cudaMemcpy(warm-up)");
  EventPool ev(2 * kCopies);
  for (int i = 0; i < kCopies; ++i) {
    cuda_check(cudaEventRecord(ev[2 * i], nullptr), "cudaEventRecord");
    cuda_check(cudaMemcpyAsync(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice, nullptr),
               "cudaMemcpyAsync(device to device)");
    cuda_check(cudaEventRecord(ev[2 * i + 1], nullptr), "cudaEventRecord");
  }
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(copies)");
  double best_ms = 0;
  for (int i = 0; i < kCopies; ++i) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    if (ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  return best_ms > 0 ? 2.0 * kBytes / (best_ms * 1e-3) * 1e-9 : 0;
}

}  // namespace tilegemm
