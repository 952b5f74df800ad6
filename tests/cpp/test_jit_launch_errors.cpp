// Launch-side contracts that hold on any machine: bad launch configs name the field, and without a GPU the
// error comes at the first launch (never at compile time) and names the kernel.
#include <gtest/gtest.h>

#include "jit/loaded_kernel.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm::jit {
namespace {

using JitLaunchErrors = testing::JitEnvFixture;

std::string argument_of(const LaunchConfig& c) {
  try {
    validate_launch_config(c);
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "";
}

TEST_F(JitLaunchErrors, InvalidConfigsNameTheField) {
  LaunchConfig ok;
  ok.grid[0] = 4;
  ok.block[0] = 128;
  ok.cluster[0] = 2;
  EXPECT_EQ(argument_of(ok), "");
  LaunchConfig c = ok;
  c.grid[1] = 0;
  EXPECT_EQ(argument_of(c), "launch.grid.y");
  c = ok;
  c.block[2] = 0;
  EXPECT_EQ(argument_of(c), "launch.block.z");
  c = ok;
  c.cluster[0] = 0;
  EXPECT_EQ(argument_of(c), "launch.cluster.x");
  c = ok;
  c.grid[0] = 3;  // not a multiple of the cluster
  EXPECT_EQ(argument_of(c), "launch.grid.x");
}

TEST_F(JitLaunchErrors, NoGpuFailsAtLaunchNamingTheKernel) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; tests/gpu/test_jit_launch.cpp covers real launches";
  const KernelSpec spec = fresh_spec("nogpu");
  std::shared_ptr<const CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = get_kernel(spec)) << "compiling needs no GPU";
  LaunchConfig config;
  config.grid[0] = 1;
  config.block[0] = 32;
  float alpha = 1;
  void* x = nullptr;
  void* y = nullptr;
  int n = 0;
  void* args[] = {&alpha, &x, &y, &n};
  try {
    kernel->launch(config, args);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(spec.name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot launch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilegemm::jit
