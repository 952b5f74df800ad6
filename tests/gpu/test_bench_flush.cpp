// Both L2 flushes of the benchmark harness on a GPU: the read-only pass (`--flush read`) leaves the buffer it
// reads untouched, and bench() measures with either flush.
#include <vector>

#include "bench/bench.hpp"
#include "gpu_harness.hpp"
#include "timer/read_flush.hpp"

namespace gpu_test {
namespace {

TEST(BenchFlushGpu, ReadFlushWritesNothing) {
  GPU_TEST_REQUIRE_GPU();
  constexpr std::size_t kBytes = 64u << 20;
  void* buffer = nullptr;
  cuda_check(cudaMalloc(&buffer, kBytes), "cudaMalloc");
  cuda_check(cudaMemset(buffer, 0x5A, kBytes), "cudaMemset");
  int device = 0, num_sms = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  tilegemm::bench_detail::read_flush(buffer, kBytes, num_sms, nullptr);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the read flush");
  std::vector<unsigned char> host(kBytes);
  cuda_check(cudaMemcpy(host.data(), buffer, kBytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaFree(buffer), "cudaFree");
  std::size_t changed = 0;
  for (unsigned char b : host) changed += b != 0x5A;
  EXPECT_EQ(changed, 0u);
}

TEST(BenchFlushGpu, BenchMeasuresWithEitherFlush) {
  GPU_TEST_REQUIRE_GPU();
  void* target = nullptr;
  cuda_check(cudaMalloc(&target, 32u << 20), "cudaMalloc");
  const auto fill = [&](cudaStream_t stream) { cudaMemsetAsync(target, 1, 32u << 20, stream); };
  for (tilegemm::FlushMode mode : {tilegemm::FlushMode::kZero, tilegemm::FlushMode::kRead}) {
    SCOPED_TRACE(std::string(tilegemm::flush_mode_name(mode)));
    tilegemm::BenchOptions options;
    options.flush = mode;
    options.warmup_ms = 1;
    options.rep_ms = 5;
    const tilegemm::BenchResult r = tilegemm::bench(fill, options);
    EXPECT_GT(r.stats.samples, 0);
    EXPECT_GT(r.stats.median_us, 0.0);
    EXPECT_GE(r.flush_bytes, 256LL << 20);
  }
  cuda_check(cudaFree(target), "cudaFree");
}

}  // namespace
}  // namespace gpu_test
