// BenchReport <-> JSON. The writer adds each row's derived rates and the summary so that a reader without
// tilegemm sees the numbers; the reader ignores them and recomputes from the measured fields.
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

using nlohmann::json;

namespace {

// What is wrong with a report, with the path of the key ("rows[3].ours.median_us"): report_from_json turns it
// into one line naming the file, where nlohmann would say "[json.exception.out_of_range.403] key ... not found".
class BadReport : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string path_of(const std::string& where, const char* key) {
  return where.empty() ? std::string(key) : where + "." + key;
}

// A value as the message shows it: scalars as written, objects and arrays by their kind.
std::string describe(const json& v) {
  if (v.is_structured()) return fmt::format("an {}", v.type_name());
  const std::string text = v.dump();
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

template <class T>
const char* kind_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_integral_v<T>)
    return "an integer";
  else
    return "a number";
}

template <class T>
bool holds(const json& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v.is_boolean();
  else if constexpr (std::is_same_v<T, std::string>)
    return v.is_string();
  else if constexpr (std::is_integral_v<T>)
    return v.is_number_integer() && v.get<double>() >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v.get<double>() <= static_cast<double>(std::numeric_limits<T>::max());
  else
    return v.is_number();  // JSON has no NaN or infinity: nlohmann writes them as null
}

// `obj[key]` as a T; BadReport naming the key's path when it is missing or of another type.
template <class T>
T get(const json& obj, const std::string& where, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw BadReport(fmt::format("no key '{}'", path_of(where, key)));
  if (!holds<T>(*it))
    throw BadReport(fmt::format("'{}' = {} (not {})", path_of(where, key), describe(*it), kind_name<T>()));
  return it->get<T>();
}

// For keys that older reports lack.
template <class T>
T get_or(const json& obj, const std::string& where, const char* key, T fallback) {
  return obj.contains(key) ? get<T>(obj, where, key) : fallback;
}

// `obj[key]` checked to be an object, for reading its own keys.
const json& object(const json& obj, const std::string& where, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw BadReport(fmt::format("no key '{}'", path_of(where, key)));
  if (!it->is_object()) throw BadReport(fmt::format("'{}' = {} (not an object)", path_of(where, key), describe(*it)));
  return *it;
}

json to_json(const BenchStats& s) {
  return {{"samples", s.samples}, {"median_us", s.median_us}, {"mean_us", s.mean_us},
          {"min_us", s.min_us},   {"max_us", s.max_us},       {"stddev_us", s.stddev_us}};
}
// Measured stats (samples > 0) must have a median > 0 and a spread >= 0: the ratios and their geometric mean
// divide by the median and take its log, so a zero or negative one printed "inf×" or "-nan×". `shape` names
// the row in the message.
BenchStats stats_from(const json& obj, const std::string& row, const char* key, const std::string& shape) {
  const json& j = object(obj, row, key);
  const std::string where = path_of(row, key);
  BenchStats s;
  s.samples = get<int>(j, where, "samples");
  s.median_us = get<double>(j, where, "median_us");
  s.mean_us = get<double>(j, where, "mean_us");
  s.min_us = get<double>(j, where, "min_us");
  s.max_us = get<double>(j, where, "max_us");
  s.stddev_us = get<double>(j, where, "stddev_us");
  if (s.samples < 0)
    throw BadReport(
        fmt::format("'{}.samples' = {} in row {} (a count >= 0; 0 = not measured)", where, s.samples, shape));
  if (s.samples > 0 && !(s.median_us > 0))
    throw BadReport(fmt::format("'{}.median_us' = {} in row {} ({} samples; a measured median is > 0 us)", where,
                                s.median_us, shape, s.samples));
  if (s.samples > 0 && !(s.stddev_us >= 0))
    throw BadReport(fmt::format("'{}.stddev_us' = {} in row {} (a spread is >= 0 us)", where, s.stddev_us, shape));
  return s;
}

json to_json(const IterationCounts& c) {
  return {{"warmup", c.warmup}, {"rep", c.rep}};
}
IterationCounts iterations_from(const json& obj, const std::string& where, const char* key) {
  const json& j = object(obj, where, key);
  const std::string path = path_of(where, key);
  return {get<int>(j, path, "warmup"), get<int>(j, path, "rep")};
}

