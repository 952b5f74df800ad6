// The kernel timer's CPU side (`--timer kernel`): its names parse, CUPTI is looked for where the docs say, a
// missing library is a clear error that names the variable and every path tried, and the toolkit's libcupti
// exports every function the timer calls. Timing itself is checked on the GPU (tests/gpu/test_bench_kernel_timer).
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/bench.hpp"
#include "scoped_env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"
#include "timer/cupti_api.hpp"

using namespace tilegemm;

namespace {

TEST(BenchKernelTimer, NamesParseBothWays) {
  EXPECT_EQ(parse_timer_backend("cupti-kernel"), TimerBackend::kKernel);
  EXPECT_EQ(parse_timer_backend("kernel"), TimerBackend::kKernel);
  EXPECT_EQ(timer_backend_name(TimerBackend::kKernel), "cupti-kernel");
  EXPECT_EQ(flush_policy(TimerBackend::kKernel, 256LL << 20), "256 MiB zeroed before each timed call");
}

TEST(BenchKernelTimer, CandidatesAreTheVariableAloneOrTheLoaderPathThenTheToolkit) {
  {
    test_util::ScopedEnv chosen("TILEGEMM_CUPTI_LIBRARY", "/opt/cupti/libcupti.so.13");
    EXPECT_EQ(bench_detail::cupti_library_candidates(), std::vector<std::string>{"/opt/cupti/libcupti.so.13"});
  }
  test_util::ScopedEnv unset("TILEGEMM_CUPTI_LIBRARY", nullptr);
  const std::vector<std::string> candidates = bench_detail::cupti_library_candidates();
  ASSERT_GE(candidates.size(), 4u);
  EXPECT_EQ(candidates[0], "libcupti.so.13");
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), std::string(TILEGEMM_CUDA_LIBRARY_DIR) + "/libcupti.so"),
            candidates.end());
}

#if TILEGEMM_HAVE_CUPTI_HEADERS
TEST(BenchKernelTimer, AMissingLibraryNamesTheVariableAndEveryPathTried) {
  try {
    bench_detail::load_cupti({"/nonexistent/libcupti.so.13", "/nonexistent/other/libcupti.so"});
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("TILEGEMM_CUPTI_LIBRARY"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libcupti.so.13"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/other/libcupti.so"), std::string::npos) << what;
  }
}

TEST(BenchKernelTimer, TheToolkitsLibraryExportsEveryFunctionTheTimerCalls) {
  const std::string path = std::string(TILEGEMM_CUDA_LIBRARY_DIR) + "/libcupti.so";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not installed on this machine";
  bench_detail::CuptiApi api;
  ASSERT_NO_THROW(api = bench_detail::load_cupti({path}));  // throws naming a missing symbol
  EXPECT_EQ(api.path, path);
  const char* message = nullptr;
  EXPECT_EQ(api.get_result_string(CUPTI_ERROR_INVALID_PARAMETER, &message), CUPTI_SUCCESS);
  ASSERT_NE(message, nullptr);
  EXPECT_GT(std::string(message).size(), 0u);
}
#endif

TEST(BenchKernelTimer, WithoutAGpuBenchThrowsRuntimeError) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  BenchOptions options;
  options.timer = TimerBackend::kKernel;
  EXPECT_THROW(bench([](cudaStream_t) {}, options), RuntimeError);
}

}  // namespace
