// run_suite(): per shape, allocate the operands once, fill A and B with random bf16, run ours and cuBLASLt
// once and compare them (a loose sanity check), then time ours and cuBLASLt back to back with bench().
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench/device_buffer.hpp"
#include "bench/host_data.hpp"
#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm {

using bench_detail::cuda_check;
using bench_detail::DeviceBuffer;

namespace {

constexpr std::size_t kBf16Bytes = 2;

// Storage views in the convention of gemm.hpp: A viewed as [M,K], B as [N,K], the strides saying which
// dimension is contiguous.
TensorView operand_view(void* data, std::int64_t rows, std::int64_t k, Major major) {
  return major == Major::kKMajor ? TensorView::matrix(data, DType::kBFloat16, rows, k, k, 1)
                                 : TensorView::matrix(data, DType::kBFloat16, rows, k, 1, rows);
}

TensorView int32_vector(void* data, std::int64_t size) {
  TensorView v;
  v.data = data, v.dtype = DType::kInt32, v.ndim = 1;
  v.shape = {size, 0, 0, 0};
  v.strides = {1, 0, 0, 0};
  return v;
}

void* byte_offset(void* base, std::size_t bytes) {
  return static_cast<char*>(base) + bytes;
}

DeviceBuffer random_bf16_buffer(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint16_t> host(count);
  bench_detail::fill_random_bf16(host.data(), count, seed);
  DeviceBuffer buffer(count * kBf16Bytes);
  cuda_check(cudaMemcpy(buffer.get(), host.data(), count * kBf16Bytes, cudaMemcpyHostToDevice),
             "cudaMemcpy(random operand)");
  return buffer;
}

std::vector<unsigned char> to_host(const DeviceBuffer& buffer) {
  std::vector<unsigned char> host(buffer.bytes());
  cuda_check(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy(D to host)");
  return host;
}

// One shape's operands and the two calls being compared.
struct ShapeRun {
  std::function<void(cudaStream_t)> ours;
  std::function<void(cudaStream_t)> cublas;
  std::string cublas_method;
};

struct ShapeBuffers {
  DeviceBuffer a, b, d_ours, d_cublas, group_index;
};

GemmDesc desc_of(const BenchShape& shape, const SuiteOptions& options) {
  GemmDesc desc;
  desc.type = shape.type;
  desc.m = shape.total_m();
  desc.n = shape.n;
  desc.k = shape.k;
  desc.num_groups = shape.groups;
  desc.d_dtype = options.out_dtype;
  desc.major_a = layout_major_a(options.layout);
  desc.major_b = layout_major_b(options.layout);
  return desc;
}

ShapeRun prepare(const BenchShape& shape, const SuiteOptions& options, ShapeBuffers& buf,
                 std::uint64_t seed) {
  const std::int64_t m = shape.total_m(), n = shape.n, k = shape.k, g = shape.groups;
  const Major major_a = layout_major_a(options.layout), major_b = layout_major_b(options.layout);
  const std::size_t d_elem = dtype_bits(options.out_dtype) / 8;
  buf.a = random_bf16_buffer(static_cast<std::size_t>(m * k), seed);
  buf.b = random_bf16_buffer(static_cast<std::size_t>(g * n * k), seed + 1);
  buf.d_ours = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);
  buf.d_cublas = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);
  const TensorView a = operand_view(buf.a.get(), m, k, major_a);
  const TensorView d_ours = TensorView::matrix(buf.d_ours.get(), options.out_dtype, m, n, n, 1);
  const TensorView d_cublas = TensorView::matrix(buf.d_cublas.get(), options.out_dtype, m, n, n, 1);
  GemmOptions gemm_options;
  gemm_options.num_sms = options.num_sms;

