// BenchReport → Markdown: the environment block, one table row per shape, the summary, then any errors.
#include <string>

#include <fmt/format.h>

#include "bench/bench.hpp"

namespace tilegemm {

namespace {

// CUDA encodes versions as 1000·major + 10·minor; cuBLASLt as 10000·major + 100·minor + patch.
std::string cuda_version(int v) {
  return v > 0 ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : "unknown";
}
std::string cublaslt_version(std::int64_t v) {
  return v > 0 ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100) : "unknown";
}

std::string clocks(const GpuClocks& c) {
  if (!c.available) return "unavailable (no nvidia-smi)";
  return fmt::format("SM {:.0f} MHz (max {:.0f}), memory {:.0f} MHz, {:.1f} W, {:.0f} °C", c.sm_mhz, c.max_sm_mhz,
                     c.mem_mhz, c.power_w, c.temperature_c);
}

std::string mib(std::int64_t bytes) {
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string m_cell(const BenchRow& r) {
  if (r.kind == "dense") return std::to_string(r.m);
  return fmt::format("{}×{}", r.groups, r.groups > 0 ? r.m / r.groups : r.m);
}

std::string or_dash(bool present, const std::string& text) {
  return present ? text : "-";
}

// `per_tensor`: the report has fp8 rows with the per-tensor cuBLASLt column; `b_read`: rows with a read of B.
std::string table_row(const BenchRow& r, bool per_tensor, bool b_read) {
  const bool ours = r.has_ours(), cublas = r.has_cublas();
  std::string extra =
      per_tensor ? fmt::format(" {} | {} |",
                               or_dash(r.has_cublas_per_tensor(), fmt::format("{:.1f}", r.cublas_per_tensor.median_us)),
                               or_dash(r.has_cublas_per_tensor(), fmt::format("{:.0f}", r.cublas_per_tensor_tflops())))
                 : std::string();
  if (b_read)
    extra += fmt::format(" {} | {} |", or_dash(r.has_b_read(), fmt::format("{:.1f}", r.b_read.median_us)),
                         or_dash(r.has_b_read() && ours, fmt::format("{:.0f}%", r.ours_pct_b_read())));
  return fmt::format(
      "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |{}\n", m_cell(r), r.n, r.k, r.layout,
      r.config.empty() ? "-" : fmt::format("`{}`", r.config), or_dash(ours, fmt::format("{:.1f}", r.ours.median_us)),
      or_dash(ours, fmt::format("{:.0f}", r.ours_tflops())), or_dash(ours, fmt::format("{:.0f}%", r.ours_pct_floor())),
      or_dash(cublas, fmt::format("{:.1f}", r.cublas.median_us)),
      or_dash(cublas, fmt::format("{:.0f}", r.cublas_tflops())),
      or_dash(r.ratio() > 0, fmt::format("{:.3f}×", r.ratio())),
      or_dash(r.calc_diff >= 0, fmt::format("{:.1e}", r.calc_diff)), extra);
}

// Masked rows against their contiguous twins: the bar is masked within 10% of contiguous.
std::string masked_section(const std::vector<BenchRow>& rows) {
  const auto pairs = masked_vs_contiguous(rows);
  if (pairs.empty()) return "";
  std::string out =
      "\nMasked vs contiguous (ours, same groups × rows per group, N, K; masked_m = expected_m = rows per "
      "group):\n\n| shape | masked µs | contiguous µs | masked / contiguous |\n|---|---:|---:|---:|\n";
  for (const auto& p : pairs)
    out += fmt::format("| {} | {:.1f} | {:.1f} | {:.3f}× |\n", p.shape, p.masked_us, p.contiguous_us, p.ratio);
  return out;
}

std::string calls(const IterationCounts& c, const BenchStats& s) {
  if (s.samples == 0) return "-";
  if (c.rep == 0) return fmt::format("{} samples", s.samples);  // recorded before the counts were
  if (c.rep == s.samples) return fmt::format("{} + {}", c.warmup, c.rep);
  return fmt::format("{} + {} ({} samples of {})", c.warmup, c.rep, s.samples, c.rep / s.samples);
}

std::string spread(const BenchStats& s) {
  return s.samples > 0 ? fmt::format("{:.1f}%", 100 * relative_spread(s)) : "-";
}

std::string fastest(const BenchStats& s) {
  return s.samples > 0 ? fmt::format("{:.1f}", s.min_us) : "-";
}

// How each number was obtained: the full config and variant, the warm-up + timed calls, and the run-to-run
// spread (stddev / median) that --compare uses to tell a change from noise.
std::string run_details(const std::vector<BenchRow>& rows) {
  if (rows.empty()) return "";
  std::string out =
      "\nRun details: calls = warm-up + timed; spread = stddev / median of the samples; min = the fastest "
      "call in µs. A power-capped card (700 W on the H200) lowers its clock about 0.1 s into a long run, so a "
      "min far below the median is a call made before the clock dropped.\n\n"
      "| shape | variant | ours calls | ours spread | ours min | cuBLAS calls | cuBLAS spread | cuBLAS min | config |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.shape_label(),
                       r.variant.empty() ? "-" : r.variant, calls(r.ours_iterations, r.ours), spread(r.ours),
                       fastest(r.ours), calls(r.cublas_iterations, r.cublas), spread(r.cublas), fastest(r.cublas),
                       r.config_full.empty() ? "-" : fmt::format("`{}`", r.config_full));
  return out;
}

}  // namespace

