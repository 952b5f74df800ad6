// The ladder's table as Markdown (what `tilegemm ladder` prints) and as JSON.
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ladder/ladder.hpp"

namespace tilegemm::ladder {

namespace {

std::string bytes_label(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.1f} kB", bytes / 1e3);
}

std::string tile_label(const RungInfo& r) {
  if (r.index == 0) return "16x16 outputs";
  return fmt::format("{}x{}x{} s{}", r.block_m, r.block_n, r.block_k, r.stages);
}

std::string check_label(const LadderRow& row) {
  if (!row.error.empty() && row.calc_diff < 0) return "error";
  if (row.calc_diff < 0) return "–";
  return row.passed ? "ok" : "FAIL";
}

}  // namespace

std::string report_to_markdown(const LadderReport& r) {
  std::string out = fmt::format("## GEMM ladder: M={} N={} K={} (bf16 A[M,K]·B[N,K]ᵀ, fp32 accumulate, bf16 D)\n\n",
                                r.shape.m, r.shape.n, r.shape.k);
  out += fmt::format("GPU: {} · ledger hardware: {} · commit {} · {}\n", r.gpu_name.empty() ? "none" : r.gpu_name,
                     r.hw_name, r.commit, r.date_utc);
  if (!r.gpu_name.empty())
    out += fmt::format(
        "Timing: CUDA events, L2 flushed before each call, median. Check: calc_diff against the "
        "float64 reference on {} of {} rows, bound {:.0e}.\n",
        r.checked_rows, r.shape.m, r.max_diff);
  if (!r.note.empty()) out += r.note + "\n";
  out +=
      "\n| rung | kernel | tile | TFLOP/s | median µs | × previous | loads (ledger) | DRAM est. | calc_diff | check |\n"
      "|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const LadderRow& row : r.rows) {
    const double over = row.traffic.minimum_bytes > 0 ? row.traffic.load_bytes / row.traffic.minimum_bytes : 0;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} ({:.0f}× min) | {} | {} | {} |\n", row.rung.index,
                       row.rung.name, tile_label(row.rung), row.measured ? fmt::format("{:.1f}", row.tflops) : "–",
                       row.measured ? fmt::format("{:.1f}", row.stats.median_us) : "–",
                       row.speedup > 0 ? fmt::format("{:.2f}×", row.speedup) : "–", bytes_label(row.traffic.load_bytes),
                       over, bytes_label(row.traffic.dram_bytes),
                       row.calc_diff >= 0 || std::isnan(row.calc_diff) ? fmt::format("{:.2e}", row.calc_diff) : "–",
                       check_label(row));
  }
  out += "\nWhat each rung adds (and the bottleneck of the previous rung it removes):\n\n";
  for (const LadderRow& row : r.rows) {
    out += fmt::format("- **{} {}**: {}", row.rung.index, row.rung.name, row.rung.idea);
    if (!row.rung.removes.empty()) out += fmt::format(" — removes: {}", row.rung.removes);
    if (row.speedup > 0) out += fmt::format(" — bought {:.2f}×", row.speedup);
    out += "\n";
  }
  out +=
      "\nloads (ledger): operand bytes the CTAs request, 2·M·N·K·2 B for rung 0 and 2·M·N·K·(1/bm + 1/bn) B for "
      "tiled rungs. DRAM est.: one wave of resident CTAs reads its A and B panels once (+ D); rasterisation "
      "changes it, swizzling and pipelining do not (they change how fast the bytes are consumed).\n";
  bool errors = false;
  for (const LadderRow& row : r.rows) errors = errors || !row.error.empty();
  if (errors) {
    out += "\nErrors:\n\n";
    for (const LadderRow& row : r.rows)
      if (!row.error.empty()) out += fmt::format("- rung {}: {}\n", row.rung.index, row.error);
  }
  return out;
}

std::string report_to_json(const LadderReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const LadderRow& row : r.rows) {
    nlohmann::json j = {{"rung", row.rung.index},
                        {"name", row.rung.name},
                        {"idea", row.rung.idea},
                        {"removes", row.rung.removes},
                        {"block_m", row.rung.block_m},
                        {"block_n", row.rung.block_n},
                        {"block_k", row.rung.block_k},
                        {"stages", row.rung.stages},
                        {"threads", row.rung.threads},
                        {"smem_bytes", row.rung.smem_bytes},
                        {"predicted_load_bytes", row.traffic.load_bytes},
                        {"predicted_dram_bytes", row.traffic.dram_bytes},
                        {"minimum_bytes", row.traffic.minimum_bytes},
                        {"resident_ctas", row.traffic.resident_ctas},
                        {"measured", row.measured},
                        {"passed", row.passed},
                        {"error", row.error}};
    if (row.measured) {
      j["median_us"] = row.stats.median_us;
      j["mean_us"] = row.stats.mean_us;
      j["min_us"] = row.stats.min_us;
      j["stddev_us"] = row.stats.stddev_us;
      j["samples"] = row.stats.samples;
      j["tflops"] = row.tflops;
      j["speedup_over_previous"] = row.speedup > 0 ? nlohmann::json(row.speedup) : nlohmann::json(nullptr);
    }
    // JSON has no NaN: a NaN calc_diff (an unwritten element) is recorded as null with passed = false.
    j["calc_diff"] = row.calc_diff >= 0 ? nlohmann::json(row.calc_diff) : nlohmann::json(nullptr);
    rows.push_back(std::move(j));
  }
  const nlohmann::json out = {{"m", r.shape.m},
                              {"n", r.shape.n},
                              {"k", r.shape.k},
                              {"hw", r.hw_name},
                              {"gpu", r.gpu_name},
                              {"commit", r.commit},
                              {"date_utc", r.date_utc},
                              {"note", r.note},
                              {"checked_rows", r.checked_rows},
                              {"max_diff", r.max_diff},
                              {"all_passed", r.all_passed()},
                              {"rows", rows}};
  return out.dump(2) + "\n";
}

}  // namespace tilegemm::ladder
