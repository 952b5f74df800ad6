// The JIT runtime on a machine without a GPU: compile (NVRTC and NVCC), memory and disk caches, cache keys,
// corruption, racing processes, unwritable directories, compiler errors and DG_JIT_* switches.
// Compiles are counted (runtime_stats), never timed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "jit/cache_key.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/errors.hpp"

extern char** environ;

namespace tilegemm::jit {
namespace {
namespace fs = std::filesystem;

using JitCache = testing::JitEnvFixture;

using testing::read_text;

bool is_elf(const std::vector<char>& bytes) {
  return bytes.size() > 4 && std::string(bytes.data(), 4) ==
                                 "\x7f"
                                 "ELF";
}

std::size_t files_under(const fs::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it) ++n;
  return n;
}

TEST_F(JitCache, NvrtcCompilesOnceThenHitsMemory) {
  const KernelSpec spec = fresh_spec("nvrtc");
  const RuntimeStats before = runtime_stats();
  auto first = get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1);
  EXPECT_TRUE(is_elf(first->cubin()));
  EXPECT_TRUE(fs::exists(first->cubin_path())) << first->cubin_path();
  EXPECT_EQ(entries(), 1u);

  auto second = get_kernel(spec);
  EXPECT_EQ(second.get(), first.get());
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1);
  EXPECT_EQ(runtime_stats().memory_hits, before.memory_hits + 1);
}

TEST_F(JitCache, FreshProcessFindsTheKernelOnDisk) {
  const KernelSpec spec = fresh_spec("disk");
  get_kernel(spec);
  clear_memory_cache();  // what a new process starts with
  const RuntimeStats before = runtime_stats();
  auto again = get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles);
  EXPECT_EQ(runtime_stats().disk_hits, before.disk_hits + 1);
  EXPECT_TRUE(is_elf(again->cubin()));
}

TEST_F(JitCache, SeparateCliProcessesCompileThenReuse) {
  const std::string salt = dir_.filename().string();
  const std::vector<std::string> argv = {TILEGEMM_CLI_PATH, "jit", "precompile", "--test-kernels", "--salt", salt};
  ProcessResult first = run_process(argv, (dir_ / "first.log").string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("3 compiled, 0 already cached"), std::string::npos) << first.output;
  ProcessResult second = run_process(argv, (dir_ / "second.log").string());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("0 compiled, 3 already cached"), std::string::npos) << second.output;
  EXPECT_EQ(entries(), 3u);
}

TEST_F(JitCache, NvccCompilesAndIsADifferentEntry) {
  const KernelSpec spec = fresh_spec("nvcc");
  get_kernel(spec);
  set("DG_JIT_USE_NVRTC", "0");
  const RuntimeStats before = runtime_stats();
  auto kernel = get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1);
  EXPECT_TRUE(is_elf(kernel->cubin()));
  EXPECT_EQ(entries(), 2u) << "the compiler is part of the key";
  clear_memory_cache();
  get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1) << "NVCC's artifact is found on disk";
}

TEST_F(JitCache, MissingNvccIsAClearError) {
  set("DG_JIT_USE_NVRTC", "0");
  set("DG_JIT_NVCC_COMPILER", (dir_ / "no-such-nvcc").string());
  try {
    get_kernel(fresh_spec("nonvcc"));
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("DG_JIT_NVCC_COMPILER"), std::string::npos) << e.what();
  }
}

// A "compiler" that exits 0 and writes nothing (the issue's DG_JIT_NVCC_COMPILER=/bin/true) was a compile
// failure with an empty log: it must name DG_JIT_NVCC_COMPILER and the cubin it did not write, in the library's
// CompileError and on jit precompile's one line per kernel.
TEST_F(JitCache, AnNvccThatWritesNoCubinIsAFailureNamingIt) {
  if (!fs::exists("/bin/true")) GTEST_SKIP() << "no /bin/true";
  set("DG_JIT_USE_NVRTC", "0");
  set("DG_JIT_NVCC_COMPILER", "/bin/true");
  try {
    get_kernel(fresh_spec("true-nvcc"));
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("DG_JIT_NVCC_COMPILER '/bin/true' exited with status 0 but wrote no cubin at '"),
              std::string::npos)
        << e.log();
    EXPECT_NE(e.log().find("nvcc.cubin' (-o)"), std::string::npos) << e.log();
  }
  const std::string salt = "true-nvcc-cli-" + dir_.filename().string();
  const ProcessResult r =
      run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--test-kernels", "--salt", salt, "-j", "1"},
                  (dir_ / "true-nvcc.log").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("failed to compile: DG_JIT_NVCC_COMPILER '/bin/true' exited with status 0 but wrote no "
                          "cubin at '"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("0 compiled, 0 already cached, 3 failed"), std::string::npos) << r.output;
  EXPECT_EQ(entries(), 0u);
}

