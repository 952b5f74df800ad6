// The environment variables of SPEC.md, read in one place.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_jit_support.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {
namespace {

using EnvTest = testing::JitEnvFixture;

TEST_F(EnvTest, DefaultsWhenNothingIsSet) {
  unset("DG_JIT_CACHE_DIR");
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  ::setenv("HOME", "/home/someone", 1);
  const Env e = read_env_from_process();
  if (home)
    ::setenv("HOME", saved_home.c_str(), 1);
  else
    ::unsetenv("HOME");
  EXPECT_EQ(e.jit_cache_dir, "/home/someone/.cache/tilegemm");
  EXPECT_TRUE(e.jit_use_nvrtc);
  EXPECT_EQ(e.jit_nvcc_compiler, std::string(TILEGEMM_CUDA_BIN_DIR) + "/nvcc");
  EXPECT_FALSE(e.jit_debug || e.print_configs || e.jit_print_compiler_command || e.jit_ptxas_verbose ||
               e.jit_ptxas_check || e.jit_with_lineinfo || e.jit_dump_ptx || e.jit_dump_sass || e.jit_disable);
  EXPECT_EQ(e.device_include_dir, TILEGEMM_DEVICE_INCLUDE_DIR);
}

TEST_F(EnvTest, XdgCacheHomeBeatsHome) {
  unset("DG_JIT_CACHE_DIR");
  set("XDG_CACHE_HOME", "/var/cache/me");
  EXPECT_EQ(env().jit_cache_dir, "/var/cache/me/tilegemm");
}

TEST_F(EnvTest, ReadsEveryVariable) {
  set("DG_JIT_CACHE_DIR", "/somewhere");
  set("DG_JIT_USE_NVRTC", "0");
  set("DG_JIT_NVCC_COMPILER", "/opt/cuda/bin/nvcc");
  for (const char* name :
       {"DG_JIT_DEBUG", "DG_PRINT_CONFIGS", "DG_JIT_PRINT_COMPILER_COMMAND", "DG_JIT_PTXAS_VERBOSE",
        "DG_JIT_PTXAS_CHECK", "DG_JIT_WITH_LINEINFO", "DG_JIT_DUMP_PTX", "DG_JIT_DUMP_SASS", "DG_JIT_DISABLE"})
    ::setenv(name, "yes", 1);
  set("TILEGEMM_DEVICE_INCLUDE_DIR", "/installed/device");
  const Env& e = env();
  EXPECT_EQ(e.jit_cache_dir, "/somewhere");
  EXPECT_FALSE(e.jit_use_nvrtc);
  EXPECT_EQ(e.jit_nvcc_compiler, "/opt/cuda/bin/nvcc");
  EXPECT_TRUE(e.jit_debug && e.print_configs && e.jit_print_compiler_command && e.jit_ptxas_verbose &&
              e.jit_ptxas_check && e.jit_with_lineinfo && e.jit_dump_ptx && e.jit_dump_sass && e.jit_disable);
  EXPECT_EQ(e.device_include_dir, "/installed/device");
}

TEST_F(EnvTest, MalformedBooleanNamesTheVariableAndValue) {
  ::setenv("DG_JIT_DISABLE", "maybe", 1);
  try {
    read_env_from_process();
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "DG_JIT_DISABLE");
    EXPECT_NE(std::string(e.what()).find("'maybe'"), std::string::npos) << e.what();
  }
}

TEST_F(EnvTest, WavesPerLaunchIsANonNegativeInteger) {
  set("TILEGEMM_WAVES_PER_LAUNCH", "12");
  EXPECT_EQ(env().waves_per_launch, 12);
  for (const char* bad : {"-1", "8x", "two"}) {
    ::setenv("TILEGEMM_WAVES_PER_LAUNCH", bad, 1);
    try {
      read_env_from_process();
      FAIL() << "expected InvalidArgument for '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "TILEGEMM_WAVES_PER_LAUNCH");
    }
  }
  ::unsetenv("TILEGEMM_WAVES_PER_LAUNCH");
}

TEST_F(EnvTest, CtasPerSmIsOneToFour) {
  EXPECT_EQ(env().tune_ctas_per_sm, 1);
  set("TILEGEMM_CTAS_PER_SM", "2");
  EXPECT_EQ(env().tune_ctas_per_sm, 2);
  for (const char* bad : {"0", "5", "2x", "two"}) {
    ::setenv("TILEGEMM_CTAS_PER_SM", bad, 1);
    try {
      read_env_from_process();
      FAIL() << "expected InvalidArgument for '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "TILEGEMM_CTAS_PER_SM");
    }
  }
  ::unsetenv("TILEGEMM_CTAS_PER_SM");
  reload_env();
}

TEST_F(EnvTest, ReloadBumpsTheGeneration) {
  const unsigned before = env().generation;
  reload_env();
  EXPECT_EQ(env().generation, before + 1);
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

TEST(DeviceIncludeDir, SourceTreeFirstThenTheInstalledHeaders) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / ("tilegemm_device_dirs_" + std::to_string(::getpid()));
  const fs::path source = root / "src" / "device", installed = root / "prefix" / "include";
  fs::create_directories(installed / "tilegemm" / "prim");
  // A build tree whose sources are gone (an installed library): the installed headers.
  EXPECT_EQ(default_device_include_dir(source.string(), installed.string()), installed.string());
  fs::create_directories(source / "tilegemm" / "prim");
  EXPECT_EQ(default_device_include_dir(source.string(), installed.string()), source.string());
  // Neither holds the headers: the source path, which the JIT's error then names.
  fs::remove_all(root);
  EXPECT_EQ(default_device_include_dir(source.string(), installed.string()), source.string());
}

}  // namespace
}  // namespace tilegemm
