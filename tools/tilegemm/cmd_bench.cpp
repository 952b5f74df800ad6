// `tilegemm bench`: times our BF16 (--dtype bf16) or FP8 1D2D (--dtype fp8) GEMMs against cuBLASLt on a suite
// of shapes (or one --m/--n/--k shape) and prints a Markdown report; --json / --md / --report also write it to files
// (--report adds the roofline plot). --from-json re-renders a recorded report and --compare A.json B.json compares two,
// both without a GPU. Arguments are checked before the GPU is looked for, so a bad argument is exit 2 on any machine
// and a missing GPU is exit 1.
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "bench/progress.hpp"
#include "command.hpp"
#include "input_file.hpp"
#include "shared_checks.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/weight_quant.hpp"

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
  std::string timer = "cuda-events";
  std::string flush = "zero";
  std::string json_path, md_path, report_dir;
  std::string from_json;
  std::vector<std::string> compare;  // exactly two report files
  bool baseline_only = false;
  bool read_b = false;
  int num_sms = 0;
  std::string sf_layout = "mn-major";
  std::string weight;  // --weight: int4, int8 or mxfp4 (weight-only rows)
  int group_size = 128;
  bool zeros = false;
  int device = 0;
};

SuiteOptions suite_options_from(const BenchArgs& args) {
  SuiteOptions options;
  const bool custom = args.m || args.n || args.k;
  if (custom) {
    TILEGEMM_REQUIRE(args.suite.empty(), "--suite", "no suite when --m/--n/--k give a shape",
                     fmt::format("'{}'", args.suite));
    TILEGEMM_REQUIRE(
        args.m && args.n && args.k, "--m/--n/--k", "all three sizes together",
        fmt::format("--m {} --n {} --k {}", args.m ? std::to_string(*args.m) : "(missing)",
                    args.n ? std::to_string(*args.n) : "(missing)", args.k ? std::to_string(*args.k) : "(missing)"));
    options.suite_name = "custom";
    options.shapes = {BenchShape{GemmType::kNormal, 1, *args.m, *args.n, *args.k}};
  } else {
    options.suite_name = args.suite.empty() ? "deepseek" : args.suite;
    options.shapes = suite_shapes(options.suite_name, "--suite");
  }
  options.dtype = parse_dtype(args.dtype, "--dtype");
  TILEGEMM_REQUIRE(options.dtype == DType::kBFloat16 || options.dtype == DType::kFloat8E4M3, "--dtype",
                   "bf16 or fp8 (e4m3)", fmt::format("'{}'", args.dtype));
  options.layout = parse_layout(args.layout, "--layout");
  options.out_dtype = parse_dtype(args.out_dtype, "--out-dtype");
  options.timing.timer = parse_timer_backend(args.timer, "--timer");
  options.timing.flush = parse_flush_mode(args.flush, "--flush");
  options.timing.warmup_ms = args.warmup_ms;
  options.timing.rep_ms = args.rep_ms;
  options.baseline_only = args.baseline_only;
  options.time_b_read = args.read_b;
  options.num_sms = args.num_sms;
  TILEGEMM_REQUIRE(args.sf_layout == "mn-major" || args.sf_layout == "row-major", "--sf-layout",
                   "mn-major or row-major", fmt::format("'{}'", args.sf_layout));
  TILEGEMM_REQUIRE(args.sf_layout == "mn-major" || options.dtype == DType::kFloat8E4M3, "--sf-layout",
                   "mn-major unless --dtype is fp8 (only FP8 GEMMs take scales)", fmt::format("'{}'", args.sf_layout));
  options.row_major_scales = args.sf_layout == "row-major";
  if (!args.weight.empty()) options.weight = parse_weight_format(args.weight, "--weight");
  options.weight_group_size = args.group_size;
  options.weight_zeros = args.zeros;
  options.device = args.device;
  // The weight's own checks name the packing's fields: name the options that set them.
  const OptionNames names = {{"group_size", "--group-size"}, {"k", "--k"}, {"n", "--n"}, {"zeros", "--zeros"}};
  with_option_names(names, [&] { validate_suite_options(options); });
  return options;
}

BenchReport read_report(const std::string& path, const char* argument) {
  return report_from_json(read_input_file(path, argument, "a readable bench report (JSON)"),
                          fmt::format("{} '{}'", argument, path));
}

