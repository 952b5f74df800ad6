// Problem-level ledger: FLOPs, minimum bytes per operand, intensity, balance, bound class, floors.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

std::string_view bound_name(BoundClass b) {
  return b == BoundClass::kCompute ? "compute" : "memory";
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

DType OperandDtypes::math_dtype() const {
  if (math) return *math;
  return dtype_bits(a) >= dtype_bits(b) ? a : b;
}

namespace {

void validate_sf(const ScaleFactors& sf, const char* argument) {
  if (!sf.present()) return;
  TILEGEMM_REQUIRE(sf.gran_mn > 0 && sf.gran_k > 0, argument, "positive granularities MNxK such as 1x128",
                   fmt::format("{}x{}", sf.gran_mn, sf.gran_k));
  TILEGEMM_REQUIRE(sf.bits == 8 || sf.bits == 32, argument, "8-bit (UE8M0) or 32-bit (fp32) scales",
                   fmt::format("{} bits", sf.bits));
}

}  // namespace

void validate_problem_shape(const ProblemShape& s) {
  constexpr std::int64_t kMaxSize = (std::int64_t{1} << 31) - 1;
  const std::string expected =
      fmt::format("a positive integer <= {} (2^31 - 1, the largest size the kernels take)", kMaxSize);
  for (const auto& [value, name] :
       {std::pair{s.m, "--m"}, std::pair{s.n, "--n"}, std::pair{s.k, "--k"}, std::pair{s.batch, "--batch"}})
    TILEGEMM_REQUIRE(value > 0 && value <= kMaxSize, name, expected, std::to_string(value));
  TILEGEMM_REQUIRE(!s.grouped || s.batch <= s.m, "--batch",
                   fmt::format("at most M = {} groups (M counts the rows of all groups)", s.m),
                   std::to_string(s.batch));
  const double outputs =
      static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.grouped ? 1 : s.batch);
  TILEGEMM_REQUIRE(
      outputs < 0x1p62, "--m",
      fmt::format("sizes whose output, {}M x N, holds fewer than 2^62 elements", s.grouped ? "" : "batch x "),
      fmt::format("--m {} --n {} --batch {}", s.m, s.n, s.batch));
  TILEGEMM_REQUIRE(std::isfinite(s.extra_bytes) && s.extra_bytes >= 0, "--extra-bytes", "a finite number >= 0",
                   fmt::format("{}", s.extra_bytes));
}

double scale_factor_bytes(const ScaleFactors& sf, std::int64_t rows, std::int64_t k) {
  if (!sf.present()) return 0;
  return static_cast<double>(ceil_div(rows, sf.gran_mn)) * static_cast<double>(ceil_div(k, sf.gran_k)) * sf.bits / 8.0;
}

ProblemLedger problem_ledger(const ProblemShape& shape, const OperandDtypes& dtypes, const HardwareModel& hw) {
  validate_problem_shape(shape);
  validate_sf(dtypes.sf_a, "--sf-a");
  validate_sf(dtypes.sf_b, "--sf-b");
  TILEGEMM_REQUIRE(hw.hbm_gbps > 0, "--hbm-gbps", "a bandwidth > 0 GB/s", fmt::format("{}", hw.hbm_gbps));

  ProblemLedger p;
  p.shape = shape;
  p.dtypes = dtypes;
  p.math = dtypes.math_dtype();

  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n), k = static_cast<double>(shape.k);
  // Grouped: m already counts every group's rows; only B is per group. Batched: everything is per problem.
  const double problems_a = shape.grouped ? 1.0 : static_cast<double>(shape.batch);
  const double problems_b = static_cast<double>(shape.batch);

  p.flops = 2.0 * m * n * k * problems_a;
  p.bytes.a = dtype_bytes(dtypes.a, m * k) * problems_a;
  p.bytes.b = dtype_bytes(dtypes.b, n * k) * problems_b;
  p.bytes.sf_a = scale_factor_bytes(dtypes.sf_a, shape.m, shape.k) * problems_a;
  p.bytes.sf_b = scale_factor_bytes(dtypes.sf_b, shape.n, shape.k) * problems_b;
  p.bytes.c = dtypes.with_c ? dtype_bytes(dtypes.c, m * n) * problems_a : 0.0;
  p.bytes.d = dtype_bytes(dtypes.d, m * n) * problems_a;
  p.bytes.extra = shape.extra_bytes;
  p.min_bytes = p.bytes.total();

  p.intensity_ab = p.flops / p.bytes.ab();
  p.intensity_all = p.flops / p.min_bytes;
  p.peak_flops = hw.peak_flops(p.math);
  p.bandwidth = hw.hbm_bytes_per_s();
  p.machine_balance = p.peak_flops / p.bandwidth;
  p.bound = p.intensity_all >= p.machine_balance ? BoundClass::kCompute : BoundClass::kMemory;
  p.compute_floor_s = p.flops / p.peak_flops;
  p.memory_floor_s = p.min_bytes / p.bandwidth;
  p.time_floor_s = std::max(p.compute_floor_s, p.memory_floor_s);
  // Rung 0: each of the M·N outputs streams its K-long A row and B column from DRAM.
  p.naive_ab_bytes = (dtype_bits(dtypes.a) + dtype_bits(dtypes.b)) / 8.0 * m * n * k * problems_a;
  return p;
}

TimingLedger timing_ledger(const ProblemLedger& problem, double time_us) {
  TILEGEMM_REQUIRE(std::isfinite(time_us) && time_us > 0, "--time-us", "a time > 0 microseconds",
                   fmt::format("{}", time_us));
  TimingLedger t;
  t.time_s = time_us * 1e-6;
  t.tflops = problem.flops / t.time_s / 1e12;
  t.gbps = problem.min_bytes / t.time_s / 1e9;
  t.fraction_of_peak = problem.compute_floor_s / t.time_s;
  t.fraction_of_bandwidth = problem.memory_floor_s / t.time_s;
  t.fraction_of_floor = problem.time_floor_s / t.time_s;
  return t;
}

namespace {
// DeepSeek-V3's projection weights as (N, K), each crossed with a list of token counts M.
constexpr std::pair<std::int64_t, std::int64_t> kDeepSeekNKs[] = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                                  {7168, 16384}, {4096, 7168},  {7168, 2048}};

std::vector<ProblemShape> deepseek_weights_times(std::initializer_list<std::int64_t> ms) {
  std::vector<ProblemShape> shapes;
  for (auto m : ms)
    for (auto [n, k] : kDeepSeekNKs) {
      ProblemShape s;
      s.m = m, s.n = n, s.k = k;
      shapes.push_back(s);
    }
  return shapes;
}
}  // namespace

std::vector<ProblemShape> deepseek_suite() {
  return deepseek_weights_times({64, 128, 4096});
}

std::vector<ProblemShape> deepseek_decode_suite() {
  return deepseek_weights_times({1, 8, 16, 32});
}

}  // namespace tilegemm
