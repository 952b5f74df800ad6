#pragma once
// Benchmark harness (F12). The timing method follows the anchors (shared/anchors/h200.md), which used
// triton's do_bench: estimate the per-call time, derive warm-up and timed iteration counts from millisecond
// budgets, zero a buffer of at least twice the L2 before every timed call (outside the timed region), time
// each call with a pair of CUDA events, and report the median. A suite runner times our kernel and cuBLASLt
// on the same shapes in the same process, and pure writers turn the report into JSON and Markdown.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

// ---------------------------------------------------------------------------------------------------------
// Timing one callable.

struct BenchOptions {
  double warmup_ms = 25;         // warm-up budget (do_bench's `warmup`)
  double rep_ms = 200;           // timed budget (do_bench's `rep`)
  std::int64_t flush_bytes = 0;  // buffer zeroed before each timed call; 0 = max(256 MiB, 2 × L2)
  int estimate_calls = 5;        // calls (each after a flush) used to estimate the per-call time
  cudaStream_t stream = nullptr;
};

struct BenchStats {
  int samples = 0;  // 0 = not measured
  double median_us = 0, mean_us = 0, min_us = 0, max_us = 0;
  double stddev_us = 0;  // population standard deviation: the spread of the samples
};

struct IterationCounts {
  int warmup = 0;
  int rep = 0;
};

// Upper bound on timed iterations: every timed call holds two CUDA events until the end of the run.
inline constexpr int kMaxBenchIterations = 100000;

// do_bench's rule: warmup = max(1, floor(warmup_ms / estimate_ms)), rep likewise, capped at
// kMaxBenchIterations. Throws InvalidArgument for a negative warm-up, a non-positive rep budget or a
// non-finite estimate.
IterationCounts iteration_counts(double estimate_ms, double warmup_ms, double rep_ms);

// Median (mean of the two middle values for an even count), mean, min, max and spread of the samples.
// Throws InvalidArgument when `samples_us` is empty.
BenchStats summarize(std::vector<double> samples_us);

struct BenchResult {
  BenchStats stats;
  IterationCounts iterations;
  double estimate_ms = 0;        // per-call time estimate (flush included, as in do_bench)
  std::int64_t flush_bytes = 0;  // bytes actually zeroed before each timed call
};

// Default flush size for an L2 of `l2_bytes`: at least 2 × L2 and never less than 256 MiB (do_bench's size).
std::int64_t default_flush_bytes(std::int64_t l2_bytes);

// Times `fn` on options.stream with CUDA events. Throws RuntimeError when no GPU is present or a CUDA
// call fails, InvalidArgument for bad budgets.
BenchResult bench(const std::function<void(cudaStream_t)>& fn, const BenchOptions& options = {});

// ---------------------------------------------------------------------------------------------------------
// Suites: which shapes are measured.

// DeepGEMM's layout names: the first letter is A ('n' = K-major [M,K], 't' = MN-major [K,M]), the second B
// ('t' = K-major [N,K], 'n' = MN-major [K,N]).
enum class Layout : int { kNT = 0, kNN = 1, kTN = 2, kTT = 3 };
std::string_view layout_name(Layout layout);
Layout parse_layout(std::string_view name, const std::string& argument = "--layout");
Major layout_major_a(Layout layout);
Major layout_major_b(Layout layout);

struct BenchShape {
  GemmType type = GemmType::kNormal;  // kNormal or kMGroupedContiguous
  int groups = 1;
  int m = 0;  // rows per group for grouped shapes (total rows = groups × m)
  int n = 0, k = 0;
  int total_m() const { return groups * m; }
};

// "deepseek": M ∈ {64,128,4096} × (N,K) ∈ {(2112,7168),(24576,1536),(32768,512),(7168,16384),(4096,7168),
// (7168,2048)}; "grouped": groups × M-per-group ∈ {4×8192, 8×4096} × (N,K) ∈ {(4096,7168),(7168,2048)};
// "all": both. Throws InvalidArgument naming `argument` for another name.
std::vector<BenchShape> suite_shapes(std::string_view suite, const std::string& argument = "--suite");
std::vector<std::string> suite_names();

// The ledger's view of a bench shape: grouped shapes are M-grouped (m = total rows, batch = groups) and
// also move their int32 group index per row.
ProblemShape ledger_shape(const BenchShape& shape);
ProblemLedger bench_ledger(const BenchShape& shape, DType out_dtype, const HardwareModel& hw);

// ---------------------------------------------------------------------------------------------------------
// Reports.

// One `nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu` sample.
struct GpuClocks {
  bool available = false;
  double sm_mhz = 0, mem_mhz = 0, max_sm_mhz = 0, power_w = 0, temperature_c = 0;
};
// Parses one line of that query in `--format=csv,noheader[,nounits]` form ("1980 MHz, 3201 MHz, 1980 MHz,
// 120.5 W, 35"). Returns available = false for anything else ("[N/A]" fields, missing fields).
GpuClocks parse_nvidia_smi_clocks(const std::string& line);
// Runs nvidia-smi for the device with PCI bus id `pci_bus_id` (all GPUs' first line when empty).
// Never throws: a missing nvidia-smi gives available = false.
GpuClocks query_gpu_clocks(const std::string& pci_bus_id);