// Fails before a long run rather than after it.
void ensure_report_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InvalidArgument("--report", "a directory that exists or can be created",
                          fmt::format("'{}'{}", dir, ec ? " (" + ec.message() + ")" : ""));
}

std::string shape_label(const BenchShape& s) {
  if (s.type == GemmType::kNormal) return fmt::format("{}x{}x{}", s.m, s.n, s.k);
  return fmt::format("{}x{}x{}x{}", s.groups, s.m, s.n, s.k);
}

std::string row_detail(const BenchRow& row) {
  return fmt::format(
      "bench: {:<10} {:<22} ours {:>9} µs  cuBLAS {:>9.1f} µs{}{}{}", row.kind, row.shape_label(),
      row.has_ours() ? fmt::format("{:.1f}", row.ours.median_us) : std::string("-"), row.cublas.median_us,
      row.has_cublas_per_tensor() ? fmt::format("  per-tensor {:.1f} µs", row.cublas_per_tensor.median_us)
                                  : std::string(),
      row.has_b_read() ? fmt::format("  read B {:.1f} µs", row.b_read.median_us) : std::string(),
      row.error.empty() ? "" : "  (error: " + row.error + ")");
}

void run_compare(const BenchArgs& args) {
  TILEGEMM_REQUIRE(args.compare.size() == 2, "--compare", "two report files (A.json B.json)",
                   std::to_string(args.compare.size()) + " file(s)");
  const BenchReport a = read_report(args.compare[0], "--compare");
  const BenchReport b = read_report(args.compare[1], "--compare");
  const auto describe = [](const std::string& path, const BenchReport& r) {
    return fmt::format("{} (suite {}, {}, commit {}, {}, {})", path, r.suite, r.env.gpu_name, r.env.commit, r.env.timer,
                       r.env.date_utc);
  };
  fmt::print("{}",
             comparison_to_markdown(compare_reports(a, b), describe(args.compare[0], a), describe(args.compare[1], b)));
}

// Prints the report and writes every file asked for.
void emit_report(const BenchArgs& args, const BenchReport& report) {
  const std::string markdown = report_to_markdown(report);
  fmt::print("{}", markdown);
  if (!args.md_path.empty()) write_file(args.md_path, markdown, "--md");
  if (!args.json_path.empty()) write_file(args.json_path, report_to_json(report), "--json");
  if (args.report_dir.empty()) return;
  const ReportFiles files = write_report_dir(report, args.report_dir, "--report");
  if (files.plotted)
    fmt::print(stderr, "bench: report in {}: report.json, report.md, roofline.png, roofline.svg\n", args.report_dir);
  else
    fmt::print(stderr, "bench: warning: roofline plot skipped ({}); report.json and report.md are in {}\n",
               files.plot_skipped, args.report_dir);
}

void run_bench(const BenchArgs& args) {
  if (!args.compare.empty()) return run_compare(args);
  if (!args.from_json.empty()) {
    if (!args.report_dir.empty()) ensure_report_dir(args.report_dir);
    return emit_report(args, read_report(args.from_json, "--from-json"));
  }
  SuiteOptions options = suite_options_from(args);
  if (!args.report_dir.empty()) ensure_report_dir(args.report_dir);
  auto progress = std::make_shared<bench_detail::Progress>(static_cast<int>(options.shapes.size()), stderr,
                                                           bench_detail::Progress::is_terminal(stderr));
  options.on_shape_start = [progress](std::size_t, const BenchShape& shape) { progress->begin(shape_label(shape)); };
  options.on_row = [progress](const BenchRow& row) { progress->end(row_detail(row)); };
  const BenchReport report = run_suite(options);
  emit_report(args, report);
  const BenchSummary summary = summarize_rows(report.rows);
  if (summary.errors > 0)
    throw RuntimeError(fmt::format("{} of {} shapes reported an error (listed at the end of the report)",
                                   summary.errors, report.rows.size()));
}

