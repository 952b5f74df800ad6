#pragma once
// The JIT contract: a kernel family's host code describes one kernel as a KernelSpec; the runtime turns it
// into a compiled artifact (memory cache → disk cache → NVRTC/NVCC) and launches it through the driver API.
// Nothing here knows about GEMM.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilegemm/errors.hpp"

namespace tilegemm::jit {

// One kernel to compile. The generated source defines `extern "C" __global__ void <entry>(...)`, so the
// entry name is the same for NVRTC and NVCC and needs no name mangling lookups.
struct KernelSpec {
  std::string name;                  // human-readable, unique per config, e.g. "sm90_bf16_gemm_128x128x64_s5"
  std::string source;                // generated .cu text; includes device headers as <tilegemm/...>
  std::vector<std::string> options;  // extra compiler flags beyond the runtime's defaults (arch, std, -I)
  std::string entry = "tilegemm_kernel";
};

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned cluster[3] = {1, 1, 1};  // cluster dims; {1,1,1} launches without the cluster attribute
  unsigned smem_bytes = 0;          // dynamic shared memory; the max-dynamic-smem attribute is set from it
  void* stream = nullptr;           // cudaStream_t / CUstream of the caller
  bool pdl = false;                 // programmatic dependent launch attribute
  // The kernel walks its work with a grid-stride loop (persistent), so the launcher may shrink grid.x to the
  // clusters that can be resident at once: a cluster that has to wait for a free GPC would run its whole
  // share of the work after the others finished.
  bool persistent = false;
};

// A compiled (and, after the first launch, loaded) kernel. Thread-safe.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  virtual const std::string& name() const = 0;
  // Path of the cached cubin on disk, empty when the cache is memory-only.
  virtual const std::string& cubin_path() const = 0;
  virtual const std::vector<char>& cubin() const = 0;
  // Loads the module on first use (throws RuntimeError naming the kernel when there is no GPU), then
  // launches with `args` as for cuLaunchKernel's kernelParams.
  virtual void launch(const LaunchConfig& config, void** args) const = 0;
};

// Compiles (or finds in a cache) the kernel. Never touches the GPU. Throws RuntimeError with the compiler
// log and the saved source path on a compile error, and when DG_JIT_DISABLE=1 forbids compiling.
std::shared_ptr<const CompiledKernel> get_kernel(const KernelSpec& spec);

// get_kernel with where the kernel came from (precompile's progress, the benchmark's JIT timings).
enum class KernelSource { kMemory, kDisk, kCompiled };
struct KernelLookup {
  std::shared_ptr<const CompiledKernel> kernel;
  KernelSource source = KernelSource::kMemory;
};
KernelLookup lookup_kernel(const KernelSpec& spec);

// Statistics for tests and `tilegemm jit info` (per process).
struct RuntimeStats {
  std::int64_t compiles = 0;  // compiler invocations in this process
  std::int64_t memory_hits = 0;
  std::int64_t disk_hits = 0;
};
RuntimeStats runtime_stats();

// A compiler rejected a kernel (or ptxas reported spills with DG_JIT_PTXAS_CHECK=1). what() names the kernel
// and the saved source and ends with the compiler log.
class CompileError : public RuntimeError {
 public:
  CompileError(const std::string& kernel, const std::string& log, const std::string& source_path);
  const std::string& kernel() const { return kernel_; }
  const std::string& log() const { return log_; }
  const std::string& source_path() const { return source_path_; }

 private:
  std::string kernel_, log_, source_path_;
};

// Forgets every kernel in the process's memory cache (kernels already handed out stay valid). Tests use it
// to observe the disk cache; the next get_kernel of a dropped spec reads the disk or compiles.
void clear_memory_cache();

// --- Precompile: fill the disk cache ahead of serving (works without a GPU) ------------------------------
struct PrecompileProgress {
  std::size_t done = 0, total = 0;
  std::size_t compiled = 0;  // of `done`, how many needed the compiler (the rest were cache hits)
  double elapsed_s = 0;
  const std::string* last_name = nullptr;  // the kernel that just finished
};
using ProgressCallback = std::function<void(const PrecompileProgress&)>;
struct PrecompileResult {
  std::size_t total = 0, compiled = 0, cached = 0;
  std::vector<std::string> failures;  // "<kernel>: <first line of the error>"
  double elapsed_s = 0;
};
// Compiles `specs` (duplicates by name+source are compiled once) on `jobs` threads (0 = all cores) into the disk
// cache, which must be writable (InvalidArgument naming DG_JIT_CACHE_DIR otherwise). The callback runs under a
// lock, once per finished kernel. Compile failures are collected, not thrown.
PrecompileResult precompile(const std::vector<KernelSpec>& specs, int jobs = 0,
                            const ProgressCallback& on_progress = {});

// --- The disk cache, for `tilegemm jit info/clear` ---------------------------------------------------------
struct CacheInfo {
  std::string directory;     // DG_JIT_CACHE_DIR (or its default)
  std::size_t entries = 0;   // published kernels
  std::uintmax_t bytes = 0;  // every file under the directory
  bool writable = false;
};
CacheInfo cache_info();
// Removes every entry and leftover temp dir under the cache directory; returns the entries removed.
std::size_t clear_disk_cache();

// Small self-contained kernels (no project headers beyond shared_enums.hpp) for tests, `tilegemm jit
// precompile --test-kernels` and `tilegemm jit bench`. `salt` makes the source (and so the key) unique.
std::vector<KernelSpec> test_kernel_specs(const std::string& salt = "");
// The heaviest kernel this build can generate without a GEMM family: it includes <cuda/ptx> and every
// header under <device include dir>/tilegemm/prim/.
KernelSpec heavy_test_kernel_spec(const std::string& salt = "");

}  // namespace tilegemm::jit