TEST_F(JitCache, EditingAnIncludedHeaderChangesTheKey) {
  const fs::path device = dir_ / "device";
  fs::copy(TILEGEMM_DEVICE_INCLUDE_DIR, device, fs::copy_options::recursive);
  set("TILEGEMM_DEVICE_INCLUDE_DIR", device.string());
  const KernelSpec spec = fresh_spec("header");
  get_kernel(spec);
  const RuntimeStats before = runtime_stats();
  std::ofstream(device / "tilegemm" / "shared_enums.hpp", std::ios::app) << "\n// edited\n";
  reload_env();  // a new process would see the edit
  get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1);
  EXPECT_EQ(entries(), 2u);
}

TEST_F(JitCache, ChangingAFlagChangesTheKey) {
  KernelSpec spec = fresh_spec("flag");
  get_kernel(spec);
  const RuntimeStats before = runtime_stats();
  spec.options.push_back("-DTILEGEMM_TEST_FLAG=1");
  get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 1);
  set("DG_JIT_WITH_LINEINFO", "1");  // an environment-driven flag too
  get_kernel(spec);
  EXPECT_EQ(runtime_stats().compiles, before.compiles + 2);
  EXPECT_EQ(entries(), 3u);
}

TEST_F(JitCache, KeyCoversEveryComponent) {
  const KernelSpec spec = fresh_spec("key");
  const std::string base = cache_key(spec, "nvrtc 13.0", {"-a"}, 1);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(cache_key(spec, "nvrtc 13.0", {"-a"}, 1), base);
  EXPECT_NE(cache_key(spec, "nvrtc 13.1", {"-a"}, 1), base);
  EXPECT_NE(cache_key(spec, "nvrtc 13.0", {"-b"}, 1), base);
  EXPECT_NE(cache_key(spec, "nvrtc 13.0", {"-a", ""}, 1), base);
  EXPECT_NE(cache_key(spec, "nvrtc 13.0", {"-a"}, 2), base);
  KernelSpec other = spec;
  other.source += " ";
  EXPECT_NE(cache_key(other, "nvrtc 13.0", {"-a"}, 1), base);
  other = spec;
  other.name += "x";
  EXPECT_NE(cache_key(other, "nvrtc 13.0", {"-a"}, 1), base);
}

TEST_F(JitCache, TruncatedOrCorruptedCubinIsRebuiltNotLoaded) {
  const KernelSpec spec = fresh_spec("corrupt");
  const std::vector<char> good = get_kernel(spec)->cubin();
  const fs::path path = get_kernel(spec)->cubin_path();
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 0) {
      fs::resize_file(path, fs::file_size(path) / 2);
    } else {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(good.size() / 2));
      f.put(static_cast<char>(good[good.size() / 2] ^ 0x5a));
    }
    clear_memory_cache();
    const RuntimeStats before = runtime_stats();
    auto rebuilt = get_kernel(spec);
    EXPECT_EQ(runtime_stats().compiles, before.compiles + 1) << "variant " << variant;
    EXPECT_EQ(runtime_stats().disk_hits, before.disk_hits) << "variant " << variant;
    EXPECT_EQ(rebuilt->cubin().size(), good.size());
    EXPECT_EQ(entries(), 1u);
    EXPECT_TRUE(artifact_matches_meta(rebuilt->cubin(), read_text(fs::path(path).parent_path() / "kernel.meta")));
  }
}

