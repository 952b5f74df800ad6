// tf32_hc_prenorm_gemm on the GPU against a float64 reference: D = A·Bᵀ (TF32 products) and sqr_sum = Σ A², with the
// library's split (summed in the kernel, in clusters of CTAs or by the last CTA), the caller's splits (one slice each)
// and ragged K (TMA zero fill). Outputs start poisoned inside guard bands: every element of D and sqr_sum must be
// written and nothing around them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "../cpp/scoped_env.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/hc_prenorm.hpp"

namespace {

using gpu_test::GuardedTensor;
using tilegemm::DType;
using tilegemm::TensorView;

struct HcCase {
  int m, n, k;
  std::optional<int> splits;
  const char* filter = "";  // TILEGEMM_CONFIG_FILTER: the library's split and cluster pinned
};

std::string case_name(const HcCase& c) {
  std::string pins = c.filter;
  std::replace(pins.begin(), pins.end(), '=', '_'), std::replace(pins.begin(), pins.end(), ',', '_');
  return fmt::format("m{}_n{}_k{}_{}{}", c.m, c.n, c.k, c.splits ? fmt::format("s{}", *c.splits) : "auto",
                     pins.empty() ? "" : "_" + pins);
}

// The largest error TF32 products may add to a dot product: B's fp32 value loses mantissa bits below 2^-10 of it
// (rounded or truncated), A (bf16) is exact; the fp32 sum adds a little more. Relative to Σ|a·b|.
constexpr double kTf32Bound = 0x1.0p-10;

class HcPrenormGpu : public ::testing::TestWithParam<HcCase> {};

TEST_P(HcPrenormGpu, MatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const HcCase c = GetParam();
  test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", c.filter);
  const int slices = c.splits.value_or(1);
  // A's rows padded to test the row stride (a multiple of 8 elements: TMA's 16 bytes).
  GuardedTensor a(DType::kBFloat16, 0, c.m, c.k, c.k + 64), b(DType::kFloat32, 0, c.n, c.k);
  GuardedTensor d(DType::kFloat32, c.splits ? slices : 0, c.m, c.n), s(DType::kFloat32, 0, slices, c.m);
  a.fill_random(gpu_test::next_seed());
  b.fill_random(gpu_test::next_seed());
  TensorView sv = s.device_view();
  if (!c.splits) sv.ndim = 1, sv.shape[0] = c.m, sv.strides[0] = 1;
  tilegemm::tf32_hc_prenorm_gemm(a.device_view(), b.device_view(), d.device_view(), sv, c.splits);
  gpu_test::cuda_check(cudaDeviceSynchronize(), "tf32_hc_prenorm_gemm");
  d.download(), s.download();
  const auto d_cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  const auto s_cov = s.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(d_cov.ok()) << "d: " << d_cov.describe();
  EXPECT_TRUE(s_cov.ok()) << "sqr_sum: " << s_cov.describe();

  // Per row: the largest error of D relative to Σ|a·b|, sqr_sum's relative error, and calc_diff's two sums.
  std::vector<double> row_worst(c.m), row_sq(c.m), row_num(c.m), row_den(c.m);
  gpu_test::parallel_for(c.m, [&](std::int64_t m) {
    std::vector<double> row_a(static_cast<std::size_t>(c.k));
    double sq = 0, got_sq = 0;
    for (int k = 0; k < c.k; ++k) row_a[k] = a.get(0, m, k), sq += row_a[k] * row_a[k];
    for (int i = 0; i < slices; ++i) got_sq += s.get(0, i, m);
    row_sq[m] = std::abs(got_sq - sq) / sq;
    for (int n = 0; n < c.n; ++n) {
      double ref = 0, mag = 0, got = 0;
      for (int k = 0; k < c.k; ++k) {
        const double p = row_a[k] * b.get(0, n, k);
        ref += p, mag += std::abs(p);
      }
      for (int i = 0; i < slices; ++i) got += d.get(i, m, n);
      row_worst[m] = std::max(row_worst[m], std::abs(got - ref) / mag);
      row_num[m] += (got - ref) * (got - ref), row_den[m] += ref * ref;
    }
  });
  const double worst = *std::max_element(row_worst.begin(), row_worst.end());
  const double worst_sq = *std::max_element(row_sq.begin(), row_sq.end());
  const double num = std::accumulate(row_num.begin(), row_num.end(), 0.0);
  const double den = std::accumulate(row_den.begin(), row_den.end(), 0.0);
  const double diff = num / std::max(den, 1e-300);
  const bool ok = worst < kTf32Bound && worst_sq < 1e-5;
  gpu_test::report("tf32_hc_prenorm_gemm", case_name(c), "nt", "bf16xfp32",
                   fmt::format("calc_diff {:.3g}, worst {:.3g} of sum|ab|, sqr_sum {:.3g}", diff, worst, worst_sq), ok);
  EXPECT_LT(worst, kTf32Bound) << "largest error of D relative to sum |a*b|";
  EXPECT_LT(worst_sq, 1e-5) << "largest relative error of sqr_sum (fp32 sums of exact squares)";

  // The in-kernel split leaves its counters at zero and adds in split order: a second call gives the same bits.
  if (!c.splits) {
    const auto first = d.snapshot();
    tilegemm::tf32_hc_prenorm_gemm(a.device_view(), b.device_view(), d.device_view(), sv, std::nullopt);
    gpu_test::cuda_check(cudaDeviceSynchronize(), "tf32_hc_prenorm_gemm (again)");
    d.download();
    EXPECT_TRUE(d.unchanged_since(first)) << "a second call changed D";
  }
}

// DeepGEMM's test shapes (N = 24) at K 7168/7680, its caller's split of 16, and shapes off its grid: N 8/16/32, K
// not a multiple of the 128-wide stage, M = 1, more caller splits than K blocks (those slices hold zeros). Pinned
// library splits: one cluster per row block, several clusters (the workspace sum), a CTA whose share of a 3-word tile
// is empty, a short last row block, and clusters of one.
INSTANTIATE_TEST_SUITE_P(Shapes, HcPrenormGpu,
                         ::testing::Values(HcCase{13, 24, 7168, std::nullopt}, HcCase{137, 24, 7680, std::nullopt},
                                           HcCase{4096, 24, 7168, std::nullopt}, HcCase{137, 24, 7168, 16},
                                           HcCase{1, 32, 4096, std::nullopt}, HcCase{200, 8, 1000, std::nullopt},
                                           HcCase{300, 16, 2048, 3}, HcCase{64, 24, 256, 4},
                                           HcCase{137, 24, 7680, std::nullopt, "block_m=16,split_k=8,cluster_m=8"},
                                           HcCase{13, 24, 7168, std::nullopt, "block_m=16,split_k=32,cluster_m=8"},
                                           HcCase{1, 8, 4096, std::nullopt, "block_m=16,split_k=16,cluster_m=4"},
                                           HcCase{200, 8, 1000, std::nullopt, "block_m=64,split_k=4,cluster_m=2"},
                                           HcCase{13, 32, 28672, std::nullopt, "block_m=16,split_k=24,cluster_m=1"}),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
