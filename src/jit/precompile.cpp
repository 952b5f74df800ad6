// Parallel precompile: many kernels, one compiler call per thread at a time, progress after each.
#include <chrono>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "core/parallel_for.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::jit {
namespace {

std::string first_nonempty_line(const std::string& text) {
  std::size_t start = text.find_first_not_of('\n');
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

// One line per failed kernel. CompileError's what() keeps the compiler's log after a newline; the log's first
// line is what says why (an nvcc diagnostic, a compiler that wrote no cubin), so it goes on the line.
std::string failure_line(const KernelSpec& spec, const std::exception& e) {
  if (const auto* compile = dynamic_cast<const CompileError*>(&e)) {
    const std::string why = first_nonempty_line(compile->log());
    return fmt::format("{}: failed to compile: {} (source saved at {})", spec.name,
                       why.empty() ? "the compiler printed nothing" : why, compile->source_path());
  }
  return spec.name + ": " + first_nonempty_line(e.what());
}

}  // namespace

PrecompileResult precompile(const std::vector<KernelSpec>& specs, int jobs, const ProgressCallback& on_progress) {
  TILEGEMM_REQUIRE(jobs >= 0, "jobs", ">= 0 (0 = all cores)", std::to_string(jobs));
  // What is compiled must be kept, or the precompile did nothing a later process can use.
  TILEGEMM_REQUIRE(cache_info().writable, "DG_JIT_CACHE_DIR",
                   "a writable directory (a precompile keeps what it compiles there)",
                   fmt::format("'{}'", env().jit_cache_dir));
  // The same kernel asked for twice (two shapes choosing one config) is one piece of work.
  std::vector<const KernelSpec*> unique;
  std::set<std::tuple<std::string, std::string, std::vector<std::string>>> seen;
  for (const auto& s : specs)
    if (seen.insert({s.name, s.source, s.options}).second) unique.push_back(&s);

  PrecompileResult result;
  result.total = unique.size();
  std::mutex mutex;
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  parallel_for(unique.size(), worker_threads(jobs, unique.size()), [&](std::size_t i) {
    const KernelSpec& spec = *unique[i];
    std::string failure;
    bool compiled = false;
    try {
      compiled = lookup_kernel(spec).source == KernelSource::kCompiled;
    } catch (const std::exception& e) {
      failure = failure_line(spec, e);
    }
    std::lock_guard lock(mutex);
    if (!failure.empty())
      result.failures.push_back(std::move(failure));
    else if (compiled)
      ++result.compiled;
    else
      ++result.cached;
    if (on_progress) {
      PrecompileProgress p;
      p.done = result.compiled + result.cached + result.failures.size();
      p.total = result.total;
      p.compiled = result.compiled;
      p.elapsed_s = seconds();
      p.last_name = &spec.name;
      on_progress(p);
    }
  });
  result.elapsed_s = seconds();
  return result;
}

}  // namespace tilegemm::jit