TEST_F(JitCache, EightRacingProcessesAllSucceedAndLeaveOneEntryPerKernel) {
  const std::string salt = dir_.filename().string();
  std::vector<pid_t> pids;
  for (int i = 0; i < 8; ++i) {
    const std::string log = (dir_ / fmt::format("race{}.log", i)).string();
    std::vector<std::string> args = {TILEGEMM_CLI_PATH, "jit", "precompile", "--test-kernels",
                                     "--salt",          salt,  "-j",         "1"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  for (std::size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "process " << i << ": " << read_text(dir_ / fmt::format("race{}.log", i));
  }
  EXPECT_EQ(entries(), 3u) << "one entry per test kernel";
  EXPECT_EQ(files_under(cache_dir() / "tmp"), 0u) << "no leftover temp dirs";
  for (const auto& entry : fs::directory_iterator(cache_dir() / "kernels")) {
    std::ifstream in(entry.path() / "kernel.cubin", std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(artifact_matches_meta(bytes, read_text(entry.path() / "kernel.meta"))) << entry.path();
  }
}

TEST_F(JitCache, UnwritableCacheDirectoryDegradesToMemoryWithOneWarning) {
  const fs::path blocker = dir_ / "a-file";
  std::ofstream(blocker) << "not a directory";
  set("DG_JIT_CACHE_DIR", (blocker / "cache").string());  // mkdir fails with ENOTDIR, even for root
  ::testing::internal::CaptureStderr();
  auto k1 = get_kernel(fresh_spec("rofs", 0));
  auto k2 = get_kernel(fresh_spec("rofs", 1));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(is_elf(k1->cubin()) && is_elf(k2->cubin()));
  EXPECT_TRUE(k1->cubin_path().empty());
  const auto first = err.find("not writable");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("not writable", first + 1), std::string::npos) << "warned more than once:\n" << err;
  EXPECT_FALSE(cache_info().writable);
}

TEST_F(JitCache, ReadOnlyCacheWithEntriesStillServesThem) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions; covered by the unwritable-dir test";
  const KernelSpec spec = fresh_spec("readonly");
  get_kernel(spec);
  fs::permissions(cache_dir(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  fs::permissions(cache_dir() / "kernels", fs::perms::owner_write, fs::perm_options::remove);
  clear_memory_cache();
  const RuntimeStats before = runtime_stats();
  get_kernel(spec);
  EXPECT_EQ(runtime_stats().disk_hits, before.disk_hits + 1);
  ::testing::internal::CaptureStderr();
  auto k = get_kernel(fresh_spec("readonly-new"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(is_elf(k->cubin()));
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  fs::permissions(cache_dir() / "kernels", fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(cache_dir(), fs::perms::owner_write, fs::perm_options::add);
}

TEST_F(JitCache, SyntaxErrorRaisesWithTheLogAndTheSavedSource) {
  KernelSpec spec = fresh_spec("syntax");
  spec.name = "test_syntax_error";
  spec.source += "\nextern \"C\" __global__ void broken( { int x = ; }\n";
  try {
    get_kernel(spec);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.kernel(), "test_syntax_error");
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find(e.source_path()), std::string::npos);
    EXPECT_EQ(read_text(e.source_path()), spec.source);
  }
  EXPECT_EQ(entries(), 0u);
  EXPECT_EQ(files_under(cache_dir() / "tmp"), 0u);
  EXPECT_THROW(get_kernel(spec), CompileError) << "a failure is not cached as a success";
}

TEST_F(JitCache, DisableMakesACompileAnErrorNamingTheKernel) {
  const KernelSpec cached = fresh_spec("disable", 0);
  get_kernel(cached);
  clear_memory_cache();
  set("DG_JIT_DISABLE", "1");
  EXPECT_NO_THROW(get_kernel(cached)) << "precompiled kernels still load";
  const KernelSpec missing = fresh_spec("disable", 1);
  try {
    get_kernel(missing);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(missing.name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("DG_JIT_DISABLE"), std::string::npos) << e.what();
  }
}

// The advice for a kernel DG_JIT_DISABLE=1 keeps from compiling named `tilegemm jit precompile` as the fix, which
// fails the same way when DG_JIT_DISABLE is still set (precompile itself under it): say to drop the variable.
TEST_F(JitCache, DisableAdvisesPrecompilingWithoutIt) {
  set("DG_JIT_DISABLE", "1");
  const std::string salt = "disabled-" + dir_.filename().string();
  const ProcessResult r =
      run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--test-kernels", "--salt", salt, "-j", "1"},
                  (dir_ / "disabled.log").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("DG_JIT_DISABLE=1 forbids compiling it; precompile it without DG_JIT_DISABLE"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("or unset DG_JIT_DISABLE"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("with the same settings (`tilegemm jit precompile`)"), std::string::npos) << r.output;
  EXPECT_EQ(entries(), 0u);
}

TEST_F(JitCache, PtxasCheckRejectsLocalMemoryAndPassesCleanKernels) {
  set("DG_JIT_PTXAS_CHECK", "1");
  EXPECT_NO_THROW(get_kernel(fresh_spec("ptxas-clean")));
  KernelSpec spill = fresh_spec("ptxas-spill");
  spill.name = "test_local_memory";
  spill.source = R"(extern "C" __global__ void tilegemm_kernel(const int* idx, float* out) {
  float scratch[512];  // stored to with a run-time index: lives in local memory
  for (int i = 0; i < 512; ++i) scratch[i] = out[i];
  scratch[idx[threadIdx.x] & 511] += 1.0f;
  float sum = 0.0f;
  for (int i = 0; i < 512; ++i) sum += scratch[i] * i;
  out[threadIdx.x] = sum;
}
)";
  try {
    get_kernel(spill);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("DG_JIT_PTXAS_CHECK"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("stack frame"), std::string::npos) << e.log();
  }
}

// A promotion reading the accumulators of a wgmma group it has not waited for: ptxas keeps it correct by
// serialising every wgmma (C7514), which the check turns into a compile error.
TEST_F(JitCache, PtxasCheckRejectsSerialisedWgmma) {
  set("DG_JIT_PTXAS_CHECK", "1");
  KernelSpec serial = fresh_spec("ptxas-serial");
  serial.name = "test_wgmma_serialised";
  serial.source = R"(#include <tilegemm/prim/wgmma.cuh>
#include <tilegemm/prim/wgmma_ops.cuh>
using namespace tilegemm;
using namespace tilegemm::prim;
extern "C" __global__ void __launch_bounds__(128, 1) tilegemm_kernel(float* out, int iters) {
  __shared__ alignas(1024) u8 smem[16384];
  const u64 a = make_smem_desc(smem_addr(smem), 0, 1024, SmemSwizzle::k128B);
  const u64 b = make_smem_desc(smem_addr(smem + 8192), 0, 1024, SmemSwizzle::k128B);
  float part[32], acc[2] = {0.0f, 0.0f};
  for (int it = 0; it < iters; ++it) {
    wgmma_fence();
    wgmma_e4m3<64>(a, b, part, 0);
    wgmma_commit();
    acc[it % 2] += part[1];  // read while the group is in flight
    wgmma_wait<0>();
  }
  out[threadIdx.x] = acc[0] + acc[1];
}
)";
  try {
    get_kernel(serial);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("serialised"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("instructions are serialized"), std::string::npos) << e.log();
  }
}

TEST_F(JitCache, ParsesPtxasReports) {
  const PtxasUsage u = parse_ptxas_log(
      "ptxas info    : Function properties for k\n    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 32 bytes lmem\n");
  EXPECT_TRUE(u.reported);
  EXPECT_EQ(u.stack_frame_bytes, 16);
  EXPECT_EQ(u.spill_store_bytes, 8);
  EXPECT_EQ(u.spill_load_bytes, 4);
  EXPECT_EQ(u.lmem_bytes, 32);
  EXPECT_EQ(u.registers, 168);
  EXPECT_FALSE(parse_ptxas_log("no report here").reported);
  EXPECT_FALSE(parse_ptxas_log("Used registers, bytes lmem").reported);
  // Several functions: the largest figure of each kind.
  const PtxasUsage two =
      parse_ptxas_log("ptxas info    : Used 90 registers\nptxas info    : Used 232 registers, 0 bytes lmem\n");
  EXPECT_TRUE(two.reported);
  EXPECT_EQ(two.registers, 232);
  EXPECT_EQ(two.lmem_bytes, 0);
  EXPECT_FALSE(u.wgmma_serialized);
  EXPECT_TRUE(parse_ptxas_log("ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are "
                              "serialized due to ...\nptxas info    : Used 90 registers\n")
                  .wgmma_serialized);
  EXPECT_TRUE(parse_ptxas_log("ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are "
                              "serialized due to insufficient register resources\n")
                  .wgmma_serialized);
}

TEST_F(JitCache, DumpPtxWritesItIntoTheEntry) {
  set("DG_JIT_DUMP_PTX", "1");
  ::testing::internal::CaptureStderr();
  auto k = get_kernel(fresh_spec("dump"));
  ::testing::internal::GetCapturedStderr();
  const std::string ptx = read_text(fs::path(k->cubin_path()).parent_path() / "kernel.ptx");
  EXPECT_NE(ptx.find(".entry tilegemm_kernel"), std::string::npos) << ptx.substr(0, 400);
}

TEST_F(JitCache, BadSpecsNameTheField) {
  KernelSpec spec = fresh_spec("bad");
  spec.name = "../escape";
  try {
    get_kernel(spec);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "KernelSpec.name");
  }
  spec = fresh_spec("bad");
  spec.entry = "not an identifier";
  EXPECT_THROW(get_kernel(spec), InvalidArgument);
  spec = fresh_spec("bad");
  spec.source.clear();
  EXPECT_THROW(get_kernel(spec), InvalidArgument);
}

TEST_F(JitCache, PrecompileCompilesInParallelAndReportsProgress) {
  std::vector<KernelSpec> specs = test_kernel_specs("pre-" + dir_.filename().string());
  specs.push_back(specs.front());  // a duplicate is compiled once
  std::vector<std::size_t> done;
  PrecompileResult r = precompile(specs, 2, [&](const PrecompileProgress& p) {
    EXPECT_EQ(p.total, 3u);
    done.push_back(p.done);
  });
  EXPECT_EQ(r.total, 3u);
  EXPECT_EQ(r.compiled, 3u);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(done, (std::vector<std::size_t>{1, 2, 3}));
  clear_memory_cache();
  r = precompile(specs, 0);
  EXPECT_EQ(r.cached, 3u);
  EXPECT_EQ(r.compiled, 0u);
  EXPECT_THROW(precompile(specs, -1), InvalidArgument);
}

TEST_F(JitCache, InfoAndClear) {
  precompile(test_kernel_specs("info-" + dir_.filename().string()), 1);
  CacheInfo info = cache_info();
  EXPECT_EQ(info.directory, cache_dir().string());
  EXPECT_EQ(info.entries, 3u);
  EXPECT_GT(info.bytes, 0u);
  EXPECT_TRUE(info.writable);
  EXPECT_EQ(clear_disk_cache(), 3u);
  EXPECT_EQ(cache_info().entries, 0u);
}

TEST_F(JitCache, CliReportsUserErrorsWithExitStatusTwo) {
  ProcessResult r = run_process({TILEGEMM_CLI_PATH, "jit", "precompile"}, (dir_ / "cli1.log").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--m/--n/--k"), std::string::npos) << r.output;
  r = run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--m", "64", "--n", "128", "--k", "256", "--dtype", "int8"},
                  (dir_ / "cli2.log").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--dtype"), std::string::npos) << r.output;
  // SM90 FP8 reads K-major operands only: an nn layout is refused before anything compiles.
  r = run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--m", "64", "--n", "128", "--k", "256", "--dtype", "fp8",
                   "--layout", "nn"},
                  (dir_ / "cli4.log").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("K-major"), std::string::npos) << r.output;
  // The kernels are SM90 only: an Ascend preset would be planned an sm_90 config (the ledger still models it).
  r = run_process(
      {TILEGEMM_CLI_PATH, "jit", "precompile", "--m", "64", "--n", "2112", "--k", "7168", "--hw", "ascend-950dt"},
      (dir_ / "cli5.log").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tilegemm: error: --hw: expected an NVIDIA Hopper preset (", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("'ascend-950dt'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("precompiled"), std::string::npos) << r.output;
  r = run_process({TILEGEMM_CLI_PATH, "jit", "info"}, (dir_ / "cli3.log").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(cache_dir().string()), std::string::npos) << r.output;
}

// A cache directory nothing can be created in (/proc, where access() still says writable to root): jit info says
// so, and a precompile fails before compiling, naming DG_JIT_CACHE_DIR, instead of reporting kernels it kept
// nowhere.
TEST_F(JitCache, APrecompileThatCannotKeepItsKernelsFails) {
  set("DG_JIT_CACHE_DIR", "/proc/tilegemm-no-such-cache");
  EXPECT_FALSE(cache_info().writable);
  ProcessResult r = run_process({TILEGEMM_CLI_PATH, "jit", "info"}, (dir_ / "proc-info.log").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("writable:  no"), std::string::npos) << r.output;
  r = run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--m", "64", "--n", "2112", "--k", "7168", "-j", "1"},
                  (dir_ / "proc-precompile.log").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("DG_JIT_CACHE_DIR"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("precompiled"), std::string::npos) << r.output;
}

TEST_F(JitCache, PrecompilesTheFp8KernelsTheHeuristicsWouldPick) {
  const ProcessResult r = run_process({TILEGEMM_CLI_PATH, "jit", "precompile", "--m", "4096", "--n", "7168", "--k",
                                       "2048", "--dtype", "fp8", "-j", "1"},
                                      (dir_ / "fp8.log").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sm90_fp8_gemm_1d2d"), std::string::npos) << r.output;
  EXPECT_EQ(cache_info().entries, 1u);
}

}  // namespace
}  // namespace tilegemm::jit
