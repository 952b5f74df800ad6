// int8 x int8 GEMM on the GPU against an exact reference: D = scale_a[m] · scale_b[n] · Σ a·b with the sums in int64
// on the host. Ragged M, N and K (a partial last K block), the selector's picks and forced split-K, stream-K, two-atom
// stages and B multicast. D starts poisoned inside guard bands: every element must be written and nothing around it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../cpp/scoped_env.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/int8_gemm.hpp"

namespace {

using gpu_test::GuardedTensor;
using tilegemm::DType;

struct Int8Case {
  int m, n, k;
  const char* filter;  // TILEGEMM_CONFIG_FILTER ("" = the selector's pick)
  const char* scheme;  // TILEGEMM_GEMM_SCHEME ("" = the selector's)
};

void PrintTo(const Int8Case& c, std::ostream* os) {
  *os << c.m << "x" << c.n << "x" << c.k << " " << c.filter << " " << c.scheme;
}

std::string case_name(const ::testing::TestParamInfo<Int8Case>& info) {
  std::string name =
      fmt::format("m{}_n{}_k{}_{}_{}", info.param.m, info.param.n, info.param.k, info.param.filter, info.param.scheme);
  for (char& ch : name)
    if (ch == '=' || ch == ',' || ch == '-' || ch == ':') ch = '_';
  return name;
}

// A device fp32 vector.
struct DeviceScales {
  void* ptr = nullptr;
  tilegemm::TensorView view;
  explicit DeviceScales(const std::vector<float>& host) {
    gpu_test::cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(host.size(), 1) * sizeof(float)), "cudaMalloc");
    gpu_test::cuda_check(cudaMemcpy(ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "upload");
    view.data = ptr, view.dtype = DType::kFloat32, view.ndim = 1;
    view.shape = {static_cast<std::int64_t>(host.size()), 0, 0, 0}, view.strides = {1, 0, 0, 0};
  }
  ~DeviceScales() { cudaFree(ptr); }
  DeviceScales(const DeviceScales&) = delete;
  DeviceScales& operator=(const DeviceScales&) = delete;
};

class Int8GemmGpu : public ::testing::TestWithParam<Int8Case> {};

TEST_P(Int8GemmGpu, MatchesExactReference) {
  GPU_TEST_REQUIRE_SM90();
  const Int8Case c = GetParam();
  test_util::ScopedEnv filter("TILEGEMM_CONFIG_FILTER", c.filter);
  test_util::ScopedEnv scheme("TILEGEMM_GEMM_SCHEME", c.scheme);
  std::mt19937_64 rng(gpu_test::next_seed());
  // Operands over the whole int8 range (-128 included), never all zero; rows padded by 16 bytes.
  GuardedTensor a(DType::kInt8, 0, c.m, c.k, c.k + 16), b(DType::kInt8, 0, c.n, c.k, c.k + 16);
  GuardedTensor d(DType::kBFloat16, 0, c.m, c.n, c.n + 8);
  std::vector<std::int8_t> a_host(static_cast<std::size_t>(c.m) * c.k), b_host(static_cast<std::size_t>(c.n) * c.k);
  std::uniform_int_distribution<int> code(-128, 127);
  for (int i = 0; i < c.m; ++i)
    for (int kk = 0; kk < c.k; ++kk) a.set(0, i, kk, a_host[static_cast<std::size_t>(i) * c.k + kk] = code(rng));
  for (int j = 0; j < c.n; ++j)
    for (int kk = 0; kk < c.k; ++kk) b.set(0, j, kk, b_host[static_cast<std::size_t>(j) * c.k + kk] = code(rng));
  a.upload(), b.upload();
  // Scales of both signs over four octaves, as per-token and per-channel absmax scales spread.
  std::vector<float> sa(c.m), sb(c.n);
  std::uniform_real_distribution<double> octave(-14, -10);
  for (float& s : sa) s = static_cast<float>(std::exp2(octave(rng)) * (rng() % 8 == 0 ? -1 : 1));
  for (float& s : sb) s = static_cast<float>(std::exp2(octave(rng)));
  const DeviceScales dsa(sa), dsb(sb);

  tilegemm::int8_gemm_nt(a.device_view(), b.device_view(), dsa.view, dsb.view, d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "int8_gemm_nt");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();

  // The int32 sums are exact; what remains is fp32 scaling (and split partials summed in fp32) and D's bf16 rounding.
  std::vector<double> row_worst(c.m);
  gpu_test::parallel_for(c.m, [&](std::int64_t i) {
    for (int j = 0; j < c.n; ++j) {
      std::int64_t sum = 0, mag = 0;
      for (int kk = 0; kk < c.k; ++kk) {
        const int p = a_host[i * c.k + kk] * b_host[static_cast<std::size_t>(j) * c.k + kk];
        sum += p, mag += std::abs(p);
      }
      const double scale = static_cast<double>(sa[i]) * sb[j];
      const double ref = scale * static_cast<double>(sum), got = d.get(0, i, j);
      const double bound = 0x1.0p-8 * std::abs(ref) + 0x1.0p-20 * std::abs(scale) * static_cast<double>(mag) + 1e-30;
      row_worst[i] = std::max(row_worst[i], std::abs(got - ref) / bound);
    }
  });
  const double worst = *std::max_element(row_worst.begin(), row_worst.end());
  gpu_test::report("int8_gemm_nt", fmt::format("{}x{}x{}", c.m, c.n, c.k), "nt", "int8",
                   fmt::format("worst {:.3g} of the rounding bound ({} {})", worst, c.filter, c.scheme), worst <= 1);
  EXPECT_LE(worst, 1.0) << "largest error relative to the rounding bound";
}

// DeepSeek-V3 projections at decode and prefill sizes, ragged M, N and K (K = 1552: a partial last 128-wide block),
// and the kernel's variants forced.
INSTANTIATE_TEST_SUITE_P(Shapes, Int8GemmGpu,
                         ::testing::Values(Int8Case{1, 2112, 7168, "", ""}, Int8Case{7, 576, 1552, "", ""},
                                           Int8Case{64, 24576, 1536, "", ""}, Int8Case{129, 4096, 7168, "", ""},
                                           Int8Case{1000, 7168, 2048, "", ""}, Int8Case{4096, 4096, 7168, "", ""},
                                           Int8Case{333, 1000, 1024, "block_n=48", ""},
                                           Int8Case{200, 2112, 7168, "block_m=64,block_n=64", "split-k:4"},
                                           Int8Case{200, 2112, 7168, "block_m=128,block_n=128", "stream-k"},
                                           Int8Case{512, 4096, 4096, "block_m=128,block_n=256", "data-parallel"},
                                           Int8Case{512, 4096, 4096, "cluster_m=2", "data-parallel"},
                                           Int8Case{96, 2048, 4096, "block_n=16", ""},
                                           Int8Case{96, 2048, 4096, "block_k=256", ""},
                                           Int8Case{96, 2048, 4096, "block_k=128", ""}),
                         case_name);

}  // namespace
