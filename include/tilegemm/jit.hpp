#pragma once
// The JIT contract: a kernel family's host code describes one kernel as a KernelSpec; the runtime turns it
// into a compiled artifact (memory cache → disk cache → NVRTC/NVCC) and launches it through the driver API.
// Nothing here knows about GEMM.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// Statistics for tests and `tilegemm jit info` (per process).
struct RuntimeStats {
  std::int64_t compiles = 0;       // compiler invocations in this process
  std::int64_t memory_hits = 0;
  std::int64_t disk_hits = 0;
};
RuntimeStats runtime_stats();

}  // namespace tilegemm::jit
