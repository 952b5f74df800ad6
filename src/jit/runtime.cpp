// get_kernel: memory cache → disk cache → compiler. One process-wide state, rebuilt when reload_env() changes
// the settings (compiler, flags, cache directory, include directory).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "jit/cache_key.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/loaded_kernel.hpp"
#include "jit/process.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::jit {
namespace fs = std::filesystem;
namespace {

// Everything derived from one generation of the environment. The compiler and the include-tree hash cost
// a process start (nvcc --version) or a directory walk, so they are made on the first miss, not per call.
struct Settings {
  explicit Settings(const Env& e) : env(e), disk(e.jit_cache_dir) {}

  Compiler& compiler() {
    std::call_once(compiler_once, [&] { compiler_ptr = make_compiler(env); });
    return *compiler_ptr;
  }
  std::uint64_t include_hash() {
    std::call_once(hash_once, [&] { include_hash_value = hash_directory_tree(env.device_include_dir); });
    return include_hash_value;
  }

  Env env;
  DiskCache disk;
  std::once_flag compiler_once, hash_once;
  std::unique_ptr<Compiler> compiler_ptr;
  std::uint64_t include_hash_value = 0;
};

using KernelFuture = std::shared_future<KernelLookup>;

struct MemoryEntry {
  std::string source, entry;
  std::vector<std::string> options;
  KernelFuture lookup;
  std::uint64_t id = 0;  // identifies the in-flight marker to remove when its compile fails
};

struct State {
  std::mutex mutex;
  std::shared_ptr<Settings> settings;
  // Keyed by name, then compared on source/options/entry: hashing a multi-KB source per call would cost
  // microseconds, a memcmp of an equal source costs tens of nanoseconds.
  std::unordered_map<std::string, std::vector<MemoryEntry>> by_name;
  std::atomic<std::int64_t> compiles{0}, memory_hits{0}, disk_hits{0};
  std::uint64_t next_id = 0;
};

State& state() {
  static State s;
  return s;
}

void warn_once_no_disassembler() {
  static std::once_flag once;
  std::call_once(once, [] {
    fmt::print(stderr, "tilegemm: warning: DG_JIT_DUMP_SASS: neither cuobjdump nor nvdisasm is in {}; no SASS dumped\n",
               TILEGEMM_CUDA_BIN_DIR);
  });
}

// Writes kernel.ptx / kernel.sass into the work dir, so they are published with the entry.
void write_dumps(const Settings& s, const std::string& work_dir, const CompileOutput& out) {
  const fs::path work = work_dir;
  if (s.env.jit_dump_ptx) {
    if (out.ptx.empty())
      fmt::print(stderr, "tilegemm: warning: DG_JIT_DUMP_PTX: the compiler returned no PTX\n");
    else
      write_file_durably((work / "kernel.ptx").string(), out.ptx.data(), out.ptx.size());
  }
  if (s.env.jit_dump_sass) {
    const fs::path cubin = work / "dump.cubin";
    write_file_durably(cubin.string(), out.cubin.data(), out.cubin.size());
    const fs::path bin = TILEGEMM_CUDA_BIN_DIR;
    std::error_code ec;
    std::vector<std::string> argv;
    if (fs::exists(bin / "cuobjdump", ec))
      argv = {(bin / "cuobjdump").string(), "-sass", cubin.string()};
    else if (fs::exists(bin / "nvdisasm", ec))
      argv = {(bin / "nvdisasm").string(), cubin.string()};
    if (argv.empty())
      warn_once_no_disassembler();
    else
      run_process(argv, (work / "kernel.sass").string());
    fs::remove(cubin, ec);
  }
}

KernelLookup resolve(const KernelSpec& spec, Settings& s) {
  State& st = state();
  const Env& e = s.env;
  Compiler& compiler = s.compiler();
  const std::vector<std::string> flags = compiler.flags(spec, e);
  const std::string key = cache_key(spec, compiler.identity(), flags, s.include_hash());
  const std::string entry = entry_name(spec, key);

  std::string cubin_path;
  if (auto cubin = s.disk.load(entry, &cubin_path)) {
    st.disk_hits++;
    if (e.jit_debug) fmt::print(stderr, "tilegemm: jit: {} found on disk at {}\n", spec.name, cubin_path);
    return {make_loaded_kernel(spec.name, spec.entry, std::move(*cubin), cubin_path), KernelSource::kDisk};
  }
  if (e.jit_disable)
    throw RuntimeError(fmt::format(
        "kernel '{}' is not in the JIT cache '{}' (entry {}) and DG_JIT_DISABLE=1 forbids compiling it; precompile it "
        "without DG_JIT_DISABLE (`tilegemm jit precompile` with DG_JIT_DISABLE unset, every other setting the same) "
        "or unset DG_JIT_DISABLE here",
        spec.name, s.disk.root(), entry));

  const std::string work_dir = s.disk.make_work_dir(entry);
  const std::string source_path = (fs::path(work_dir) / "kernel.cu").string();
  write_file_durably(source_path, spec.source.data(), spec.source.size());
  if (e.jit_print_compiler_command)
    fmt::print(stderr, "tilegemm: jit: {}\n", compiler.describe_command(flags, source_path));

  const auto start = std::chrono::steady_clock::now();
  CompileOutput out = compiler.compile(spec, flags, source_path, work_dir, e.jit_dump_ptx);
  st.compiles++;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto fail = [&](const std::string& log) {
    const std::string saved = s.disk.save_failed_source(entry, spec.source);
    std::error_code ec;
    fs::remove_all(work_dir, ec);
    throw CompileError(spec.name, log, saved);
  };
  if (!out.ok) fail(out.log);
  if (e.jit_ptxas_verbose) fmt::print(stderr, "tilegemm: jit: ptxas for {}:\n{}\n", spec.name, out.log);
  if (e.jit_ptxas_check) {
    const PtxasUsage u = parse_ptxas_log(out.log);
    if (!u.reported) fail("DG_JIT_PTXAS_CHECK=1: the compiler log has no ptxas resource report to check\n" + out.log);
    if (u.uses_local_memory())
      fail(
          fmt::format("DG_JIT_PTXAS_CHECK=1: ptxas reports local memory use: {} bytes spill stores, {} bytes spill "
                      "loads, {} bytes stack frame, {} bytes lmem\n{}",
                      u.spill_store_bytes, u.spill_load_bytes, u.stack_frame_bytes, u.lmem_bytes, out.log));
    if (u.wgmma_serialized)
      fail(
          "DG_JIT_PTXAS_CHECK=1: ptxas serialised the kernel's wgmma instructions (C7514: non-wgmma instructions "
          "read accumulators of an in-flight group; C7511: too few registers)\n" +
          out.log);
  }
  write_dumps(s, work_dir, out);
  cubin_path = s.disk.publish(work_dir, entry, out.cubin, spec.name, compiler.identity());
  if (e.jit_debug)
    fmt::print(stderr, "tilegemm: jit: compiled {} with {} in {:.0f} ms -> {}\n", spec.name, compiler.identity(), ms,
               cubin_path.empty() ? "(memory only)" : cubin_path);
  if ((e.jit_dump_ptx || e.jit_dump_sass) && !cubin_path.empty())
    fmt::print(stderr, "tilegemm: jit: dumps for {} are in {}\n", spec.name,
               fs::path(cubin_path).parent_path().string());
  return {make_loaded_kernel(spec.name, spec.entry, std::move(out.cubin), cubin_path), KernelSource::kCompiled};
}

}  // namespace

