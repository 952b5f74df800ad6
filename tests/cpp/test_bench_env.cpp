// Environment capture pieces that need no GPU: nvidia-smi parsing, git commit, UTC date.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

TEST(BenchEnv, ParsesNvidiaSmiWithUnits) {
  const GpuClocks c = parse_nvidia_smi_clocks("1980 MHz, 3201 MHz, 1980 MHz, 120.50 W, 35\n");
  ASSERT_TRUE(c.available);
  EXPECT_DOUBLE_EQ(c.sm_mhz, 1980);
  EXPECT_DOUBLE_EQ(c.mem_mhz, 3201);
  EXPECT_DOUBLE_EQ(c.max_sm_mhz, 1980);
  EXPECT_DOUBLE_EQ(c.power_w, 120.5);
  EXPECT_DOUBLE_EQ(c.temperature_c, 35);
}

TEST(BenchEnv, ParsesNvidiaSmiWithoutUnitsAndTakesTheFirstGpu) {
  const GpuClocks c = parse_nvidia_smi_clocks("1755, 2619, 1980, 650.25, 61\n345, 2619, 1980, 70.00, 30\n");
  ASSERT_TRUE(c.available);
  EXPECT_DOUBLE_EQ(c.sm_mhz, 1755);
  EXPECT_DOUBLE_EQ(c.power_w, 650.25);
}

TEST(BenchEnv, UnavailableFieldsOrGarbageAreNotNumbers) {
  EXPECT_FALSE(parse_nvidia_smi_clocks("1980 MHz, 3201 MHz, 1980 MHz, [N/A], 35").available);
  EXPECT_FALSE(parse_nvidia_smi_clocks("").available);
  EXPECT_FALSE(parse_nvidia_smi_clocks("NVIDIA-SMI has failed because it couldn't communicate").available);
  EXPECT_FALSE(parse_nvidia_smi_clocks("1980, 3201, 1980, 120").available);
}

TEST(BenchEnv, QueryNeverThrowsWithoutAGpu) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(query_gpu_clocks("").available);
}

TEST(BenchEnv, GitCommitOfTheSourceTreeAndUnknownElsewhere) {
  const std::string commit = git_commit_of(TILEGEMM_SOURCE_DIR);
  if (commit == "unknown") GTEST_SKIP() << "no git or not a checkout";
  EXPECT_TRUE(std::regex_match(commit, std::regex("[0-9a-f]{7,40}(-dirty)?"))) << commit;
  EXPECT_EQ(git_commit_of("/nonexistent/tilegemm"), "unknown");
}

TEST(BenchEnv, CommitFromTheEnvironmentWinsForTreesWithoutGit) {
  const char* saved = std::getenv("TILEGEMM_COMMIT");
  const std::string restore = saved ? saved : "";
  setenv("TILEGEMM_COMMIT", " 1a2b3c4-dirty\n", 1);
  EXPECT_EQ(report_commit("/nonexistent/tilegemm"), "1a2b3c4-dirty");
  unsetenv("TILEGEMM_COMMIT");
  EXPECT_EQ(report_commit("/nonexistent/tilegemm"), "unknown");
  if (saved) setenv("TILEGEMM_COMMIT", restore.c_str(), 1);
}

TEST(BenchEnv, DateIsIso8601Utc) {
  EXPECT_TRUE(std::regex_match(utc_now_iso8601(), std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
}

TEST(BenchEnv, CaptureWithoutAGpuIsARuntimeError) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(capture_environment(0, BenchOptions{}, 0), RuntimeError);
}