  ShapeRun run;
  if (shape.type == GemmType::kNormal) {
    const TensorView b = operand_view(buf.b.get(), n, k, major_b);
    run.ours = [=](cudaStream_t s) {
      GemmOptions o = gemm_options;
      o.stream = s;
      bf16_gemm(a, b, d_ours, nullptr, o);
    };
    run.cublas = [=](cudaStream_t s) { cublaslt_gemm(a, b, d_cublas, nullptr, s); };
    run.cublas_method = "cublasLt, 1 call per GEMM";
    return run;
  }

  // M-grouped contiguous: group g owns rows [g·m_per_group, (g+1)·m_per_group) of A and D.
  const std::int64_t mg = shape.m;
  std::vector<std::int32_t> group_of_row(static_cast<std::size_t>(m));
  for (std::int64_t r = 0; r < m; ++r) group_of_row[r] = static_cast<std::int32_t>(r / mg);
  buf.group_index = DeviceBuffer(group_of_row.size() * sizeof(std::int32_t));
  cuda_check(
      cudaMemcpy(buf.group_index.get(), group_of_row.data(), buf.group_index.bytes(), cudaMemcpyHostToDevice),
      "cudaMemcpy(grouped_layout)");
  const TensorView layout = int32_vector(buf.group_index.get(), m);
  const TensorView b_all = major_b == Major::kKMajor
                               ? TensorView::batched(buf.b.get(), DType::kBFloat16, g, n, k, n * k, k, 1)
                               : TensorView::batched(buf.b.get(), DType::kBFloat16, g, n, k, n * k, 1, n);
  run.ours = [=](cudaStream_t s) {
    GemmOptions o = gemm_options;
    o.stream = s;
    m_grouped_bf16_gemm_contiguous(a, b_all, d_ours, layout, /*use_psum_layout=*/false, o);
  };
  // Baseline: the same FLOPs as one cuBLASLt call per group on slices of A, B and D.
  std::vector<TensorView> a_slices, b_slices, d_slices;
  for (std::int64_t i = 0; i < g; ++i) {
    a_slices.push_back(
        operand_view(byte_offset(buf.a.get(), i * mg * k * kBf16Bytes), mg, k, Major::kKMajor));
    b_slices.push_back(operand_view(byte_offset(buf.b.get(), i * n * k * kBf16Bytes), n, k, major_b));
    d_slices.push_back(TensorView::matrix(byte_offset(buf.d_cublas.get(), i * mg * n * d_elem),
                                          options.out_dtype, mg, n, n, 1));
  }
  run.cublas = [=](cudaStream_t s) {
    for (std::size_t i = 0; i < a_slices.size(); ++i)
      cublaslt_gemm(a_slices[i], b_slices[i], d_slices[i], nullptr, s);
  };
  run.cublas_method = fmt::format("cublasLt, {} calls (one per group)", g);
  return run;
}

// The kernel family and the variant axes the compact config leaves out.
std::string variant_of(const BenchShape& shape, const GemmConfig& config) {
  const char* multicast = config.multicast == MulticastSide::kA   ? "A"
                          : config.multicast == MulticastSide::kB ? "B"
                                                                  : "none";
  return fmt::format("sm90_bf16 {}, multicast {}", gemm_type_name(shape.type), multicast);
}

