// BenchReport <-> JSON. The writer adds each row's derived rates and the summary so that a reader without
// tilegemm sees the numbers; the reader ignores them and recomputes from the measured fields.
#include <nlohmann/json.hpp>

#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

using nlohmann::json;

namespace {

json to_json(const BenchStats& s) {
  return {{"samples", s.samples}, {"median_us", s.median_us}, {"mean_us", s.mean_us},
          {"min_us", s.min_us},   {"max_us", s.max_us},       {"stddev_us", s.stddev_us}};
}
BenchStats stats_from(const json& j) {
  BenchStats s;
  s.samples = j.at("samples").get<int>();
  s.median_us = j.at("median_us").get<double>();
  s.mean_us = j.at("mean_us").get<double>();
  s.min_us = j.at("min_us").get<double>();
  s.max_us = j.at("max_us").get<double>();
  s.stddev_us = j.at("stddev_us").get<double>();
  return s;
}

json to_json(const IterationCounts& c) {
  return {{"warmup", c.warmup}, {"rep", c.rep}};
}
IterationCounts iterations_from(const json& j) {
  return {j.at("warmup").get<int>(), j.at("rep").get<int>()};
}

json to_json(const GpuClocks& c) {
  if (!c.available) return {{"available", false}};
  return {{"available", true},          {"sm_mhz", c.sm_mhz},   {"mem_mhz", c.mem_mhz},
          {"max_sm_mhz", c.max_sm_mhz}, {"power_w", c.power_w}, {"temperature_c", c.temperature_c}};
}
GpuClocks clocks_from(const json& j) {
  GpuClocks c;
  c.available = j.at("available").get<bool>();
  if (!c.available) return c;
  c.sm_mhz = j.at("sm_mhz").get<double>();
  c.mem_mhz = j.at("mem_mhz").get<double>();
  c.max_sm_mhz = j.at("max_sm_mhz").get<double>();
  c.power_w = j.at("power_w").get<double>();
  c.temperature_c = j.at("temperature_c").get<double>();
  return c;
}

json to_json(const BenchEnvironment& e) {
  return {{"gpu_name", e.gpu_name},
          {"pci_bus_id", e.pci_bus_id},
          {"sm_count", e.sm_count},
          {"num_sms", e.num_sms},
          {"l2_bytes", e.l2_bytes},
          {"clocks_before", to_json(e.clocks_before)},
          {"clocks_after", to_json(e.clocks_after)},
          {"driver_version", e.driver_version},
          {"runtime_version", e.runtime_version},
          {"cublaslt_version", e.cublaslt_version},
          {"tilegemm_version", e.tilegemm_version},
          {"commit", e.commit},
          {"timer", e.timer},
          {"flush_policy", e.flush_policy},
          {"flush", e.flush},
          {"flush_bytes", e.flush_bytes},
          {"warmup_ms", e.warmup_ms},
          {"rep_ms", e.rep_ms},
          {"date_utc", e.date_utc},
          {"peak_tflops", e.peak_tflops},
          {"hbm_gbps", e.hbm_gbps},
          {"copy_gbps", e.copy_gbps},
          {"baseline", e.baseline}};
}
BenchEnvironment environment_from(const json& j) {
  BenchEnvironment e;
  e.gpu_name = j.at("gpu_name").get<std::string>();
  e.pci_bus_id = j.at("pci_bus_id").get<std::string>();
  e.sm_count = j.at("sm_count").get<int>();
  e.num_sms = j.at("num_sms").get<int>();
  e.l2_bytes = j.at("l2_bytes").get<double>();
  e.clocks_before = clocks_from(j.at("clocks_before"));
  e.clocks_after = clocks_from(j.at("clocks_after"));
  e.driver_version = j.at("driver_version").get<int>();
  e.runtime_version = j.at("runtime_version").get<int>();
  e.cublaslt_version = j.at("cublaslt_version").get<std::int64_t>();
  e.tilegemm_version = j.at("tilegemm_version").get<std::string>();
  e.commit = j.at("commit").get<std::string>();
  e.timer = j.at("timer").get<std::string>();
  e.flush_bytes = j.at("flush_bytes").get<std::int64_t>();
  e.warmup_ms = j.at("warmup_ms").get<double>();
  e.rep_ms = j.at("rep_ms").get<double>();
  e.date_utc = j.at("date_utc").get<std::string>();
  e.peak_tflops = j.at("peak_tflops").get<double>();
  e.hbm_gbps = j.at("hbm_gbps").get<double>();
  // Added with the report directories; reports recorded before them lack these fields.
  e.flush_policy = j.value("flush_policy", std::string());
  e.flush = j.value("flush", std::string("zero"));  // reports before --flush all zero-filled
  e.copy_gbps = j.value("copy_gbps", 0.0);
  e.baseline = j.value("baseline", std::string());
  return e;
}

json to_json(const BenchRow& r) {
  return {{"kind", r.kind},
          {"groups", r.groups},
          {"m", r.m},
          {"n", r.n},
          {"k", r.k},
          {"dtype", r.dtype},
          {"out_dtype", r.out_dtype},
          {"layout", r.layout},
          {"config", r.config},
          {"config_full", r.config_full},
          {"variant", r.variant},
          {"flops", r.flops},
          {"min_bytes", r.min_bytes},
          {"floor_us", r.floor_us},
          {"ours", to_json(r.ours)},
          {"cublas", to_json(r.cublas)},
          {"cublas_per_tensor", to_json(r.cublas_per_tensor)},
          {"b_read", to_json(r.b_read)},
          {"ours_iterations", to_json(r.ours_iterations)},
          {"cublas_iterations", to_json(r.cublas_iterations)},
          {"cublas_per_tensor_iterations", to_json(r.cublas_per_tensor_iterations)},
          {"b_read_iterations", to_json(r.b_read_iterations)},
          {"cublas_method", r.cublas_method},
          {"calc_diff", r.calc_diff},
          {"error", r.error},
          // Derived (ignored by the reader).
          {"shape", r.shape_label()},
          {"intensity_flop_per_byte", r.intensity()},
          {"ours_relative_spread", relative_spread(r.ours)},
          {"cublas_relative_spread", relative_spread(r.cublas)},
          {"ours_tflops", r.ours_tflops()},
          {"ours_gbps", r.ours_gbps()},
          {"ours_pct_floor", r.ours_pct_floor()},
          {"ours_pct_b_read", r.ours_pct_b_read()},
          {"cublas_tflops", r.cublas_tflops()},
          {"cublas_per_tensor_tflops", r.cublas_per_tensor_tflops()},
          {"ratio_vs_cublas", r.ratio()}};
}
BenchRow row_from(const json& j) {
  BenchRow r;
  r.kind = j.at("kind").get<std::string>();
  r.groups = j.at("groups").get<int>();
  r.m = j.at("m").get<int>();
  r.n = j.at("n").get<int>();
  r.k = j.at("k").get<int>();
  r.dtype = j.at("dtype").get<std::string>();
  r.out_dtype = j.at("out_dtype").get<std::string>();
  r.layout = j.at("layout").get<std::string>();
  r.config = j.at("config").get<std::string>();
  r.config_full = j.at("config_full").get<std::string>();
  r.flops = j.at("flops").get<double>();
  r.min_bytes = j.at("min_bytes").get<double>();
  r.floor_us = j.at("floor_us").get<double>();
  r.ours = stats_from(j.at("ours"));
  r.cublas = stats_from(j.at("cublas"));
  r.cublas_method = j.at("cublas_method").get<std::string>();
  r.calc_diff = j.at("calc_diff").get<double>();
  r.error = j.at("error").get<std::string>();
  r.variant = j.value("variant", std::string());
  if (j.contains("ours_iterations")) r.ours_iterations = iterations_from(j.at("ours_iterations"));
  if (j.contains("cublas_iterations")) r.cublas_iterations = iterations_from(j.at("cublas_iterations"));
  // Added with --dtype fp8; bf16 reports and older ones lack them (samples 0 = not measured).
  if (j.contains("cublas_per_tensor")) r.cublas_per_tensor = stats_from(j.at("cublas_per_tensor"));
  if (j.contains("cublas_per_tensor_iterations"))
    r.cublas_per_tensor_iterations = iterations_from(j.at("cublas_per_tensor_iterations"));
  // Added with --read-b; older reports lack them.
  if (j.contains("b_read")) r.b_read = stats_from(j.at("b_read"));
  if (j.contains("b_read_iterations")) r.b_read_iterations = iterations_from(j.at("b_read_iterations"));
  return r;
}

}  // namespace

