#pragma once
// One dense (or batched) GEMM check: fresh random operands in the layout under test, D poisoned between
// guard bands, the operation, then coverage (every element written, nothing else) and calc_diff against
// the float64 reference. Used for both bf16_gemm and the cuBLASLt baseline.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "tilegemm/errors.hpp"

namespace gpu_test {

struct DenseCase {
  std::int64_t batch = 0;  // 0 = 2-D views
  std::int64_t m = 0, n = 0, k = 0;
  Layout layout = Layout::kNT;
  DType d_dtype = DType::kBFloat16;
  CMode c_mode = CMode::kNone;
  std::int64_t d_pad = 0;  // extra elements per row of D (and C): must stay untouched
};

inline std::string dtype_label(DType t) {
  return t == DType::kFloat32 ? "fp32" : "bf16";
}

inline std::string case_name(const DenseCase& c) {
  return fmt::format("{}m{}_n{}_k{}_{}_{}_c{}{}", c.batch ? fmt::format("b{}_", c.batch) : "", c.m, c.n, c.k,
                     layout_name(c.layout), dtype_label(c.d_dtype),
                     c.c_mode == CMode::kNone       ? "none"
                     : c.c_mode == CMode::kSeparate ? "sep"
                                                    : "inplace",
                     c.d_pad ? fmt::format("_pad{}", c.d_pad) : "");
}

// GoogleTest prints parameters with this (readable names in gpu-tests.json instead of raw bytes).
inline void PrintTo(const DenseCase& c, std::ostream* os) {
  *os << case_name(c);
}

// What TMA can describe: every non-contiguous stride a multiple of 16 bytes. A K-major operand needs
// K % 8 == 0 (bf16), an MN-major A needs M % 8 == 0, an MN-major B N % 8 == 0, D its row stride. A single row stored
// MN-major is contiguous along K as well (its [1, K] view has unit strides): the API reads it K-major.
inline bool tma_legal(const DenseCase& c) {
  const std::int64_t a_ld = a_mn_major(c.layout) && c.m > 1 ? c.m : c.k;
  const std::int64_t b_ld = b_mn_major(c.layout) && c.n > 1 ? c.n : c.k;
  const std::int64_t d_row_bytes = (c.n + c.d_pad) * (c.d_dtype == DType::kFloat32 ? 4 : 2);
  return (a_ld * 2) % 16 == 0 && (b_ld * 2) % 16 == 0 && d_row_bytes % 16 == 0;
}

// The operation under test. `a`/`b` are either the logical [M,K]/[N,K] views (bf16_gemm, cublaslt_gemm)
// or the storage-shaped views of DeepGEMM's named layouts (cublaslt_gemm_nn takes b as [K,N], ...).
using DenseFn = std::function<void(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c)>;

inline void run_dense_case(const std::string& op, const DenseCase& cs, const DenseFn& fn, bool storage_operands,
                           bool expect_accepted) {
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("{} {} seed {}", op, case_name(cs), seed));
  const bool a_mn = a_mn_major(cs.layout), b_mn = b_mn_major(cs.layout);
  GuardedTensor a(DType::kBFloat16, cs.batch, a_mn ? cs.k : cs.m, a_mn ? cs.m : cs.k);
  GuardedTensor b(DType::kBFloat16, cs.batch, b_mn ? cs.k : cs.n, b_mn ? cs.n : cs.k);
  GuardedTensor d(cs.d_dtype, cs.batch, cs.m, cs.n, cs.n + cs.d_pad);
  a.fill_random(seed * 4 + 0);
  b.fill_random(seed * 4 + 1);
  std::unique_ptr<GuardedTensor> c_separate;
  if (cs.c_mode == CMode::kSeparate) {
    c_separate = std::make_unique<GuardedTensor>(cs.d_dtype, cs.batch, cs.m, cs.n, cs.n + cs.d_pad);
    c_separate->fill_random(seed * 4 + 2);
  } else if (cs.c_mode == CMode::kInPlace) {
    d.fill_random(seed * 4 + 2);
  }
  auto logical = [](const TensorView& v, bool mn) { return mn ? tilegemm::transpose_last2(v) : v; };
  const TensorView a_dev = storage_operands ? a.device_view() : logical(a.device_view(), a_mn);
  const TensorView b_dev = storage_operands ? b.device_view() : logical(b.device_view(), b_mn);
  const TensorView d_dev = d.device_view();
  const TensorView c_dev = c_separate ? c_separate->device_view() : d_dev;
  const TensorView* c_arg = cs.c_mode == CMode::kNone ? nullptr : &c_dev;
  const std::string shape = fmt::format("{}{}x{}x{}", cs.batch ? fmt::format("{}x", cs.batch) : "", cs.m, cs.n, cs.k);
  const std::string dtype = fmt::format("d={} c={}{}", dtype_label(cs.d_dtype), c_mode_name(cs.c_mode),
                                        cs.d_pad ? fmt::format(" ld+{}", cs.d_pad) : "");

  if (!expect_accepted) {
    const auto before = d.snapshot();
    EXPECT_THROW(fn(a_dev, b_dev, d_dev, c_arg), tilegemm::InvalidArgument) << "TMA cannot describe these strides";
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    d.download();
    EXPECT_TRUE(d.unchanged_since(before)) << "a rejected call wrote to d";
    report(op, shape, layout_name(cs.layout), dtype, "rejected (InvalidArgument expected)",
           !::testing::Test::HasFailure());
    return;
  }

  // The reference reads the host mirrors, so it is computed before D (which may hold C) is downloaded.
  const TensorView a_host = logical(a.host_view(), a_mn), b_host = logical(b.host_view(), b_mn);
  const TensorView c_host = c_separate ? c_separate->host_view() : d.host_view();
  const TensorView* c_ref = cs.c_mode == CMode::kNone ? nullptr : &c_host;
  const double multiply_adds = static_cast<double>(std::max<std::int64_t>(cs.batch, 1)) * cs.m * cs.n * cs.k;
  std::vector<std::int64_t> rows = cs.batch ? rows_to_check(cs.m, 0, 0) : rows_to_check(cs.m, multiply_adds, seed);
  const bool sampled = static_cast<std::int64_t>(rows.size()) < cs.m;
  const std::vector<double> want = sampled ? tilegemm::reference_gemm_rows(a_host, b_host, c_ref, rows)
                                           : tilegemm::reference_gemm(a_host, b_host, c_ref);

  fn(a_dev, b_dev, d_dev, c_arg);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  cuda_check(cudaGetLastError(), "cudaGetLastError after the GEMM");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << cov.describe();

  std::vector<double> got;
  got.reserve(want.size());
  for (std::int64_t g = 0; g < d.batch(); ++g)
    for (std::int64_t r : rows)
      for (std::int64_t j = 0; j < cs.n; ++j) got.push_back(d.get(g, r, j));
  const double diff = tilegemm::calc_diff(got, want);
  EXPECT_LT(diff, kMaxDiff);  // NaN (an unwritten poisoned element) fails too
  const std::string check = fmt::format(
      "{} | calc_diff {:.3e}", sampled ? fmt::format("{} of {} rows sampled", rows.size(), cs.m) : "all rows", diff);
  report(op, shape, layout_name(cs.layout), dtype, check, !::testing::Test::HasFailure());
}

}  // namespace gpu_test
