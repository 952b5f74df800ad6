// run_suite(): per shape, prepare the operands (bf16_runs.cpp / fp8_runs.cpp), run ours and the baseline once and
// compare them (a loose sanity check), then time ours, the baseline and any extra baseline back to back with
// bench(); with time_b_read, also a kernel that reads only B.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "bench/host_data.hpp"
#include "bench/shape_run.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"
#include "tilegemm/weight_quant.hpp"
#include "timer/device_buffer.hpp"
#include "timer/read_flush.hpp"

namespace tilegemm {

using bench_detail::cuda_check;
using bench_detail::DeviceBuffer;
using bench_detail::ShapeRun;

namespace {

std::vector<unsigned char> to_host(const DeviceBuffer& buffer) {
  std::vector<unsigned char> host(buffer.bytes());
  cuda_check(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy(D to host)");
  return host;
}

std::string kind_of(GemmType type) {
  return type == GemmType::kNormal               ? "dense"
         : type == GemmType::kMGroupedContiguous ? "m_grouped_contiguous"
                                                 : "m_grouped_masked";
}

// The packed weight of a --weight row (InvalidArgument naming the option that makes it impossible).
WeightLayout weight_layout_of(const BenchShape& shape, const SuiteOptions& options) {
  const WeightFormat f = *options.weight;
  const int group = f == WeightFormat::kInt4 ? options.weight_group_size : f == WeightFormat::kMxfp4 ? 32 : 0;
  return make_weight_layout(f, shape.n, shape.k, group, options.weight_zeros, DType::kBFloat16);
}

BenchRow measure_shape(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                       std::uint64_t seed) {
  BenchRow row;
  row.kind = kind_of(shape.type);
  row.groups = shape.groups;
  row.m = shape.total_m();
  row.n = shape.n;
  row.k = shape.k;
  row.dtype = std::string(dtype_name(options.dtype));
  row.out_dtype = std::string(dtype_name(options.out_dtype));
  row.layout = std::string(layout_name(options.layout));
  if (options.weight) {
    // Weight-only: the packed weight's ledger (its bytes, not a bf16 B's), and the packing in the dtype column.
    const WeightLayout w = weight_layout_of(shape, options);
    const WqLedger ledger = wq_ledger(shape.total_m(), w, options.out_dtype, hw);
    row.dtype = w.format == WeightFormat::kInt4
                    ? fmt::format("bf16 x int4 g{}{}", w.group_size, w.has_zeros ? " zeros" : "")
                    : fmt::format("bf16 x {}", weight_format_name(w.format));
    row.flops = ledger.flops;
    row.min_bytes = ledger.packed_bytes + ledger.act_bytes + ledger.out_bytes;
    row.floor_us = std::max(ledger.memory_floor_us, ledger.flops / hw.peak_flops(DType::kBFloat16) * 1e6);
  } else {
    const ProblemLedger ledger = bench_ledger(shape, options.dtype, options.out_dtype, hw);
    row.flops = ledger.flops;
    row.min_bytes = ledger.min_bytes;
    row.floor_us = ledger.time_floor_s * 1e6;
  }

  const ShapeRun run = options.weight                        ? bench_detail::prepare_wq_run(shape, options, hw, seed)
                       : options.dtype == DType::kFloat8E4M3 ? bench_detail::prepare_fp8_run(shape, options, hw, seed)
                                                             : bench_detail::prepare_bf16_run(shape, options, hw, seed);
  row.cublas_method = run.cublas_method;
  const std::size_t d_count = static_cast<std::size_t>(row.m) * row.n;

  bool ours_ok = !options.baseline_only;
  if (ours_ok) {
    try {
      if (run.describe_ours) run.describe_ours(row);
      // All-ones bytes are NaN in bf16 and fp32: a kernel that skips part of D cannot pass the check.
      cuda_check(cudaMemset(run.d_ours.get(), 0xFF, run.d_ours.bytes()), "cudaMemset(D)");
      run.ours(nullptr);
      cuda_check(cudaDeviceSynchronize(), "our kernel (first call)");
    } catch (const RuntimeError& e) {
      // A fault inside our kernel leaves a sticky error and an unusable context: stop rather than time on.
      if (cudaDeviceSynchronize() != cudaSuccess) throw;
      row.error = e.what();
      ours_ok = false;
    } catch (const std::exception& e) {
      row.error = e.what();
      ours_ok = false;
    }
  }
  // The first call of a baseline; empty on success, else why cuBLASLt could not run this shape (e.g.
  // CUBLAS_STATUS_NOT_SUPPORTED). A sticky device error still ends the suite.
  auto first_call_error = [](const std::function<void(cudaStream_t)>& fn, const char* what) -> std::string {
    try {
      fn(nullptr);
      cuda_check(cudaDeviceSynchronize(), what);
      return {};
    } catch (const std::exception& e) {
      if (cudaDeviceSynchronize() != cudaSuccess) throw;
      return fmt::format("{} unavailable: {}", what, e.what());
    }
  };
  // The ratio's baseline failing is the row's error (the suite goes on); the per-tensor column is a reference
  // outside the ratio, so its failure only leaves the column empty and is reported on stderr.
  const std::string cublas_error = first_call_error(run.cublas, "cuBLASLt");
  const bool cublas_ok = cublas_error.empty();
  if (!cublas_ok) row.error += (row.error.empty() ? "" : "; ") + cublas_error;
  bool per_tensor_ok = false;
  if (run.cublas_per_tensor) {
    const std::string per_tensor_error = first_call_error(run.cublas_per_tensor, "cuBLASLt per-tensor");
    per_tensor_ok = per_tensor_error.empty();
    if (!per_tensor_ok) fmt::print(stderr, "bench: {}x{}x{}: {}\n", row.m, row.n, row.k, per_tensor_error);
  }

  if (ours_ok && cublas_ok) {
    const auto ours_host = to_host(run.d_ours), cublas_host = to_host(run.d_cublas);
    row.calc_diff = bench_detail::calc_diff(ours_host.data(), cublas_host.data(), d_count, run.d_dtype);
    if (!(row.calc_diff < options.diff_threshold))
      row.error = fmt::format("calc_diff(ours, cuBLASLt) = {:.3g}, above the sanity threshold {:.0e}", row.calc_diff,
                              options.diff_threshold);
  }
  if (ours_ok) {
    const BenchResult ours = bench(run.ours, options.timing);
    row.ours = ours.stats;
    row.ours_iterations = ours.iterations;
  }
  if (cublas_ok) {
    const BenchResult cublas = bench(run.cublas, options.timing);
    row.cublas = cublas.stats;
    row.cublas_iterations = cublas.iterations;
  }
  if (per_tensor_ok) {
    const BenchResult per_tensor = bench(run.cublas_per_tensor, options.timing);
    row.cublas_per_tensor = per_tensor.stats;
    row.cublas_per_tensor_iterations = per_tensor.iterations;
  }
  if (options.time_b_read) {
    int num_sms = 0;
    cuda_check(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, options.device),
               "cudaDeviceGetAttribute(SMs)");
    // The read kernel takes whole 16-byte words; B's last few bytes, if any, are left out.
    const std::size_t bytes = run.b_bytes / 16 * 16;
    const auto read_b = [&](cudaStream_t stream) { bench_detail::read_flush(run.b_data, bytes, num_sms, stream); };
    const BenchResult b_read = bench(read_b, options.timing);
    row.b_read = b_read.stats;
    row.b_read_iterations = b_read.iterations;
  }
  return row;
}

}  // namespace

void validate_suite_options(const SuiteOptions& options) {
  TILEGEMM_REQUIRE(!options.shapes.empty(), "--suite", "at least one shape", "none");
  const bool fp8 = options.dtype == DType::kFloat8E4M3;
  TILEGEMM_REQUIRE(fp8 || options.dtype == DType::kBFloat16, "--dtype", "bf16 or fp8 (e4m3)",
                   fmt::format("'{}'", dtype_name(options.dtype)));
  TILEGEMM_REQUIRE(options.out_dtype == DType::kBFloat16 || options.out_dtype == DType::kFloat32, "--out-dtype",
                   "bf16 or fp32", fmt::format("'{}'", dtype_name(options.out_dtype)));
  if (fp8) {
    // The 1D2D recipe writes bf16 D from K-major operands (wgmma reads fp8 only K-major; cuBLASLt's FP8
    // matmul takes only the TN form).
    TILEGEMM_REQUIRE(options.out_dtype == DType::kBFloat16, "--out-dtype", "bf16 for --dtype fp8",
                     fmt::format("'{}'", dtype_name(options.out_dtype)));
    TILEGEMM_REQUIRE(options.layout == Layout::kNT, "--layout", "nt for --dtype fp8 (both operands K-major)",
                     fmt::format("'{}'", layout_name(options.layout)));
  }
  if (options.weight) {
    TILEGEMM_REQUIRE(options.dtype == DType::kBFloat16, "--dtype", "bf16 for --weight (bf16 activations)",
                     fmt::format("'{}'", dtype_name(options.dtype)));
    TILEGEMM_REQUIRE(options.layout == Layout::kNT, "--layout", "nt for --weight (K-major activations and weight)",
                     fmt::format("'{}'", layout_name(options.layout)));
    for (const BenchShape& s : options.shapes) {
      TILEGEMM_REQUIRE(s.type == GemmType::kNormal, "--suite", "dense shapes for --weight",
                       std::string(gemm_type_name(s.type)));
      weight_layout_of(s, options);  // the format's own checks (group size, K), naming the option
    }
  }
  TILEGEMM_REQUIRE(options.num_sms >= 0, "--num-sms", "0 (every SM) or a positive SM count",
                   std::to_string(options.num_sms));
  TILEGEMM_REQUIRE(options.device >= 0, "--device", "a device index >= 0", std::to_string(options.device));
  TILEGEMM_REQUIRE(options.diff_threshold > 0, "diff_threshold", "> 0", fmt::format("{}", options.diff_threshold));
  iteration_counts(1.0, options.timing.warmup_ms, options.timing.rep_ms);
  for (const BenchShape& s : options.shapes) {
    TILEGEMM_REQUIRE(s.m > 0, "--m", "a positive size", std::to_string(s.m));
    TILEGEMM_REQUIRE(s.n > 0, "--n", "a positive size", std::to_string(s.n));
    TILEGEMM_REQUIRE(s.k > 0, "--k", "a positive size", std::to_string(s.k));
    TILEGEMM_REQUIRE(s.groups > 0, "groups", "a positive count", std::to_string(s.groups));
    if (s.type == GemmType::kMGroupedContiguous || s.type == GemmType::kMGroupedMasked) {
      TILEGEMM_REQUIRE(layout_major_a(options.layout) == Major::kKMajor, "--layout",
                       "nt or nn for M-grouped shapes (A must be K-major)",
                       fmt::format("'{}'", layout_name(options.layout)));
      TILEGEMM_REQUIRE(options.out_dtype == DType::kBFloat16, "--out-dtype", "bf16 for M-grouped shapes",
                       fmt::format("'{}'", dtype_name(options.out_dtype)));
    } else {
      TILEGEMM_REQUIRE(s.type == GemmType::kNormal, "shape type", "normal, m_grouped_contiguous or m_grouped_masked",
                       std::string(gemm_type_name(s.type)));
    }
  }
}

BenchReport run_suite(const SuiteOptions& options) {
  validate_suite_options(options);
  if (!gpu_available()) throw RuntimeError("no CUDA GPU found: tilegemm bench needs an NVIDIA GPU");
  cuda_check(cudaSetDevice(options.device), "cudaSetDevice");
  BenchReport report;
  report.suite = options.suite_name;
  report.env = capture_environment(options.device, options.timing, options.num_sms);
  const HardwareModel hw = hardware_from_device(options.device);
  if (options.dtype == DType::kFloat8E4M3) {
    // The floors of fp8 rows use the fp8 tensor peak; the environment records the peak they used.
    report.env.peak_tflops = hw.peak_flops(DType::kFloat8E4M3) * 1e-12;
    report.env.baseline = fp8_baseline_identity(report.env.cublaslt_version);
  }
  std::uint64_t seed = 0x7E11E6E3ULL;
  for (const BenchShape& shape : options.shapes) {
    if (options.on_shape_start) options.on_shape_start(report.rows.size(), shape);
    report.rows.push_back(measure_shape(shape, options, hw, seed));
    seed += 2;
    if (options.on_row) options.on_row(report.rows.back());
  }
  report.env.clocks_after = query_gpu_clocks(report.env.pci_bus_id);
  return report;
}

}  // namespace tilegemm
