// The kernel timer on a GPU: a kernel that spins for a known time measures at least that long and less than the
// same call under events (which add the launch gap); a call of two kernels measures their sum; a call that
// launches no kernel is an error, not a zero.
#include <string>

#include "bench/bench.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/jit.hpp"

namespace gpu_test {
namespace {

// Spins until `ns` nanoseconds of the GPU's global timer have passed since the kernel's first read.
std::shared_ptr<const tilegemm::jit::CompiledKernel> spin_kernel() {
  tilegemm::jit::KernelSpec spec;
  spec.name = "test_kernel_timer_spin";
  spec.source = R"(
extern "C" __global__ void tilegemm_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
)";
  return tilegemm::jit::get_kernel(spec);
}

void launch_spin(const tilegemm::jit::CompiledKernel& kernel, unsigned long long ns, cudaStream_t stream) {
  void* args[] = {&ns};
  tilegemm::jit::LaunchConfig launch;
  launch.stream = stream;
  kernel.launch(launch, args);
}

tilegemm::BenchOptions short_run(tilegemm::TimerBackend timer) {
  tilegemm::BenchOptions options;
  options.timer = timer;
  options.warmup_ms = 1;
  options.rep_ms = 20;
  return options;
}

TEST(BenchKernelTimerGpu, ASpinKernelMeasuresItsSpinAndLessThanUnderEvents) {
  GPU_TEST_REQUIRE_GPU();
  const auto kernel = spin_kernel();
  const auto spin = [&](cudaStream_t stream) { launch_spin(*kernel, 50'000, stream); };
  const tilegemm::BenchResult by_kernel = tilegemm::bench(spin, short_run(tilegemm::TimerBackend::kKernel));
  const tilegemm::BenchResult by_events = tilegemm::bench(spin, short_run(tilegemm::TimerBackend::kCudaEvents));
  std::printf("spin 50 us: kernel timer %.2f us (%d samples), events %.2f us\n", by_kernel.stats.median_us,
              by_kernel.stats.samples, by_events.stats.median_us);
  EXPECT_EQ(by_kernel.stats.samples, by_kernel.iterations.rep);
  EXPECT_GE(by_kernel.stats.min_us, 50.0);
  EXPECT_LT(by_kernel.stats.median_us, 60.0);
  EXPECT_LT(by_kernel.stats.median_us, by_events.stats.median_us);
}

TEST(BenchKernelTimerGpu, ACallOfTwoKernelsMeasuresTheirSum) {
  GPU_TEST_REQUIRE_GPU();
  const auto kernel = spin_kernel();
  const auto two = [&](cudaStream_t stream) {
    launch_spin(*kernel, 20'000, stream);
    launch_spin(*kernel, 30'000, stream);
  };
  const tilegemm::BenchResult r = tilegemm::bench(two, short_run(tilegemm::TimerBackend::kKernel));
  EXPECT_GE(r.stats.min_us, 50.0);
  EXPECT_LT(r.stats.median_us, 60.0);
}

TEST(BenchKernelTimerGpu, ACallWithoutAKernelIsAnError) {
  GPU_TEST_REQUIRE_GPU();
  void* target = nullptr;
  cuda_check(cudaMalloc(&target, 1 << 20), "cudaMalloc");
  const auto memset_only = [&](cudaStream_t stream) { cudaMemsetAsync(target, 1, 1 << 20, stream); };
  try {
    tilegemm::bench(memset_only, short_run(tilegemm::TimerBackend::kKernel));
    ADD_FAILURE() << "expected RuntimeError";
  } catch (const tilegemm::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("saw no kernel"), std::string::npos) << e.what();
  }
  cuda_check(cudaFree(target), "cudaFree");
}

TEST(BenchKernelTimerGpu, ASuiteUnderTheKernelTimerTimesOursCublasAndTheReadOfB) {
  GPU_TEST_REQUIRE_GPU();
  tilegemm::SuiteOptions options;
  options.suite_name = "custom";
  options.shapes = {{tilegemm::GemmType::kNormal, 1, 64, 2112, 7168}};
  options.timing = short_run(tilegemm::TimerBackend::kKernel);
  options.time_b_read = true;
  const tilegemm::BenchReport report = tilegemm::run_suite(options);
  EXPECT_EQ(report.env.timer, "cupti-kernel");
  ASSERT_EQ(report.rows.size(), 1u);
  const tilegemm::BenchRow& row = report.rows[0];
  EXPECT_EQ(row.error, "");
  EXPECT_GT(row.ours.samples, 0);
  EXPECT_GT(row.cublas.samples, 0);
  EXPECT_GT(row.b_read.samples, 0);
  EXPECT_GT(row.b_read.median_us, 0.0);
  std::printf("64x2112x7168 bf16, kernel timer: ours %.2f us, cuBLAS %.2f us, read B %.2f us\n", row.ours.median_us,
              row.cublas.median_us, row.b_read.median_us);
}

}  // namespace
}  // namespace gpu_test
