// The ladder without a GPU: every rung's description and the ledger's predicted traffic for one shape.
#include <fmt/format.h>

#include "bench/bench.hpp"
#include "ladder/ladder.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::ladder {

bool LadderReport::all_passed() const {
  bool any = false;
  for (const LadderRow& row : rows) {
    if (!row.measured && row.error.empty()) continue;
    if (!row.passed) return false;
    any = true;
  }
  return any;
}

LadderReport ledger_report(const LadderOptions& options, const HardwareModel& hw) {
  TILEGEMM_REQUIRE(options.m > 0, "--m", "a positive size", std::to_string(options.m));
  TILEGEMM_REQUIRE(options.n > 0, "--n", "a positive size", std::to_string(options.n));
  TILEGEMM_REQUIRE(options.k > 0 && options.k % 8 == 0, "--k",
                   "a positive multiple of 8 (the rungs load 16-byte chunks along K)", std::to_string(options.k));
  TILEGEMM_REQUIRE(options.warmup_ms >= 0, "--warmup-ms", "a budget >= 0", fmt::format("{}", options.warmup_ms));
  TILEGEMM_REQUIRE(options.rep_ms > 0, "--reps-ms", "a positive budget", fmt::format("{}", options.rep_ms));
  TILEGEMM_REQUIRE(options.max_diff > 0, "--max-diff", "a positive bound", fmt::format("{}", options.max_diff));
  LadderReport report;
  report.shape.m = options.m, report.shape.n = options.n, report.shape.k = options.k;
  report.hw_name = hw.name;
  report.max_diff = options.max_diff;
  report.commit = report_commit(TILEGEMM_SOURCE_DIR);
  report.date_utc = utc_now_iso8601();
  for (int r = 0; r < kNumRungs; ++r) {
    LadderRow row;
    row.rung = rung_info_for(r, report.shape, hw);
    row.traffic = predicted_traffic(r, report.shape, hw);
    report.rows.push_back(row);
  }
  return report;
}

}  // namespace tilegemm::ladder
