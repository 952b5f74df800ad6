// `tilegemm jit {precompile,info,clear,bench}`: warm, inspect and empty the JIT cache, and measure the JIT's
// own costs. Nothing here needs a GPU.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "command.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/sm90_fp8_gemm.hpp"
#include "shared_checks.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::cli {
namespace {

struct PrecompileArgs {
  std::optional<int> m, n, k;
  std::string suite;
  std::string dtype = "bf16";
  std::string out_dtype = "bf16";
  std::vector<std::string> layouts = {"nt"};
  std::string hw = "h200";
  int num_sms = 0;
  bool test_kernels = false;
  std::string salt;
  int jobs = 0;
};

GemmDesc make_precompile_desc(GemmType type, int groups, int m, int n, int k, Layout layout, const PrecompileArgs& a) {
  GemmDesc desc;
  desc.type = type;
  desc.num_groups = groups;
  desc.m = type == GemmType::kMGroupedContiguous ? m * groups : m;
  desc.n = n;
  desc.k = k;
  desc.a_dtype = desc.b_dtype = parse_dtype(a.dtype, "--dtype");
  TILEGEMM_REQUIRE(desc.a_dtype == DType::kBFloat16 || desc.a_dtype == DType::kFloat8E4M3, "--dtype",
                   "bf16 or fp8 (the JIT kernel families: fp8 with bf16 --out-dtype is 1D2D, with fp32 1D1D)",
                   fmt::format("'{}'", a.dtype));
  desc.d_dtype = parse_dtype(a.out_dtype, "--out-dtype");
  desc.major_a = layout_major_a(layout);
  desc.major_b = layout_major_b(layout);
  return desc;
}

// The kernels the heuristics would choose for the requested shapes (what a server will ask for).
std::vector<jit::KernelSpec> gemm_specs(const PrecompileArgs& a) {
  std::vector<BenchShape> shapes;
  if (!a.suite.empty()) {
    TILEGEMM_REQUIRE(!a.m && !a.n && !a.k, "--suite", "no --m/--n/--k alongside a suite",
                     fmt::format("'{}' with a shape", a.suite));
    shapes = suite_shapes(a.suite, "--suite");
  } else {
    TILEGEMM_REQUIRE(a.m && a.n && a.k, "--m/--n/--k", "all three sizes (or --suite, or --test-kernels)",
                     fmt::format("--m {} --n {} --k {}", a.m ? std::to_string(*a.m) : "(missing)",
                                 a.n ? std::to_string(*a.n) : "(missing)", a.k ? std::to_string(*a.k) : "(missing)"));
    shapes.push_back(BenchShape{GemmType::kNormal, 1, *a.m, *a.n, *a.k});
  }
  const HardwareModel hw = sm90_hardware_preset(a.hw, "--hw");
  std::vector<jit::KernelSpec> specs;
  for (const auto& layout_name : a.layouts) {
    const Layout layout = parse_layout(layout_name, "--layout");
    for (const BenchShape& s : shapes) {
      const GemmDesc desc = make_precompile_desc(s.type, s.groups, s.m, s.n, s.k, layout, a);
      const GemmConfig config = select_config(desc, hw, a.num_sms);
      specs.push_back(is_fp8_desc(desc) ? kernels::sm90_fp8_gemm_spec(desc, config)
                                        : kernels::sm90_bf16_gemm_spec(desc, config));
    }
  }
  return specs;
}

// done/total, rate and ETA; \r-updated on a terminal, one line per kernel otherwise (logs, CI).
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) == 1) {}
  void operator()(const jit::PrecompileProgress& p) {
    const double rate = p.elapsed_s > 0 ? p.done / p.elapsed_s : 0;
    const double eta = rate > 0 ? (p.total - p.done) / rate : 0;
    if (tty_) {
      constexpr int kWidth = 30;
      const int filled = p.total ? static_cast<int>(kWidth * p.done / p.total) : kWidth;
      fmt::print(stderr, "\r[{}{}] {}/{} {:.2f} kernels/s ETA {:.0f}s  {:<40.40}", std::string(filled, '='),
                 std::string(kWidth - filled, ' '), p.done, p.total, rate, eta, p.last_name ? *p.last_name : "");
      if (p.done == p.total) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "precompile {}/{} ({:.2f} kernels/s, ETA {:.0f}s) {}\n", p.done, p.total, rate, eta,
                 p.last_name ? *p.last_name : "");
    }
  }

 private:
  bool tty_;
};

