// `tilegemm ladder` on a GPU: one problem, fresh random inputs, every rung checked against the float64
// reference and timed with the bench harness (CUDA events, L2 flush before each call, median).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "bench/host_data.hpp"
#include "ladder/ladder.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"
#include "timer/device_buffer.hpp"

namespace tilegemm::ladder {

namespace {

using bench_detail::cuda_check;
using bench_detail::DeviceBuffer;

// Above this many multiply-adds the float64 reference checks a sample of rows (as the GPU tests do).
constexpr double kFullReferenceLimit = 2.0e9;
constexpr std::int64_t kSampledRows = 64;

// All rows, or the first, the last and kSampledRows - 2 others drawn from `seed`.
std::vector<std::int64_t> rows_to_check(std::int64_t m, double multiply_adds, std::uint64_t seed) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(m));
  std::iota(all.begin(), all.end(), 0);
  if (multiply_adds <= kFullReferenceLimit || m <= kSampledRows) return all;
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin() + 1, all.end() - 1, rng);
  std::vector<std::int64_t> rows(all.begin(), all.begin() + kSampledRows - 1);
  rows.push_back(m - 1);
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The checked rows of D (bf16 on the device, row stride n) as doubles.
std::vector<double> download_rows(const void* d, std::int64_t m, std::int64_t n,
                                  const std::vector<std::int64_t>& rows) {
  std::vector<std::uint16_t> host;
  if (static_cast<std::int64_t>(rows.size()) == m) {
    host.resize(static_cast<std::size_t>(m * n));
    cuda_check(cudaMemcpy(host.data(), d, host.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy(D)");
  } else {
    host.resize(rows.size() * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < rows.size(); ++i)
      cuda_check(cudaMemcpy(host.data() + i * static_cast<std::size_t>(n),
                            static_cast<const std::uint16_t*>(d) + rows[i] * n, n * 2, cudaMemcpyDeviceToHost),
                 "cudaMemcpy(D row)");
  }
  std::vector<double> out(host.size());
  std::transform(host.begin(), host.end(), out.begin(), [](std::uint16_t x) { return double(bf16_to_float(x)); });
  return out;
}

}  // namespace

std::string why_no_ladder_gpu(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return fmt::format("no usable CUDA GPU ({})", cudaGetErrorString(status));
  if (count == 0) return "no CUDA GPU found";
  if (device < 0 || device >= count) return fmt::format("no CUDA device {} (found {})", device, count);
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (major != 9)
    return fmt::format("the ladder's kernels are built for sm_90a; device {} has compute capability {}.{}", device,
                       major, minor);
  return {};
}

LadderReport run_ladder(const LadderOptions& options) {
  const std::string why = why_no_ladder_gpu(options.device);
  if (!why.empty()) throw RuntimeError(why);
  cuda_check(cudaSetDevice(options.device), "cudaSetDevice");
  const HardwareModel hw = hardware_from_device(options.device);
  LadderReport report = ledger_report(options, hw);
  report.gpu_name = hw.name;
  const std::int64_t m = options.m, n = options.n, k = options.k;

  // Inputs: uniform in (-1, 1), never zero, fresh for each seed.
  std::vector<std::uint16_t> a_host(static_cast<std::size_t>(m * k)), b_host(static_cast<std::size_t>(n * k));
  bench_detail::fill_random_bf16(a_host.data(), a_host.size(), options.seed);
  bench_detail::fill_random_bf16(b_host.data(), b_host.size(), options.seed + 1);
  DeviceBuffer a(a_host.size() * 2), b(b_host.size() * 2), d(static_cast<std::size_t>(m * n) * 2);
  cuda_check(cudaMemcpy(a.get(), a_host.data(), a.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(A)");
  cuda_check(cudaMemcpy(b.get(), b_host.data(), b.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(B)");
  const TensorView a_dev = TensorView::matrix(a.get(), DType::kBFloat16, m, k, k);
  const TensorView b_dev = TensorView::matrix(b.get(), DType::kBFloat16, n, k, k);
  const TensorView d_dev = TensorView::matrix(d.get(), DType::kBFloat16, m, n, n);

  const std::vector<std::int64_t> rows = rows_to_check(m, double(m) * n * k, options.seed + 2);
  report.checked_rows = static_cast<std::int64_t>(rows.size());
  const std::vector<double> want =
      tilegemm::reference_gemm_rows(TensorView::matrix(a_host.data(), DType::kBFloat16, m, k, k),
                                    TensorView::matrix(b_host.data(), DType::kBFloat16, n, k, k), nullptr, rows);

  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  BenchOptions timing;
  timing.warmup_ms = options.warmup_ms;
  timing.rep_ms = options.rep_ms;
  timing.stream = stream;
  const double flops = 2.0 * m * n * k;
  for (LadderRow& row : report.rows) {
    const int rung = row.rung.index;
    try {
      // Poison D (all bits set: NaN in bf16) so an element a rung fails to write fails the check.
      cuda_check(cudaMemsetAsync(d.get(), 0xff, d.bytes(), stream), "cudaMemsetAsync(D)");
      run_rung(rung, a_dev, b_dev, d_dev, stream);
      cuda_check(cudaStreamSynchronize(stream), fmt::format("rung {}", rung).c_str());
      row.calc_diff = calc_diff(download_rows(d.get(), m, n, rows), want);
      row.passed = row.calc_diff < options.max_diff;  // NaN fails
      if (!row.passed) row.error = fmt::format("calc_diff {:.3e} >= {:.0e}", row.calc_diff, options.max_diff);
      const BenchResult result = bench([&](cudaStream_t s) { run_rung(rung, a_dev, b_dev, d_dev, s); }, timing);
      row.stats = result.stats;
      row.measured = true;
      row.tflops = flops / (row.stats.median_us * 1e-6) / 1e12;
    } catch (const std::exception& e) {
      row.passed = false;
      row.error = e.what();
      cudaGetLastError();  // clear a (non-sticky) launch error so the next rung starts clean
    }
  }
  cudaStreamDestroy(stream);
  for (std::size_t i = 1; i < report.rows.size(); ++i) {
    const LadderRow &prev = report.rows[i - 1], &cur = report.rows[i];
    if (prev.measured && cur.measured) report.rows[i].speedup = prev.stats.median_us / cur.stats.median_us;
  }
  return report;
}

}  // namespace tilegemm::ladder
