#pragma once
// Shared by the JIT tests: a fresh cache directory per test, every DG_* variable cleared, restored after.
// scripts/sass-compare runs the codegen tests with two test-only variables: TILEGEMM_TEST_DEVICE_INCLUDE_DIR
// (compile against another tree's device headers) and TILEGEMM_TEST_KEEP_KERNELS (a directory each test's
// compiled cache entries are copied into before its cache is removed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "tilegemm/env.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::testing {

inline const char* const kJitVariables[] = {"DG_JIT_CACHE_DIR",
                                            "DG_JIT_USE_NVRTC",
                                            "DG_JIT_NVCC_COMPILER",
                                            "DG_JIT_DEBUG",
                                            "DG_PRINT_CONFIGS",
                                            "DG_JIT_PRINT_COMPILER_COMMAND",
                                            "DG_JIT_PTXAS_VERBOSE",
                                            "DG_JIT_PTXAS_CHECK",
                                            "DG_JIT_WITH_LINEINFO",
                                            "DG_JIT_DUMP_PTX",
                                            "DG_JIT_DUMP_SASS",
                                            "DG_JIT_DISABLE",
                                            "TILEGEMM_DEVICE_INCLUDE_DIR",
                                            "TILEGEMM_CUDA_INCLUDE_DIR",
                                            "XDG_CACHE_HOME"};

// A file's whole contents ("" when it cannot be read): cache entries' sources, metadata and PTX dumps.
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class JitEnvFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kJitVariables) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      ::unsetenv(name);
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("tilegemm-test-{}-{}-{}", info->name(), ::getpid(), counter()++);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    set("DG_JIT_CACHE_DIR", (dir_ / "cache").string());
    if (const char* headers = std::getenv("TILEGEMM_TEST_DEVICE_INCLUDE_DIR"))
      set("TILEGEMM_DEVICE_INCLUDE_DIR", headers);
  }
  void TearDown() override {
    keep_kernels();
    for (const char* name : kJitVariables) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
    reload_env();
    jit::clear_memory_cache();
    std::error_code ec;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(dir_, ec);
  }
  // Sets a variable and re-reads the environment, as a fresh process would.
  void set(const std::string& name, const std::string& value) {
    ::setenv(name.c_str(), value.c_str(), 1);
    reload_env();
  }
  void unset(const std::string& name) {
    ::unsetenv(name.c_str());
    reload_env();
  }
  std::filesystem::path cache_dir() const { return dir_ / "cache"; }
  std::size_t entries() const { return jit::cache_info().entries; }
  // A spec no other test (or earlier run) has compiled.
  jit::KernelSpec fresh_spec(const std::string& tag, std::size_t which = 0) const {
    return jit::test_kernel_specs(fmt::format("{}-{}", tag, dir_.filename().string()))[which];
  }

  std::filesystem::path dir_;

 private:
  void keep_kernels() const {
    const char* keep = std::getenv("TILEGEMM_TEST_KEEP_KERNELS");
    std::error_code ec;
    if (keep == nullptr || !std::filesystem::is_directory(cache_dir() / "kernels", ec)) return;
    for (const auto& entry : std::filesystem::directory_iterator(cache_dir() / "kernels", ec))
      std::filesystem::copy(entry.path(), std::filesystem::path(keep) / entry.path().filename(),
                            std::filesystem::copy_options::recursive | std::filesystem::copy_options::skip_existing,
                            ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::map<std::string, std::string> saved_;
};

// A generated kernel defines the entry point its spec names and compiles (with DG_JIT_PTXAS_CHECK set by the test:
// without spills) into a cubin of more than `min_cubin_bytes`.
inline void expect_kernel_compiles(const jit::KernelSpec& spec, std::size_t min_cubin_bytes = 1000) {
  EXPECT_NE(spec.source.find("\n" + spec.entry + "("), std::string::npos) << spec.source;
  std::shared_ptr<const jit::CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
  EXPECT_GT(kernel->cubin().size(), min_cubin_bytes);
}

}  // namespace tilegemm::testing