BenchRow measure_shape(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                       std::uint64_t seed) {
  BenchRow row;
  row.kind = shape.type == GemmType::kNormal ? "dense" : "m_grouped_contiguous";
  row.groups = shape.groups;
  row.m = shape.total_m();
  row.n = shape.n;
  row.k = shape.k;
  row.out_dtype = std::string(dtype_name(options.out_dtype));
  row.layout = std::string(layout_name(options.layout));
  const ProblemLedger ledger = bench_ledger(shape, options.out_dtype, hw);
  row.flops = ledger.flops;
  row.min_bytes = ledger.min_bytes;
  row.floor_us = ledger.time_floor_s * 1e6;

  ShapeBuffers buf;
  const ShapeRun run = prepare(shape, options, buf, seed);
  row.cublas_method = run.cublas_method;
  const std::size_t d_count = static_cast<std::size_t>(row.m) * row.n;

  bool ours_ok = !options.baseline_only;
  if (ours_ok) {
    try {
      // The same choice bf16_gemm makes (src/api/gemm.cpp): num_sms clamped to the device, smem filled in.
      const GemmDesc desc = desc_of(shape, options);
      const int num_sms = options.num_sms > 0 ? std::min(options.num_sms, hw.num_sms) : hw.num_sms;
      GemmConfig config = select_config(desc, hw, num_sms);
      if (config.smem_bytes == 0) config.smem_bytes = sm90_bf16_smem_bytes(desc, config);
      row.config = compact_config(config);
      row.config_full = to_string(config);
      row.variant = variant_of(shape, config);
      // All-ones bytes are NaN in bf16 and fp32: a kernel that skips part of D cannot pass the check.
      cuda_check(cudaMemset(buf.d_ours.get(), 0xFF, buf.d_ours.bytes()), "cudaMemset(D)");
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
  run.cublas(nullptr);
  cuda_check(cudaDeviceSynchronize(), "cuBLASLt (first call)");

  if (ours_ok) {
    const auto ours_host = to_host(buf.d_ours), cublas_host = to_host(buf.d_cublas);
    row.calc_diff = bench_detail::calc_diff(ours_host.data(), cublas_host.data(), d_count, options.out_dtype);
    if (!(row.calc_diff < options.diff_threshold))
      row.error = fmt::format("calc_diff(ours, cuBLASLt) = {:.3g}, above the sanity threshold {:.0e}",
                              row.calc_diff, options.diff_threshold);
    const BenchResult ours = bench(run.ours, options.timing);
    row.ours = ours.stats;
    row.ours_iterations = ours.iterations;
  }
  const BenchResult cublas = bench(run.cublas, options.timing);
  row.cublas = cublas.stats;
  row.cublas_iterations = cublas.iterations;
  return row;
}

}  // namespace

void validate_suite_options(const SuiteOptions& options) {
  TILEGEMM_REQUIRE(!options.shapes.empty(), "--suite", "at least one shape", "none");
  TILEGEMM_REQUIRE(options.out_dtype == DType::kBFloat16 || options.out_dtype == DType::kFloat32,
                   "--out-dtype", "bf16 or fp32", fmt::format("'{}'", dtype_name(options.out_dtype)));
  TILEGEMM_REQUIRE(options.num_sms >= 0, "--num-sms", "0 (every SM) or a positive SM count",
                   std::to_string(options.num_sms));
  TILEGEMM_REQUIRE(options.device >= 0, "--device", "a device index >= 0", std::to_string(options.device));
  TILEGEMM_REQUIRE(options.diff_threshold > 0, "diff_threshold", "> 0",
                   fmt::format("{}", options.diff_threshold));
  iteration_counts(1.0, options.timing.warmup_ms, options.timing.rep_ms);
  for (const BenchShape& s : options.shapes) {
    TILEGEMM_REQUIRE(s.m > 0, "--m", "a positive size", std::to_string(s.m));
    TILEGEMM_REQUIRE(s.n > 0, "--n", "a positive size", std::to_string(s.n));
    TILEGEMM_REQUIRE(s.k > 0, "--k", "a positive size", std::to_string(s.k));
    TILEGEMM_REQUIRE(s.groups > 0, "groups", "a positive count", std::to_string(s.groups));
    if (s.type == GemmType::kMGroupedContiguous) {
      TILEGEMM_REQUIRE(layout_major_a(options.layout) == Major::kKMajor, "--layout",
                       "nt or nn for M-grouped shapes (A must be K-major)",
                       fmt::format("'{}'", layout_name(options.layout)));
      TILEGEMM_REQUIRE(options.out_dtype == DType::kBFloat16, "--out-dtype", "bf16 for M-grouped shapes",
                       fmt::format("'{}'", dtype_name(options.out_dtype)));
    } else {
      TILEGEMM_REQUIRE(s.type == GemmType::kNormal, "shape type", "normal or m_grouped_contiguous",
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
