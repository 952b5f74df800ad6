#pragma once
// Every environment variable tilegemm reads, read once (on first use) in one place (src/jit/env.cpp).
// Names follow DeepGEMM 2.6.1's; DG_JIT_DISABLE is ours.
#include <string>

namespace tilegemm {

struct Env {
  std::string jit_cache_dir;                // DG_JIT_CACHE_DIR; default $XDG_CACHE_HOME/tilegemm or ~/.cache/tilegemm
  bool jit_use_nvrtc = true;                // DG_JIT_USE_NVRTC (0 → NVCC)
  std::string jit_nvcc_compiler;            // DG_JIT_NVCC_COMPILER; default <toolkit>/bin/nvcc
  bool jit_debug = false;                   // DG_JIT_DEBUG
  bool print_configs = false;               // DG_PRINT_CONFIGS
  bool jit_print_compiler_command = false;  // DG_JIT_PRINT_COMPILER_COMMAND
  bool jit_ptxas_verbose = false;           // DG_JIT_PTXAS_VERBOSE
  bool jit_ptxas_check = false;             // DG_JIT_PTXAS_CHECK: fail when ptxas reports spills / local memory
  bool jit_with_lineinfo = false;           // DG_JIT_WITH_LINEINFO
  bool jit_dump_ptx = false;                // DG_JIT_DUMP_PTX
  bool jit_dump_sass = false;               // DG_JIT_DUMP_SASS
  bool jit_disable = false;                 // DG_JIT_DISABLE: any compile becomes an error naming the kernel
  // TILEGEMM_MMA_IN_FLIGHT (tuning experiments only): committed wgmma groups each consumer keeps in flight
  // before it releases a shared-memory stage; 0 = the kernel family's rule.
  int tune_mma_in_flight = 0;
  // TILEGEMM_LOAD_OVERLAP_PENALTY (tuning experiments only): fraction in [0, 1] of a tile's shorter phase
  // (loads or MMAs) the cost model adds on top of the longer one.
  double tune_load_overlap_penalty = 0.0;
  // TILEGEMM_WAVES_PER_LAUNCH: a data-parallel M-grouped GEMM longer than this many waves of the persistent
  // grid is launched in chunks of about this many waves (GemmParams::unit_begin says why); 0 = one launch.
  int waves_per_launch = 0;
  // TILEGEMM_CTAS_PER_SM (tuning experiments only): the persistent grid may hold up to this many CTAs per SM
  // (1 = one per SM, the kernels' design); resident only when shared memory and registers allow it.
  int tune_ctas_per_sm = 1;
  // DG_DETERMINISTIC: split-K / stream-K reduce cut tiles in a fixed order (bit-identical runs) instead of
  // with fp32 atomics; tilegemm::set_deterministic overrides it at run time.
  bool deterministic = false;
  // DG_ENABLE_PDL: GEMM kernels are launched with programmatic dependent launch (the next kernel may start its
  // prologue while this one finishes; each kernel waits for its predecessor before touching memory);
  // tilegemm::set_pdl overrides it at run time.
  bool pdl = false;
  // TILEGEMM_GEMM_SCHEME (tests and experiments): restricts the selector to one scheme —
  // "data-parallel", "split-k", "split-k:N" (exactly N slices) or "stream-k"; empty = the heuristics choose.
  // force_scheme is -1 when unset, else a GemmScheme value; force_split_k is N, or 0 for any.
  int force_scheme = -1;
  int force_split_k = 0;
  // TILEGEMM_CONFIG_FILTER (tests and experiments): comma-separated `field=value` pairs that every selected
  // config must match, e.g. "block_m=128,block_n=256,stages=3,cluster_m=2". Fields: block_m, block_n,
  // stages, math_wg, cluster_m, cluster_n, raster, split_k. The selector still checks legality and ranks
  // what is left; no legal match is an error naming the variable. Empty = no filter.
  std::string config_filter;
  // TILEGEMM_DEVICE_INCLUDE_DIR; default default_device_include_dir(): the source tree's device/, or the installed
  // headers once the library is installed and the source tree is gone.
  std::string device_include_dir;
  // TILEGEMM_CUDA_INCLUDE_DIR; default the toolkit the library was built against.
  std::string cuda_include_dir;
  // TILEGEMM_CUPTI_LIBRARY: the CUPTI shared library the kernel timer (`--timer kernel`) loads; empty = search
  // the loader's path, then the toolkit the library was built against.
  std::string cupti_library;
  // Incremented by every reload_env(), so caches derived from the settings know when to rebuild.
  unsigned generation = 0;
};

// The process-wide values, read from the environment on first call. A malformed boolean (anything but
// 0/1/true/false/yes/no/on/off, any case) throws InvalidArgument naming the variable.
const Env& env();
// Re-reads the environment (tests and the Python layer's setters use this). Not safe to call while another
// thread is compiling or launching.
void reload_env();
// Reads the environment without installing the result (used by env() and reload_env(); exposed for tests).
Env read_env_from_process();

// The JIT's device headers when TILEGEMM_DEVICE_INCLUDE_DIR is unset: the source tree's device/ while it exists
// (a build tree), else the installed include directory (`cmake --install`), else the source path (whose absence the
// JIT then names).
std::string default_device_include_dir(const std::string& source_dir, const std::string& installed_dir);

}  // namespace tilegemm