json to_json(const GpuClocks& c) {
  if (!c.available) return {{"available", false}};
  return {{"available", true},          {"sm_mhz", c.sm_mhz},   {"mem_mhz", c.mem_mhz},
          {"max_sm_mhz", c.max_sm_mhz}, {"power_w", c.power_w}, {"temperature_c", c.temperature_c}};
}
GpuClocks clocks_from(const json& obj, const std::string& where, const char* key) {
  const json& j = object(obj, where, key);
  const std::string path = path_of(where, key);
  GpuClocks c;
  c.available = get<bool>(j, path, "available");
  if (!c.available) return c;
  c.sm_mhz = get<double>(j, path, "sm_mhz");
  c.mem_mhz = get<double>(j, path, "mem_mhz");
  c.max_sm_mhz = get<double>(j, path, "max_sm_mhz");
  c.power_w = get<double>(j, path, "power_w");
  c.temperature_c = get<double>(j, path, "temperature_c");
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
  const std::string w = "environment";
  BenchEnvironment e;
  e.gpu_name = get<std::string>(j, w, "gpu_name");
  e.pci_bus_id = get<std::string>(j, w, "pci_bus_id");
  e.sm_count = get<int>(j, w, "sm_count");
  e.num_sms = get<int>(j, w, "num_sms");
  e.l2_bytes = get<double>(j, w, "l2_bytes");
  e.clocks_before = clocks_from(j, w, "clocks_before");
  e.clocks_after = clocks_from(j, w, "clocks_after");
  e.driver_version = get<int>(j, w, "driver_version");
  e.runtime_version = get<int>(j, w, "runtime_version");
  e.cublaslt_version = get<std::int64_t>(j, w, "cublaslt_version");
  e.tilegemm_version = get<std::string>(j, w, "tilegemm_version");
  e.commit = get<std::string>(j, w, "commit");
  e.timer = get<std::string>(j, w, "timer");
  e.flush_bytes = get<std::int64_t>(j, w, "flush_bytes");
  e.warmup_ms = get<double>(j, w, "warmup_ms");
  e.rep_ms = get<double>(j, w, "rep_ms");
  e.date_utc = get<std::string>(j, w, "date_utc");
  e.peak_tflops = get<double>(j, w, "peak_tflops");
  e.hbm_gbps = get<double>(j, w, "hbm_gbps");
  // Added with the report directories; reports recorded before them lack these fields.
  e.flush_policy = get_or<std::string>(j, w, "flush_policy", "");
  e.flush = get_or<std::string>(j, w, "flush", "zero");  // reports before --flush all zero-filled
  e.copy_gbps = get_or<double>(j, w, "copy_gbps", 0.0);
  e.baseline = get_or<std::string>(j, w, "baseline", "");
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
// `where` is "rows[i]"; a bad median also names the row's shape, which is how the tables show it.
BenchRow row_from(const json& j, const std::string& where) {
  BenchRow r;
  r.kind = get<std::string>(j, where, "kind");
  r.groups = get<int>(j, where, "groups");
  r.m = get<int>(j, where, "m");
  r.n = get<int>(j, where, "n");
  r.k = get<int>(j, where, "k");
  const std::string shape = r.shape_label();
  r.dtype = get<std::string>(j, where, "dtype");
  r.out_dtype = get<std::string>(j, where, "out_dtype");
  r.layout = get<std::string>(j, where, "layout");
  r.config = get<std::string>(j, where, "config");
  r.config_full = get<std::string>(j, where, "config_full");
  r.flops = get<double>(j, where, "flops");
  r.min_bytes = get<double>(j, where, "min_bytes");
  r.floor_us = get<double>(j, where, "floor_us");
  r.ours = stats_from(j, where, "ours", shape);
  r.cublas = stats_from(j, where, "cublas", shape);
  r.cublas_method = get<std::string>(j, where, "cublas_method");
  r.calc_diff = get<double>(j, where, "calc_diff");
  r.error = get<std::string>(j, where, "error");
  r.variant = get_or<std::string>(j, where, "variant", "");
  if (j.contains("ours_iterations")) r.ours_iterations = iterations_from(j, where, "ours_iterations");
  if (j.contains("cublas_iterations")) r.cublas_iterations = iterations_from(j, where, "cublas_iterations");
  // Added with --dtype fp8; bf16 reports and older ones lack them (samples 0 = not measured).
  if (j.contains("cublas_per_tensor")) r.cublas_per_tensor = stats_from(j, where, "cublas_per_tensor", shape);
  if (j.contains("cublas_per_tensor_iterations"))
    r.cublas_per_tensor_iterations = iterations_from(j, where, "cublas_per_tensor_iterations");
  // Added with --read-b; older reports lack them.
  if (j.contains("b_read")) r.b_read = stats_from(j, where, "b_read", shape);
  if (j.contains("b_read_iterations")) r.b_read_iterations = iterations_from(j, where, "b_read_iterations");
  return r;
}

// The whole report; BadReport for the first key that is missing, mistyped or out of range.
BenchReport report_from(const json& j) {
  if (!j.is_object()) throw BadReport(fmt::format("{} at the top (not an object)", describe(j)));
  BenchReport report;
  report.suite = get<std::string>(j, "", "suite");
  report.env = environment_from(object(j, "", "environment"));
  const auto rows = j.find("rows");
  if (rows == j.end()) throw BadReport("no key 'rows'");
  if (!rows->is_array()) throw BadReport(fmt::format("'rows' = {} (not an array)", describe(*rows)));
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const std::string where = fmt::format("rows[{}]", i);
    if (!(*rows)[i].is_object()) throw BadReport(fmt::format("'{}' = {} (not an object)", where, describe((*rows)[i])));
    report.rows.push_back(row_from((*rows)[i], where));
  }
  return report;
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
  const std::string expected = "a tilegemm bench report in JSON";
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is where the parser gave up; the full what() would leak nlohmann's internal ids.
    throw InvalidArgument(argument, expected, fmt::format("malformed JSON (parse error at byte {})", e.byte));
  } catch (const json::exception&) {
    throw InvalidArgument(argument, expected, "a number outside double's range");  // e.g. 1e400
  }
  try {
    return report_from(j);
  } catch (const BadReport& e) {
    throw InvalidArgument(argument, expected, e.what());
  }
}

}  // namespace tilegemm
