#pragma once
// The two compilers behind one interface. A compiler turns a KernelSpec plus a resolved flag list into an sm_90a
// cubin and a log; it never touches the GPU and never throws for a rejected kernel (the runtime saves the
// source and raises CompileError with the log).
#include <memory>
#include <string>
#include <vector>

#include "tilegemm/env.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::jit {

inline constexpr const char* kTargetArch = "sm_90a";

struct CompileOutput {
  bool ok = false;
  std::vector<char> cubin;
  std::string log;  // compiler diagnostics, plus ptxas -v lines when asked for
  std::string ptx;  // filled when want_ptx and the compiler can produce it
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Name and exact version (part of the cache key): "nvrtc 13.0", "nvcc /usr/local/cuda/bin/nvcc V13.0.48".
  virtual const std::string& identity() const = 0;
  // The complete flag list for `spec` under `env` (defaults, env-driven flags, then spec.options).
  virtual std::vector<std::string> flags(const KernelSpec& spec, const Env& env) const = 0;
  // `source_path` already holds spec.source; `work_dir` is private to this compile.
  virtual CompileOutput compile(const KernelSpec& spec, const std::vector<std::string>& flags,
                                const std::string& source_path, const std::string& work_dir, bool want_ptx) const = 0;
  // The command as it would be typed (DG_JIT_PRINT_COMPILER_COMMAND).
  virtual std::string describe_command(const std::vector<std::string>& flags, const std::string& source_path) const = 0;
};

// NVRTC unless env.jit_use_nvrtc is false. Throws RuntimeError when the NVCC named by DG_JIT_NVCC_COMPILER
// cannot be run.
std::unique_ptr<Compiler> make_compiler(const Env& env);

// Flags both compilers share: language standard, -I dirs, NDEBUG, lineinfo and ptxas verbosity.
std::vector<std::string> common_flags(const Env& env);

// What `ptxas -v` reported for the kernel (all zero when the log has no such lines).
struct PtxasUsage {
  bool reported = false;
  long registers = 0, spill_store_bytes = 0, spill_load_bytes = 0, stack_frame_bytes = 0, lmem_bytes = 0;
  // ptxas serialised the kernel's wgmma (C7514: non-wgmma instructions read accumulators of an in-flight group;
  // C7511: too few registers for the wgmma pipeline). The kernel stays correct and silently loses its MMA overlap.
  bool wgmma_serialized = false;
  bool uses_local_memory() const {
    return spill_store_bytes > 0 || spill_load_bytes > 0 || stack_frame_bytes > 0 || lmem_bytes > 0;
  }
};
PtxasUsage parse_ptxas_log(const std::string& log);

}  // namespace tilegemm::jit
