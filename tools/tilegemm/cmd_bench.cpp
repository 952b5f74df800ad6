// `tilegemm bench`: times our BF16 GEMMs against cuBLASLt on a suite of shapes (or one --m/--n/--k shape)
// and prints a Markdown report; --json / --md also write it to files. Arguments are checked before the
// GPU is looked for, so a bad argument is exit 2 on any machine and a missing GPU is exit 1.
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "command.hpp"
#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::cli {
namespace {

struct BenchArgs {
  std::string suite;
  std::optional<int> m, n, k;
  std::string dtype = "bf16";
  std::string layout = "nt";
  std::string out_dtype = "bf16";
  double warmup_ms = 25;
  double rep_ms = 200;
  std::string json_path, md_path;
  bool baseline_only = false;
  int num_sms = 0;
  int device = 0;
};

SuiteOptions suite_options_from(const BenchArgs& args) {
  SuiteOptions options;
  const bool custom = args.m || args.n || args.k;
  if (custom) {
    TILEGEMM_REQUIRE(args.suite.empty(), "--suite", "no suite when --m/--n/--k give a shape",
                     fmt::format("'{}'", args.suite));
    TILEGEMM_REQUIRE(args.m && args.n && args.k, "--m/--n/--k", "all three sizes together",
                     fmt::format("--m {} --n {} --k {}", args.m ? std::to_string(*args.m) : "(missing)",
                                 args.n ? std::to_string(*args.n) : "(missing)",
                                 args.k ? std::to_string(*args.k) : "(missing)"));
    options.suite_name = "custom";
    options.shapes = {BenchShape{GemmType::kNormal, 1, *args.m, *args.n, *args.k}};
  } else {
    options.suite_name = args.suite.empty() ? "deepseek" : args.suite;
    options.shapes = suite_shapes(options.suite_name, "--suite");
  }
  TILEGEMM_REQUIRE(parse_dtype(args.dtype, "--dtype") == DType::kBFloat16, "--dtype",
                   "bf16 (the only input type benchmarked so far)", fmt::format("'{}'", args.dtype));
  options.layout = parse_layout(args.layout, "--layout");
  options.out_dtype = parse_dtype(args.out_dtype, "--out-dtype");
  options.timing.warmup_ms = args.warmup_ms;
  options.timing.rep_ms = args.rep_ms;
  options.baseline_only = args.baseline_only;
  options.num_sms = args.num_sms;
  options.device = args.device;
  validate_suite_options(options);
  return options;
}

void write_file(const std::string& path, const std::string& text, const char* argument) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument(argument, "a writable file path", fmt::format("'{}'", path));
  out << text;
  if (!out.flush()) throw RuntimeError(fmt::format("{}: writing '{}' failed", argument, path));
}

void run_bench(const BenchArgs& args) {
  SuiteOptions options = suite_options_from(args);
  options.on_row = [](const BenchRow& row) {
    fmt::print(stderr, "bench: {:<10} {:<22} ours {:>9} µs  cuBLAS {:>9.1f} µs{}\n", row.kind,
               row.shape_label(),
               row.has_ours() ? fmt::format("{:.1f}", row.ours.median_us) : std::string("-"),
               row.cublas.median_us, row.error.empty() ? "" : "  (error: " + row.error + ")");
  };
  const BenchReport report = run_suite(options);
  const std::string markdown = report_to_markdown(report);
  fmt::print("{}", markdown);
  if (!args.md_path.empty()) write_file(args.md_path, markdown, "--md");
  if (!args.json_path.empty()) write_file(args.json_path, report_to_json(report), "--json");
  const BenchSummary summary = summarize_rows(report.rows);
  if (summary.errors > 0)
    throw RuntimeError(fmt::format("{} of {} shapes reported an error (listed at the end of the report)",
                                   summary.errors, report.rows.size()));
}

const CommandRegistrar kRegistrar([](CLI::App& root) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bench", "Time our BF16 GEMMs and cuBLASLt on a suite of shapes (L2 flushed, CUDA events, medians)");
  cmd->add_option("--suite", args->suite, "deepseek (default), grouped or all");
  cmd->add_option("--m", args->m, "One custom shape: rows of A and D (with --n and --k)");
  cmd->add_option("--n", args->n, "One custom shape: columns of D");
  cmd->add_option("--k", args->k, "One custom shape: the reduction size");
  cmd->add_option("--dtype", args->dtype, "Input dtype (bf16)")->capture_default_str();
  cmd->add_option("--layout", args->layout, "nt, nn, tn or tt (grouped shapes: nt or nn)")
      ->capture_default_str();
  cmd->add_option("--out-dtype", args->out_dtype, "bf16 or fp32")->capture_default_str();
  cmd->add_option("--warmup-ms", args->warmup_ms, "Warm-up budget per measurement, ms")
      ->capture_default_str();
  cmd->add_option("--rep-ms", args->rep_ms, "Timed budget per measurement, ms")->capture_default_str();
  cmd->add_option("--json", args->json_path, "Also write the report as JSON to FILE");
  cmd->add_option("--md", args->md_path, "Also write the Markdown report to FILE");
  cmd->add_flag("--baseline-only", args->baseline_only, "Time cuBLASLt only");
  cmd->add_option("--num-sms", args->num_sms, "SMs our kernels may use (0 = all)")->capture_default_str();
  cmd->add_option("--device", args->device, "CUDA device index")->capture_default_str();
  cmd->callback([args] { run_bench(*args); });
});

}  // namespace
}  // namespace tilegemm::cli