CompileError::CompileError(const std::string& kernel, const std::string& log, const std::string& source_path)
    : RuntimeError(fmt::format("kernel '{}' failed to compile (source saved at {}):\n{}", kernel, source_path, log)),
      kernel_(kernel),
      log_(log),
      source_path_(source_path) {}

KernelLookup lookup_kernel(const KernelSpec& spec) {
  validate_spec(spec);
  const Env& e = env();
  State& st = state();
  std::unique_lock lock(st.mutex);
  if (!st.settings || st.settings->env.generation != e.generation) {
    st.settings = std::make_shared<Settings>(e);
    st.by_name.clear();
  }
  auto& candidates = st.by_name[spec.name];
  for (const auto& m : candidates) {
    if (m.source == spec.source && m.entry == spec.entry && m.options == spec.options) {
      KernelFuture pending = m.lookup;
      lock.unlock();
      st.memory_hits++;
      return {pending.get().kernel, KernelSource::kMemory};
    }
  }
  // Publish an in-flight marker so that threads asking for the same kernel wait for this compile instead of
  // starting their own.
  std::promise<KernelLookup> promise;
  KernelFuture future = promise.get_future().share();
  const std::uint64_t id = ++st.next_id;
  candidates.push_back({spec.source, spec.entry, spec.options, future, id});
  std::shared_ptr<Settings> settings = st.settings;
  lock.unlock();
  try {
    KernelLookup found = resolve(spec, *settings);
    promise.set_value(found);
    return found;
  } catch (...) {
    promise.set_exception(std::current_exception());
    // Forget the failure so that a later call (after fixing the header or the environment) tries again.
    std::lock_guard relock(st.mutex);
    auto it = st.by_name.find(spec.name);
    if (it != st.by_name.end()) std::erase_if(it->second, [&](const MemoryEntry& m) { return m.id == id; });
    throw;
  }
}

}  // namespace tilegemm::jit

namespace tilegemm::jit {

std::shared_ptr<const CompiledKernel> get_kernel(const KernelSpec& spec) {
  return lookup_kernel(spec).kernel;
}

RuntimeStats runtime_stats() {
  State& st = state();
  return {st.compiles.load(), st.memory_hits.load(), st.disk_hits.load()};
}

void clear_memory_cache() {
  State& st = state();
  std::lock_guard lock(st.mutex);
  st.by_name.clear();
}

}  // namespace tilegemm::jit
