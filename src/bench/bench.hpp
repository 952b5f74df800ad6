#pragma once
// The benchmark's suites, rows, reports and comparisons (tilegemm_tools): which shapes `tilegemm bench` measures,
// how it times ours against cuBLASLt in the same process (with tilegemm/timer.hpp), and the pure writers that turn
// a report into JSON and Markdown.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilegemm/dtype.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/ledger.hpp"
#include "tilegemm/timer.hpp"
#include "tilegemm/wq_params.hpp"  // WeightFormat

namespace tilegemm {

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
  GemmType type = GemmType::kNormal;  // kNormal, kMGroupedContiguous or kMGroupedMasked
  int groups = 1;
  int m = 0;  // rows per group for grouped shapes (total rows = groups × m)
  int n = 0, k = 0;
  int total_m() const { return groups * m; }
};

// "deepseek": M ∈ {64,128,4096} × (N,K) ∈ {(2112,7168),(24576,1536),(32768,512),(7168,16384),(4096,7168),
// (7168,2048)}; "grouped": M-grouped contiguous, groups × M-per-group ∈ {4×8192, 8×4096} × (N,K) ∈
// {(4096,7168),(7168,2048)}; "masked": M-grouped masked with the same groups, rows per group (M_max =
// masked_m = expected_m) and (N,K), so each masked row has a contiguous twin of the same total M;
// "all": the three. Throws InvalidArgument naming `argument` for another name.
std::vector<BenchShape> suite_shapes(std::string_view suite, const std::string& argument = "--suite");
std::vector<std::string> suite_names();

// The ledger's view of a bench shape: grouped shapes are M-grouped (m = total rows, batch = groups) and
// also move their int32 group index per row (contiguous) or their int32 masked_m per group (masked).
ProblemShape ledger_shape(const BenchShape& shape);
// Operand types of a bench row: bf16 A/B, or e4m3 A/B with DeepSeek's fp32 scales (A 1×128 per token, B
// 128×128 per block), so the floor counts fp8 operand bytes plus scale bytes and the fp8 tensor peak.
OperandDtypes bench_operand_dtypes(DType in_dtype, DType out_dtype);
ProblemLedger bench_ledger(const BenchShape& shape, DType in_dtype, DType out_dtype, const HardwareModel& hw);
ProblemLedger bench_ledger(const BenchShape& shape, DType out_dtype, const HardwareModel& hw);  // bf16 inputs

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
  std::string flush_policy;    // flush_policy(timer, flush_bytes, flush mode)
  std::string flush = "zero";  // flush_mode_name(): "zero" or "read"
  std::int64_t flush_bytes = 0;
  double warmup_ms = 0, rep_ms = 0;
  std::string date_utc;  // ISO 8601, e.g. 2026-11-30T12:00:00Z
  // The ledger's hardware numbers the floors were computed from.
  double peak_tflops = 0;  // dense tensor-core peak of the report's input type (bf16, or fp8 for --dtype fp8)
  double hbm_gbps = 0;
  // Best device-to-device cudaMemcpy rate seen (read + write bytes / time), GB/s: the bandwidth a kernel
  // can actually reach, drawn as a second roof. 0 = not measured.
  double copy_gbps = 0;
  std::string baseline;  // the baseline's identity, e.g. "cuBLASLt 13.1.0, cublasLtMatmul, ..."
};

// The parts of the environment that need no GPU (commit, date, version) — used by capture below.
std::string git_commit_of(const std::string& source_dir);
// The commit a report records: $TILEGEMM_COMMIT when set (for copies of the tree without .git, e.g. on the
// GPU machine), else git_commit_of(source_dir).
std::string report_commit(const std::string& source_dir);
std::string utc_now_iso8601();
// Device-to-device copy bandwidth of `device` (see copy_gbps). Throws RuntimeError without a GPU.
double measure_copy_gbps(int device);
// The baseline's identity for a cuBLASLt version (cublasLtGetVersion()); fp8_… for --dtype fp8 reports.
std::string baseline_identity(std::int64_t cublaslt_version);
std::string fp8_baseline_identity(std::int64_t cublaslt_version);
// Fills every field from `device` (GPU name, SMs, versions, clocks_before, copy bandwidth). Throws
// RuntimeError without a GPU.
BenchEnvironment capture_environment(int device, const BenchOptions& timing, int num_sms);