std::string report_to_markdown(const BenchReport& report) {
  const BenchEnvironment& e = report.env;
  std::string out = fmt::format("# tilegemm bench: {}\n\n", report.suite);
  out += "| environment | |\n|---|---|\n";
  out += fmt::format("| GPU | {} ({} SMs, L2 {}, PCI {}); ours limited to {} |\n", e.gpu_name, e.sm_count,
                     mib(static_cast<std::int64_t>(e.l2_bytes)), e.pci_bus_id,
                     e.num_sms > 0 ? fmt::format("{} SMs", e.num_sms) : std::string("all SMs"));
  out += fmt::format("| clocks before | {} |\n", clocks(e.clocks_before));
  out += fmt::format("| clocks after | {} |\n", clocks(e.clocks_after));
  out += fmt::format("| driver / runtime / cuBLASLt | {} / {} / {} |\n", cuda_version(e.driver_version),
                     cuda_version(e.runtime_version), cublaslt_version(e.cublaslt_version));
  out += fmt::format("| tilegemm | {} (commit {}) |\n", e.tilegemm_version, e.commit);
  // Reports recorded before flush_policy existed all used the per-call flush.
  const std::string flush =
      e.flush_policy.empty() ? mib(e.flush_bytes) + " zeroed before each timed call" : e.flush_policy;
  out += fmt::format("| timing | {}, {}, warm-up {} ms, rep {} ms, median |\n", e.timer, flush, e.warmup_ms, e.rep_ms);
  out += fmt::format("| ledger floor | max(FLOPs / {:.0f} TFLOP/s, min bytes / {:.0f} GB/s) |\n", e.peak_tflops,
                     e.hbm_gbps);
  if (e.copy_gbps > 0)
    out +=
        fmt::format("| copy ceiling | {:.0f} GB/s (best device-to-device cudaMemcpy, read + write) |\n", e.copy_gbps);
  if (!e.baseline.empty()) out += fmt::format("| baseline | {} |\n", e.baseline);
  out += fmt::format("| date (UTC) | {} |\n\n", e.date_utc);

  bool per_tensor = false, fp8 = false, b_read = false;
  for (const auto& row : report.rows)
    per_tensor |= row.has_cublas_per_tensor(), fp8 |= row.dtype == "fp8", b_read |= row.has_b_read();
  out +=
      "Times are medians in µs; TFLOP/s = FLOPs / median; % floor = ledger floor / median; "
      "ratio = cuBLAS time / our time (> 1: faster than cuBLAS); diff = calc_diff(ours, cuBLASLt).\n";
  if (fp8)
    out +=
        "fp8 rows: e4m3 A/B, bf16 D; cuBLAS = cuBLASLt with the same 1×128 (A) / 128×128 (B) fp32 block scales "
        "(the ratio's baseline); per-tensor = cuBLASLt on the same data with one fp32 scale per operand (a "
        "reference, not in the ratio).\n";
  if (b_read)
    out +=
        "read B = a kernel that only reads B's bytes, under the same timer: no GEMM of the shape can be faster; "
        "% of read B = read-B time / our time (100%: as fast as reading B alone).\n";
  out += "\n";
  out += "| M | N | K | layout | config | ours µs | TFLOP/s | % floor | cuBLAS µs | TFLOP/s | ratio | diff |";
  out += per_tensor ? " per-tensor µs | TFLOP/s |" : "";
  out += b_read ? " read B µs | % of read B |\n" : "\n";
  out += "|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|";
  out += per_tensor ? "---:|---:|" : "";
  out += b_read ? "---:|---:|\n" : "\n";
  for (const auto& row : report.rows) out += table_row(row, per_tensor, b_read);

  const BenchSummary s = summarize_rows(report.rows);
  out += "\n";
  if (s.compared > 0)
    out += fmt::format("Geometric mean ratio vs cuBLAS: **{:.3f}×** over {} shapes; minimum {:.3f}× at {}.\n",
                       s.geomean_ratio, s.compared, s.min_ratio, s.min_ratio_shape);
  else
    out += "No shape has both our and cuBLAS numbers, so there is no ratio.\n";
  if (s.b_read_compared > 0)
    out += fmt::format("Our time against the read of B alone: **{:.0f}%** (geometric mean over {} shapes).\n",
                       s.geomean_pct_b_read, s.b_read_compared);

  bool any_method = false;
  for (const auto& row : report.rows) any_method |= !row.cublas_method.empty();
  if (any_method) {
    out += "\ncuBLAS baseline:";
    std::string last;
    for (const auto& row : report.rows)
      if (!row.cublas_method.empty() && row.cublas_method != last)
        out += fmt::format(" {} ({});", row.kind, row.cublas_method), last = row.cublas_method;
    out.back() = '.';
    out += "\n";
  }

  out += masked_section(report.rows);
  out += run_details(report.rows);

  if (s.errors > 0) {
    out += "\nErrors:\n\n";
    for (const auto& row : report.rows)
      if (!row.error.empty()) out += fmt::format("- {} {}: {}\n", row.kind, row.shape_label(), row.error);
  }
  return out;
}

}  // namespace tilegemm
