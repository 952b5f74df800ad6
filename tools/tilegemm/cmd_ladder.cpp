// `tilegemm ladder --m --n --k`: the five-rung teaching ladder (naive → smem+mma → cp.async → swizzle+raster
// → TMA+wgmma) on one problem: each rung checked against the float64 reference and timed (CUDA events, L2
// flush, median), with the ledger's predicted traffic and what the rung bought over the previous one.
// Without a suitable GPU it prints the ledger-only table and says why, exiting 0.
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "command.hpp"
#include "input_file.hpp"
#include "ladder/ladder.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm::cli {
namespace {

struct LadderArgs {
  std::optional<int> m, n, k;
  double warmup_ms = 25;
  double rep_ms = 200;
  std::string hw = "h200";
  std::string json_path, md_path;
  std::uint64_t seed = 20251130;
  int device = 0;
};

void run_ladder_command(const LadderArgs& args) {
  TILEGEMM_REQUIRE(
      args.m && args.n && args.k, "--m/--n/--k", "all three sizes",
      fmt::format("--m {} --n {} --k {}", args.m ? std::to_string(*args.m) : "(missing)",
                  args.n ? std::to_string(*args.n) : "(missing)", args.k ? std::to_string(*args.k) : "(missing)"));
  ladder::LadderOptions options;
  options.m = *args.m, options.n = *args.n, options.k = *args.k;
  options.warmup_ms = args.warmup_ms;
  options.rep_ms = args.rep_ms;
  options.seed = args.seed;
  options.device = args.device;
  // Arguments are checked (and the ledger table built) before the GPU is looked for: a bad argument is exit 2
  // on any machine.
  ladder::LadderReport report = ladder::ledger_report(options, hardware_preset(args.hw, "--hw"));
  const std::string why = ladder::why_no_ladder_gpu(args.device);
  if (why.empty()) {
    report = ladder::run_ladder(options);
  } else {
    report.note = fmt::format("Not measured: {}. The table shows the ledger's predictions only.", why);
    fmt::print(stderr, "ladder: {}; printing the ledger's predictions only (nothing measured)\n", why);
  }
  const std::string markdown = ladder::report_to_markdown(report);
  fmt::print("{}", markdown);
  if (!args.md_path.empty()) write_file(args.md_path, markdown, "--md");
  if (!args.json_path.empty()) write_file(args.json_path, ladder::report_to_json(report), "--json");
  if (why.empty() && !report.all_passed())
    throw RuntimeError("a rung failed its reference check or did not run (see the table and the errors)");
}

const CommandRegistrar kLadderRegistrar([](CLI::App& root) {
  auto args = std::make_shared<LadderArgs>();
  CLI::App* cmd = root.add_subcommand(
      "ladder", "Run the five GEMM rungs (naive -> tensor cores -> cp.async -> swizzle -> TMA+wgmma) on one shape");
  cmd->add_option("--m", args->m, "Rows of A and D")->required();
  cmd->add_option("--n", args->n, "Columns of D (rows of B)")->required();
  cmd->add_option("--k", args->k, "Reduction size (a multiple of 8)")->required();
  cmd->add_option("--reps-ms", args->rep_ms, "Timed budget per rung, ms")->capture_default_str();
  cmd->add_option("--warmup-ms", args->warmup_ms, "Warm-up budget per rung, ms")->capture_default_str();
  cmd->add_option("--hw", args->hw, "Ledger hardware preset when no GPU is measured")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--device", args->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--json", args->json_path, "Also write the table as JSON to FILE");
  cmd->add_option("--md", args->md_path, "Also write the Markdown table to FILE");
  cmd->callback([args] { run_ladder_command(*args); });
});

}  // namespace
}  // namespace tilegemm::cli