struct BenchRow {
  std::string kind = "dense";  // "dense", "m_grouped_contiguous" or "m_grouped_masked"
  int groups = 1;
  int m = 0, n = 0, k = 0;     // m = total rows (groups × rows per group)
  std::string dtype = "bf16";  // input type: "bf16" or "fp8" (e4m3)
  std::string out_dtype = "bf16";
  std::string layout = "nt";
  std::string config;       // our kernel's config, compact: "128x256x64 st4 wg2 cl1x1 sk1" ("" = unknown)
  std::string config_full;  // to_string(GemmConfig)
  std::string variant;      // kernel family and variant: "sm90_bf16 normal, multicast none" ("" = unknown)
  double flops = 0;
  double min_bytes = 0;
  double floor_us = 0;  // the ledger's time floor: max(FLOPs / peak, min bytes / HBM bandwidth)
  BenchStats ours;      // samples == 0 when ours was not run (baseline-only or an error)
  BenchStats cublas;    // the baseline; fp8 rows: cuBLASLt with 1×128/128×128 block scales (the ratio's)
  // fp8 rows only: cuBLASLt with per-tensor scales on the same data, an extra reference (samples == 0 when
  // not measured; never part of the ratio).
  BenchStats cublas_per_tensor;
  // With SuiteOptions::time_b_read: a kernel that only reads B's bytes (every group's), timed like the GEMMs.
  // At small M those bytes set the HBM floor, so no GEMM of the shape can be faster under the same timer: a
  // limit measured in the same run, beside the ledger's floor. samples == 0 when not measured.
  BenchStats b_read;
  IterationCounts ours_iterations, cublas_iterations;  // warm-up and timed calls (0 = not recorded)
  IterationCounts cublas_per_tensor_iterations, b_read_iterations;
  std::string cublas_method;  // how the baseline was issued, e.g. "cublasLt, 1 call" / "cublasLt, 4 calls"
  double calc_diff = -1;      // ours vs cuBLASLt, DeepGEMM's calc_diff; -1 = not checked
  std::string error;          // why ours has no numbers or failed the check; "" = fine

  bool has_ours() const { return ours.samples > 0; }
  bool has_cublas() const { return cublas.samples > 0; }
  bool has_cublas_per_tensor() const { return cublas_per_tensor.samples > 0; }
  bool has_b_read() const { return b_read.samples > 0; }
  double ours_tflops() const;      // flops / median, 0 without numbers
  double ours_gbps() const;        // min bytes / median
  double ours_pct_floor() const;   // 100 × floor / median
  double ours_pct_b_read() const;  // 100 × B-read median / ours median (100%: as fast as reading B); 0 without
  double cublas_tflops() const;
  double cublas_per_tensor_tflops() const;
  double ratio() const;             // cuBLAS median / ours median (> 1: we are faster); 0 when not both
  double intensity() const;         // flops / min_bytes, FLOP per byte (the roofline's x)
  std::string shape_label() const;  // "4096x7168x2048" or "4x8192x4096x7168"
};

struct BenchSummary {
  int compared = 0;          // rows without error that have both ours and cuBLAS numbers
  double geomean_ratio = 0;  // geometric mean of BenchRow::ratio over those rows
  double min_ratio = 0;
  std::string min_ratio_shape;
  int errors = 0;                 // rows with a non-empty error
  int b_read_compared = 0;        // rows without error that have our numbers and a read of B
  double geomean_pct_b_read = 0;  // geometric mean of BenchRow::ours_pct_b_read over those rows
};
BenchSummary summarize_rows(const std::vector<BenchRow>& rows);

// Masked rows against their contiguous twins of the same report (same groups, rows per group, N and K, both
// without error and with our numbers): time ratio = ours masked median / ours contiguous median (the
// issue's bar: masked within 10% of contiguous, i.e. ratio <= 1.10). In row order of the masked rows.
struct MaskedVsContiguous {
  std::string shape;  // BenchRow::shape_label()
  double masked_us = 0, contiguous_us = 0;
  double ratio = 0;
};
std::vector<MaskedVsContiguous> masked_vs_contiguous(const std::vector<BenchRow>& rows);

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
// Comparing two reports (`tilegemm bench --compare A.json B.json`).

// Noise rule: a ratio is noise when |ratio − 1| < max(spread_a, spread_b) (relative spreads).
bool within_noise(double ratio, double spread_a, double spread_b);

struct CompareRow {
  std::string kind, shape, layout, out_dtype;  // shape = BenchRow::shape_label()
  std::string config_a, config_b;
  bool has_ours = false;  // both reports have our numbers for it, without error
  double a_us = 0, b_us = 0;
  double ratio = 0;   // a_us / b_us: > 1 means B is faster
  double spread = 0;  // max(relative_spread(A), relative_spread(B))
  bool noise = false;
  bool has_baseline = false;  // both reports have cuBLAS numbers (a control: it should not move)
  double baseline_ratio = 0, baseline_spread = 0;
  bool baseline_noise = false;
};