// Everything a number needs to be reproduced (SPEC: "Reproducibility").
struct BenchEnvironment {
  std::string gpu_name;
  std::string pci_bus_id;
  int sm_count = 0;
  int num_sms = 0;  // SMs our kernels were allowed to use (0 = all)
  double l2_bytes = 0;
  GpuClocks clocks_before, clocks_after;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  std::int64_t cublaslt_version = 0;
  std::string tilegemm_version;
  std::string commit;  // `git rev-parse --short HEAD` (+ "-dirty"), "unknown" when git is unavailable
  std::string timer = "cuda-events";
  std::int64_t flush_bytes = 0;
  double warmup_ms = 0, rep_ms = 0;
  std::string date_utc;  // ISO 8601, e.g. 2026-11-30T12:00:00Z
  // The ledger's hardware numbers the floors were computed from.
  double peak_tflops = 0;  // dense bf16 tensor-core peak
  double hbm_gbps = 0;
};

// The parts of the environment that need no GPU (commit, date, version) — used by capture below.
std::string git_commit_of(const std::string& source_dir);
// The commit a report records: $TILEGEMM_COMMIT when set (for copies of the tree without .git, e.g. on the
// GPU machine), else git_commit_of(source_dir).
std::string report_commit(const std::string& source_dir);
std::string utc_now_iso8601();
// Fills every field from `device` (GPU name, SMs, versions, clocks_before). Throws RuntimeError without a
// GPU.
BenchEnvironment capture_environment(int device, const BenchOptions& timing, int num_sms);

struct BenchRow {
  std::string kind = "dense";  // "dense" or "m_grouped_contiguous"
  int groups = 1;
  int m = 0, n = 0, k = 0;  // m = total rows (groups × rows per group)
  std::string dtype = "bf16";
  std::string out_dtype = "bf16";
  std::string layout = "nt";
  std::string config;       // our kernel's config, compact: "128x256x64 st4 wg2 cl1x1 sk1" ("" = unknown)
  std::string config_full;  // to_string(GemmConfig)
  double flops = 0;
  double min_bytes = 0;
  double floor_us = 0;  // the ledger's time floor: max(FLOPs / peak, min bytes / HBM bandwidth)
  BenchStats ours;      // samples == 0 when ours was not run (baseline-only or an error)
  BenchStats cublas;
  std::string cublas_method;  // how the baseline was issued, e.g. "cublasLt, 1 call" / "cublasLt, 4 calls"
  double calc_diff = -1;      // ours vs cuBLASLt, DeepGEMM's calc_diff; -1 = not checked
  std::string error;          // why ours has no numbers or failed the check; "" = fine

  bool has_ours() const { return ours.samples > 0; }
  bool has_cublas() const { return cublas.samples > 0; }
  double ours_tflops() const;     // flops / median, 0 without numbers
  double ours_gbps() const;       // min bytes / median
  double ours_pct_floor() const;  // 100 × floor / median
  double cublas_tflops() const;
  double ratio() const;             // cuBLAS median / ours median (> 1: we are faster); 0 when not both
  std::string shape_label() const;  // "4096x7168x2048" or "4x8192x4096x7168"
};

struct BenchSummary {
  int compared = 0;          // rows without error that have both ours and cuBLAS numbers
  double geomean_ratio = 0;  // geometric mean of BenchRow::ratio over those rows
  double min_ratio = 0;
  std::string min_ratio_shape;
  int errors = 0;  // rows with a non-empty error
};
BenchSummary summarize_rows(const std::vector<BenchRow>& rows);

struct BenchReport {
  std::string suite;
  BenchEnvironment env;
  std::vector<BenchRow> rows;
};

std::string report_to_json(const BenchReport& report);  // pretty-printed, with the derived rates and summary
// Reads what report_to_json wrote (derived fields are recomputed, not read). Throws InvalidArgument naming
// `argument` for malformed JSON or missing fields.
BenchReport report_from_json(const std::string& text, const std::string& argument = "report");
std::string report_to_markdown(const BenchReport& report);

// ---------------------------------------------------------------------------------------------------------
// Running a suite on the GPU.

struct SuiteOptions {
  std::string suite_name;  // recorded in the report ("custom" for --m/--n/--k)
  std::vector<BenchShape> shapes;
  Layout layout = Layout::kNT;
  DType out_dtype = DType::kBFloat16;
  BenchOptions timing;
  bool baseline_only = false;  // time cuBLASLt only
  int num_sms = 0;             // passed to our kernels; 0 = every SM
  int device = 0;
  double diff_threshold = 1e-3;  // loose sanity check; the strict numerics check is the test suite's job
  std::function<void(const BenchRow&)> on_row;  // progress callback, called after each shape
};

// The compact config label used in reports.
std::string compact_config(const GemmConfig& config);

// Checks the options without a GPU (layout allowed for each shape kind, sizes positive, dtype supported).
void validate_suite_options(const SuiteOptions& options);

// Measures every shape. A failure of our kernel on one shape is recorded in that row's `error` and the
// run continues; a failing cuBLASLt or CUDA call throws RuntimeError. Throws RuntimeError("no CUDA GPU
// found ...") without a GPU.
BenchReport run_suite(const SuiteOptions& options);

}  // namespace tilegemm