void run_precompile(const PrecompileArgs& a) {
  TILEGEMM_REQUIRE(a.jobs >= 0, "--jobs", ">= 0 (0 = all cores)", std::to_string(a.jobs));
  std::vector<jit::KernelSpec> specs;
  if (a.test_kernels) {
    TILEGEMM_REQUIRE(!a.m && !a.n && !a.k && a.suite.empty(), "--test-kernels", "no GEMM shape alongside it",
                     "a shape or suite as well");
    specs = jit::test_kernel_specs(a.salt);
  } else {
    TILEGEMM_REQUIRE(a.salt.empty(), "--salt", "only with --test-kernels", fmt::format("'{}'", a.salt));
    specs = gemm_specs(a);
  }
  ProgressPrinter printer;
  const jit::PrecompileResult r = jit::precompile(specs, a.jobs, [&](const jit::PrecompileProgress& p) { printer(p); });
  fmt::print("precompiled {} kernels in {:.1f} s: {} compiled, {} already cached, {} failed; cache {}\n", r.total,
             r.elapsed_s, r.compiled, r.cached, r.failures.size(), env().jit_cache_dir);
  for (const auto& f : r.failures) fmt::print(stderr, "  failed: {}\n", f);
  if (!r.failures.empty())
    throw RuntimeError(fmt::format("jit precompile: {} of {} kernels failed", r.failures.size(), r.total));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The JIT's own costs, measured in a throwaway cache directory: cold compiles of the heaviest kernel this build
// can generate, a load from disk, and the per-call host cost of a memory-cache hit.
void run_jit_bench(int compiles, int hit_calls, bool pch) {
  TILEGEMM_REQUIRE(compiles > 0, "--compiles", "> 0", std::to_string(compiles));
  TILEGEMM_REQUIRE(hit_calls > 0, "--hit-calls", "> 0", std::to_string(hit_calls));
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("tilegemm-jit-bench-{}", ::getpid());
  ::setenv("DG_JIT_CACHE_DIR", dir.c_str(), 1);
  reload_env();
  const std::string stamp = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());

  // The heaviest: a GEMM kernel the heuristics pick for a large DeepSeek shape, if the family is built in.
  auto heavy = [&](int i) {
    PrecompileArgs a;
    a.m = 4096, a.n = 7168, a.k = 2048;
    jit::KernelSpec spec = gemm_specs(a).front();
    spec.source += fmt::format("\n// bench {} {}\n", stamp, i);  // a fresh key: forces a real compile
    if (pch) spec.options.push_back("-pch");
    return spec;
  };
  fmt::print("compiler: {}\n", env().jit_use_nvrtc ? "NVRTC" : "NVCC");
  double total = 0, worst = 0;
  std::string name;
  for (int i = 0; i < compiles; ++i) {
    const jit::KernelSpec spec = heavy(i);
    name = spec.name;
    const auto start = std::chrono::steady_clock::now();
    jit::get_kernel(spec);
    const double s = seconds_since(start);
    total += s;
    worst = std::max(worst, s);
    fmt::print("  compile {} of {}: {:.3f} s\n", i + 1, compiles, s);
  }
  fmt::print("cold compile of {} ({} bytes of source{}): mean {:.3f} s, max {:.3f} s over {} (goal < 1 s)\n", name,
             heavy(0).source.size(), pch ? ", -pch" : "", total / compiles, worst, compiles);

  const jit::KernelSpec spec = heavy(0);
  jit::clear_memory_cache();
  auto start = std::chrono::steady_clock::now();
  jit::get_kernel(spec);
  fmt::print("disk-cache hit (read + checksum of the cubin): {:.1f} us\n", seconds_since(start) * 1e6);

  start = std::chrono::steady_clock::now();
  for (int i = 0; i < hit_calls; ++i) jit::get_kernel(spec);
  fmt::print("memory-cache hit, per get_kernel call: {:.3f} us over {} calls (goal < 5 us)\n",
             seconds_since(start) * 1e6 / hit_calls, hit_calls);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

static CommandRegistrar registrar([](CLI::App& root) {
  CLI::App* jit = root.add_subcommand("jit", "Warm, inspect and clear the JIT kernel cache (DG_JIT_CACHE_DIR)");
  jit->require_subcommand(1);

  auto args = std::make_shared<PrecompileArgs>();
  CLI::App* pre = jit->add_subcommand(
      "precompile", "Compile the kernels for shapes (or a suite) into the disk cache on all cores; no GPU needed");
  pre->add_option("--m", args->m, "Rows of A and D");
  pre->add_option("--n", args->n, "Columns of D");
  pre->add_option("--k", args->k, "Reduction size");
  pre->add_option("--suite", args->suite, "A shape suite instead of one shape (e.g. deepseek)");
  pre->add_option("--dtype", args->dtype, "Input dtype")->capture_default_str();
  pre->add_option("--out-dtype", args->out_dtype, "Output dtype (bf16 or fp32)")->capture_default_str();
  pre->add_option("--layout", args->layouts, "Layouts to compile (nt nn tn tt)")->capture_default_str();
  pre->add_option("--hw", args->hw, "Hopper preset the heuristics plan for (h200, h100-sxm, h800, h20)")
      ->capture_default_str();
  pre->add_option("--num-sms", args->num_sms, "SMs the kernels will run on (0 = the preset's)")->capture_default_str();
  pre->add_flag("--test-kernels", args->test_kernels, "Compile the JIT's small test kernels instead");
  pre->add_option("--salt", args->salt, "With --test-kernels: makes the kernels' keys unique (tests)");
  pre->add_option("--jobs,-j", args->jobs, "Parallel compiles (0 = all cores)")->capture_default_str();
  pre->callback([args] { run_precompile(*args); });

  jit->add_subcommand("info", "Where the cache is, how many kernels it holds and their size")->callback([] {
    const jit::CacheInfo info = jit::cache_info();
    fmt::print("directory: {}\nentries:   {}\nbytes:     {}\nwritable:  {}\ncompiler:  {}\n", info.directory,
               info.entries, info.bytes, info.writable ? "yes" : "no",
               env().jit_use_nvrtc ? "NVRTC" : "NVCC " + env().jit_nvcc_compiler);
  });

  jit->add_subcommand("clear", "Delete every cached kernel")->callback([] {
    const std::size_t removed = jit::clear_disk_cache();
    fmt::print("removed {} kernels from {}\n", removed, env().jit_cache_dir);
  });

  auto compiles = std::make_shared<int>(3);
  auto hit_calls = std::make_shared<int>(200000);
  auto pch = std::make_shared<bool>(false);
  CLI::App* bench = jit->add_subcommand(
      "bench", "Cold compile time of the heaviest kernel and the host cost of a cache hit (a throwaway cache)");
  bench->add_option("--compiles", *compiles, "Cold compiles to time")->capture_default_str();
  bench->add_option("--hit-calls", *hit_calls, "Cache-hit calls to time")->capture_default_str();
  bench->add_flag("--pch", *pch, "Pass NVRTC's automatic precompiled-header flag (-pch)");
  bench->callback([=] { run_jit_bench(*compiles, *hit_calls, *pch); });
});

}  // namespace tilegemm::cli