const CommandRegistrar kBenchRegistrar([](CLI::App& root) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bench",
      "Time our BF16 or FP8 GEMMs and cuBLASLt on a suite of shapes (L2 flushed, medians); compare two reports");
  auto* suite = cmd->add_option("--suite", args->suite,
                                "deepseek (default), decode (the same weights at M = 1, 8, 16, 32), grouped, masked or "
                                "all (deepseek + grouped + masked)");
  auto* m = cmd->add_option("--m", args->m, "One custom shape: rows of A and D (with --n and --k)");
  auto* n = cmd->add_option("--n", args->n, "One custom shape: columns of D");
  auto* k = cmd->add_option("--k", args->k, "One custom shape: the reduction size");
  auto* dtype = cmd->add_option("--dtype", args->dtype,
                                "Input dtype: bf16, or fp8 (e4m3 with 1x128/128x128 fp32 scales; vs cuBLASLt "
                                "block-scaled, plus cuBLASLt per-tensor)")
                    ->capture_default_str();
  auto* layout =
      cmd->add_option("--layout", args->layout, "nt, nn, tn or tt (grouped shapes: nt or nn)")->capture_default_str();
  auto* out_dtype = cmd->add_option("--out-dtype", args->out_dtype, "bf16 or fp32")->capture_default_str();
  auto* warmup =
      cmd->add_option("--warmup-ms", args->warmup_ms, "Warm-up budget per measurement, ms")->capture_default_str();
  auto* rep = cmd->add_option("--rep-ms", args->rep_ms, "Timed budget per measurement, ms")->capture_default_str();
  auto* timer = cmd->add_option("--timer", args->timer,
                                "cuda-events (events: flush + events around each call), cuda-graph "
                                "(graph: calls replayed from a CUDA graph, no launch gaps) or cupti-kernel "
                                "(kernel: flush + call, the GPU's kernel durations from CUPTI, as DeepGEMM's "
                                "bench_kineto)")
                    ->capture_default_str();
  auto* flush = cmd->add_option("--flush", args->flush,
                                "L2 flush before each call: zero (memset, as do_bench; leaves the L2 dirty, so "
                                "memory-bound calls pay the write-back) or read (a read-only pass; the L2 left clean)")
                    ->capture_default_str();
  cmd->add_option("--json", args->json_path, "Also write the report as JSON to FILE");
  cmd->add_option("--md", args->md_path, "Also write the Markdown report to FILE");
  cmd->add_option("--report", args->report_dir,
                  "Write report.json, report.md and the roofline plot (roofline.png, roofline.svg) to DIR");
  auto* baseline_only = cmd->add_flag("--baseline-only", args->baseline_only, "Time cuBLASLt only");
  auto* read_b = cmd->add_flag("--read-b", args->read_b,
                               "Also time a kernel that only reads B under the same timer: at small M the "
                               "fastest any GEMM of the shape can run (column 'read B')");
  auto* num_sms =
      cmd->add_option("--num-sms", args->num_sms, "SMs our kernels may use (0 = all)")->capture_default_str();
  auto* sf_layout = cmd->add_option("--sf-layout", args->sf_layout,
                                    "fp8: our per-token A scales mn-major (TMA-aligned) or row-major [M, K/128], as "
                                    "DeepGEMM's per_token_cast_to_fp8 returns them")
                        ->capture_default_str();
  auto* weight = cmd->add_option("--weight", args->weight,
                                 "Weight-only rows: bf16 A times W packed as int4, int8 or mxfp4 (wq_gemm_nt), "
                                 "against cuBLASLt bf16 on W dequantised (dense shapes, --layout nt)");
  auto* group_size = cmd->add_option("--group-size", args->group_size, "--weight int4: the group size (32, 64 or 128)")
                         ->capture_default_str();
  auto* zeros = cmd->add_flag("--zeros", args->zeros, "--weight int4: with zero points");
  auto* device = cmd->add_option("--device", args->device, "CUDA device index")->capture_default_str();
  // Options that measure make no sense when nothing is measured.
  const std::vector<CLI::Option*> measuring = {suite,     m,      n,          k,     dtype,         layout, out_dtype,
                                               warmup,    rep,    timer,      flush, baseline_only, read_b, num_sms,
                                               sf_layout, weight, group_size, zeros, device};
  auto* from_json = cmd->add_option("--from-json", args->from_json,
                                    "Re-render a recorded report (FILE) instead of measuring: no GPU needed");
  auto* compare = cmd->add_option("--compare", args->compare,
                                  "Compare two reports A.json B.json: per-shape ratios A/B, geometric mean, "
                                  "differences within the measured spread flagged as noise")
                      ->expected(2);
  for (CLI::Option* o : measuring) from_json->excludes(o), compare->excludes(o);
  compare->excludes(from_json);
  compare->excludes("--json")->excludes("--md")->excludes("--report");
  cmd->callback([args] { run_bench(*args); });
});

}  // namespace
}  // namespace tilegemm::cli
