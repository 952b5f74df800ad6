// `tilegemm bench --compare A.json B.json`: per-shape ratios of our medians, their geometric mean, and which
// differences are within the run-to-run spread the reports themselves measured (a number without its
// spread cannot be compared). The cuBLAS ratios ride along as a control: if the baseline moved
// too, the machine changed, not the kernel.
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "bench/bench.hpp"

namespace tilegemm {

namespace {

auto match_key(const BenchRow& r) {
  return std::tie(r.kind, r.groups, r.m, r.n, r.k, r.layout, r.dtype, r.out_dtype);
}

std::string row_name(const BenchRow& r) {
  return fmt::format("{} {} {} {}", r.kind, r.shape_label(), r.layout, r.out_dtype);
}

bool ours_usable(const BenchRow& r) {
  return r.has_ours() && r.error.empty();
}

void note_if_differs(std::vector<std::string>& notes, const char* what, const std::string& a, const std::string& b) {
  if (a != b) notes.push_back(fmt::format("{} differs: A {} vs B {}", what, a, b));
}

std::vector<std::string> environment_differences(const BenchEnvironment& a, const BenchEnvironment& b) {
  std::vector<std::string> notes;
  note_if_differs(notes, "GPU", a.gpu_name, b.gpu_name);
  note_if_differs(notes, "timer", a.timer, b.timer);
  note_if_differs(notes, "flush bytes", std::to_string(a.flush_bytes), std::to_string(b.flush_bytes));
  const auto flush_words = [](const std::string& mode) { return mode == "read" ? "read-only pass" : "zero-fill"; };
  note_if_differs(notes, "flush", flush_words(a.flush), flush_words(b.flush));
  note_if_differs(notes, "warm-up/rep budget", fmt::format("{}/{} ms", a.warmup_ms, a.rep_ms),
                  fmt::format("{}/{} ms", b.warmup_ms, b.rep_ms));
  note_if_differs(notes, "SM limit", std::to_string(a.num_sms), std::to_string(b.num_sms));
  note_if_differs(notes, "driver", std::to_string(a.driver_version), std::to_string(b.driver_version));
  note_if_differs(notes, "cuBLASLt", std::to_string(a.cublaslt_version), std::to_string(b.cublaslt_version));
  return notes;
}

double geomean(double log_sum, int count) {
  return count > 0 ? std::exp(log_sum / count) : 0;
}

}  // namespace

bool within_noise(double ratio, double spread_a, double spread_b) {
  return std::abs(ratio - 1.0) < std::max(spread_a, spread_b);
}

ReportComparison compare_reports(const BenchReport& a, const BenchReport& b) {
  ReportComparison c;
  c.environment_notes = environment_differences(a.env, b.env);
  std::vector<bool> used(b.rows.size(), false);
  double log_sum = 0, baseline_log_sum = 0;
  for (const BenchRow& ra : a.rows) {
    std::size_t j = 0;
    while (j < b.rows.size() && (used[j] || match_key(b.rows[j]) != match_key(ra))) ++j;
    if (j == b.rows.size()) {
      c.only_in_a.push_back(row_name(ra));
      continue;
    }
    used[j] = true;
    const BenchRow& rb = b.rows[j];
    CompareRow row;
    row.kind = ra.kind, row.shape = ra.shape_label(), row.layout = ra.layout, row.out_dtype = ra.out_dtype;
    row.config_a = ra.config, row.config_b = rb.config;
    if (ours_usable(ra) && ours_usable(rb)) {
      row.has_ours = true;
      row.a_us = ra.ours.median_us, row.b_us = rb.ours.median_us;
      row.ratio = row.a_us / row.b_us;
      row.spread = std::max(relative_spread(ra.ours), relative_spread(rb.ours));
      row.noise = within_noise(row.ratio, relative_spread(ra.ours), relative_spread(rb.ours));
      ++c.compared;
      log_sum += std::log(row.ratio);
      if (!row.noise) ++c.beyond_noise, ++(row.ratio > 1 ? c.faster : c.slower);
    } else {
      const BenchRow& bad = ours_usable(ra) ? rb : ra;
      const char* which = ours_usable(ra) ? "B" : "A";
      c.skipped.push_back(
          fmt::format("{}: {} has {}", row.shape, which,
                      bad.error.empty() ? std::string("no numbers of ours") : "an error (" + bad.error + ")"));
    }
    if (ra.has_cublas() && rb.has_cublas()) {
      row.has_baseline = true;
      row.baseline_ratio = ra.cublas.median_us / rb.cublas.median_us;
      row.baseline_spread = std::max(relative_spread(ra.cublas), relative_spread(rb.cublas));
      row.baseline_noise = within_noise(row.baseline_ratio, relative_spread(ra.cublas), relative_spread(rb.cublas));
      ++c.baseline_compared;
      baseline_log_sum += std::log(row.baseline_ratio);
    }
    c.rows.push_back(std::move(row));
  }
  for (std::size_t j = 0; j < b.rows.size(); ++j)
    if (!used[j]) c.only_in_b.push_back(row_name(b.rows[j]));
  c.geomean_ratio = geomean(log_sum, c.compared);
  c.baseline_geomean_ratio = geomean(baseline_log_sum, c.baseline_compared);
  return c;
}

namespace {

std::string verdict(double ratio, bool noise) {
  if (noise) return "noise";
  return ratio > 1 ? "**B faster**" : "**B slower**";
}

}  // namespace

std::string comparison_to_markdown(const ReportComparison& c, const std::string& name_a, const std::string& name_b) {
  std::string out = fmt::format("# tilegemm bench --compare\n\nA = {}\nB = {}\n\n", name_a, name_b);
  for (const auto& note : c.environment_notes) out += fmt::format("note: {}\n", note);
  if (!c.environment_notes.empty()) out += "\n";
  out +=
      "ratio = A median / B median (> 1: B is faster). A difference is noise when |ratio − 1| is below the "
      "larger relative spread (stddev / median) of the two rows. cuBLAS is the control: it should not "
      "move.\n\n"
      "| shape | layout | config A | config B | A µs | B µs | ratio | spread | verdict | cuBLAS ratio | "
      "cuBLAS |\n"
      "|---|---|---|---|---:|---:|---:|---:|---|---:|---|\n";
  for (const CompareRow& r : c.rows) {
    const auto cfg = [](const std::string& s) { return s.empty() ? std::string("-") : "`" + s + "`"; };
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.shape, r.layout, cfg(r.config_a),
        r.config_b == r.config_a ? std::string("same") : cfg(r.config_b),
        r.has_ours ? fmt::format("{:.1f}", r.a_us) : "-", r.has_ours ? fmt::format("{:.1f}", r.b_us) : "-",
        r.has_ours ? fmt::format("{:.3f}×", r.ratio) : "-", r.has_ours ? fmt::format("±{:.1f}%", 100 * r.spread) : "-",
        r.has_ours ? verdict(r.ratio, r.noise) : "-", r.has_baseline ? fmt::format("{:.3f}×", r.baseline_ratio) : "-",
        r.has_baseline ? (r.baseline_noise ? "noise" : "moved") : "-");
  }
  out += "\n";
  if (c.compared > 0)
    out += fmt::format(
        "Geometric mean ratio (ours, A/B): **{:.3f}×** over {} shapes; {} beyond noise ({} faster in B, {} "
        "slower in B).\n",
        c.geomean_ratio, c.compared, c.beyond_noise, c.faster, c.slower);
  else
    out += "No shape has our numbers in both reports.\n";
  if (c.baseline_compared > 0)
    out += fmt::format("Geometric mean ratio (cuBLAS, A/B): {:.3f}× over {} shapes.\n", c.baseline_geomean_ratio,
                       c.baseline_compared);
  auto list = [&out](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out += fmt::format("\n{}:\n", title);
    for (const auto& item : items) out += fmt::format("- {}\n", item);
  };
  list("Only in A", c.only_in_a);
  list("Only in B", c.only_in_b);
  list("Not compared (ours)", c.skipped);
  return out;
}

}  // namespace tilegemm