struct ReportComparison {
  std::vector<CompareRow> rows;                  // in A's order
  int compared = 0;                              // rows with has_ours
  double geomean_ratio = 0;                      // over those rows
  int beyond_noise = 0, faster = 0, slower = 0;  // faster/slower: B relative to A, beyond noise only
  int baseline_compared = 0;
  double baseline_geomean_ratio = 0;
  std::vector<std::string> only_in_a, only_in_b;  // "kind shape layout out_dtype"
  std::vector<std::string> skipped;               // "shape: why ours is not compared"
  std::vector<std::string> environment_notes;     // conditions that differ (GPU, timer, flush, versions, ...)
};

// Rows are matched on (kind, groups, m, n, k, layout, dtype, out_dtype), in order for repeated shapes.
ReportComparison compare_reports(const BenchReport& a, const BenchReport& b);
// A Markdown table with one row per shape and the summary; `name_a`/`name_b` identify the reports.
std::string comparison_to_markdown(const ReportComparison& comparison, const std::string& name_a,
                                   const std::string& name_b);

// ---------------------------------------------------------------------------------------------------------
// Report directories (`tilegemm bench --report DIR`).

struct ReportFiles {
  std::string json_path, md_path;
  bool plotted = false;
  std::string png_path, svg_path;  // set when plotted
  std::string plot_skipped;        // why there is no plot, when !plotted
};

// The python interpreter for the plot: $TILEGEMM_PYTHON when set, else the first of "python3" from PATH and
// /usr/bin/python3 (where Debian's python3-matplotlib lives) that imports matplotlib, else "python3".
std::string plot_python();
// scripts/roofline.py in the source tree (TILEGEMM_SOURCE_DIR), or $TILEGEMM_ROOFLINE_SCRIPT when set.
std::string roofline_script_path();

// Runs `python roofline.py report_json out_dir`, which writes roofline.png and roofline.svg. Returns ""
// on success, else one line saying why there is no plot (no python, no matplotlib, a script error).
// Never throws for a missing tool.
std::string plot_roofline(const std::string& report_json_path, const std::string& out_dir);

// Creates `dir` (and parents), writes report.json and report.md, then the roofline plot. Throws
// InvalidArgument naming `argument` when the directory cannot be created or written.
ReportFiles write_report_dir(const BenchReport& report, const std::string& dir,
                             const std::string& argument = "--report");

// ---------------------------------------------------------------------------------------------------------
// Running a suite on the GPU.

struct SuiteOptions {
  std::string suite_name;  // recorded in the report ("custom" for --m/--n/--k)
  std::vector<BenchShape> shapes;
  // Input type: bf16 (our bf16 GEMMs vs cuBLASLt bf16) or fp8 e4m3 (our 1D2D FP8 GEMMs vs cuBLASLt FP8 with
  // 1×128/128×128 block scales, plus cuBLASLt FP8 per-tensor as an extra column). fp8 takes layout nt, bf16 D.
  DType dtype = DType::kBFloat16;
  Layout layout = Layout::kNT;
  DType out_dtype = DType::kBFloat16;
  BenchOptions timing;
  bool baseline_only = false;  // time cuBLASLt only
  bool time_b_read = false;    // also time a read of B alone (BenchRow::b_read)
  int num_sms = 0;             // passed to our kernels; 0 = every SM
  // fp8: how our per-token A scales are laid out: MN-major and TMA-aligned, or row-major [M, K/128] as DeepGEMM's
  // per_token_cast_to_fp8 returns them (what deep_gemm's callers pass).
  bool row_major_scales = false;
  // Weight-only rows (--weight): bf16 A times W packed as this format (weight_quant.hpp) through wq_gemm_nt,
  // against cuBLASLt bf16 on W dequantised to bf16 (the same values); --read-b reads the packed codes. Dense shapes,
  // layout nt, --dtype bf16.
  std::optional<WeightFormat> weight;
  int weight_group_size = 128;  // int4's group size
  bool weight_zeros = false;    // int4 with zero points
  int device = 0;
  double diff_threshold = 1e-3;  // loose sanity check; the strict numerics check is the test suite's job
  std::function<void(std::size_t index, const BenchShape&)> on_shape_start;  // before each shape
  std::function<void(const BenchRow&)> on_row;  // progress callback, called after each shape
};

// The compact config label used in reports.
std::string compact_config(const GemmConfig& config);

// Checks the options without a GPU (input dtype bf16 or fp8, layout allowed for each shape kind and dtype,
// sizes positive, out dtype supported).
void validate_suite_options(const SuiteOptions& options);

// Measures every shape. A failure of our kernel on one shape is recorded in that row's `error` and the
// run continues; a failing cuBLASLt or CUDA call throws RuntimeError. Throws RuntimeError("no CUDA GPU
// found ...") without a GPU.
BenchReport run_suite(const SuiteOptions& options);

}  // namespace tilegemm