std::string report_to_json(const BenchReport& report) {
  json rows = json::array();
  for (const auto& row : report.rows) rows.push_back(to_json(row));
  const BenchSummary s = summarize_rows(report.rows);
  json masked = json::array();
  for (const auto& mc : masked_vs_contiguous(report.rows))
    masked.push_back({{"shape", mc.shape},
                      {"masked_us", mc.masked_us},
                      {"contiguous_us", mc.contiguous_us},
                      {"masked_over_contiguous", mc.ratio}});
  json j = {{"suite", report.suite},
            {"environment", to_json(report.env)},
            {"rows", rows},
            {"summary",
             {{"compared", s.compared},
              {"geomean_ratio_vs_cublas", s.geomean_ratio},
              {"min_ratio_vs_cublas", s.min_ratio},
              {"min_ratio_shape", s.min_ratio_shape},
              {"errors", s.errors},
              {"b_read_compared", s.b_read_compared},
              {"geomean_pct_b_read", s.geomean_pct_b_read},
              {"masked_vs_contiguous", masked}}}};
  return j.dump(2) + "\n";
}

BenchReport report_from_json(const std::string& text, const std::string& argument) {
  try {
    const json j = json::parse(text);
    BenchReport report;
    report.suite = j.at("suite").get<std::string>();
    report.env = environment_from(j.at("environment"));
    for (const auto& row : j.at("rows")) report.rows.push_back(row_from(row));
    return report;
  } catch (const json::exception& e) {
    throw InvalidArgument(argument, "a tilegemm bench report in JSON", e.what());
  }
}

}  // namespace tilegemm
