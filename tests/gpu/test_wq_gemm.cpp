// The weight-only GEMM on the GPU against a float64 reference: D = A·Wᵀ with W decoded from int4 (group scales,
// zero points), int8 (channel scales) and MXFP4 codes, through both paths (decoded in registers at small M,
// dequantise + dense GEMM at large M), ragged N and K, splits summed in the kernel. D starts poisoned inside guard
// bands: every element must be written and nothing around it. wq_dequantize is checked weight by weight.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gpu_harness.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/weight_quant.hpp"

namespace {

using gpu_test::GuardedTensor;
using tilegemm::DType;
using tilegemm::WeightFormat;

struct WqCase {
  WeightFormat format;
  int group;  // int4's group size (int8: 0, mxfp4: 32)
  bool zeros;
  DType act, out;
  int m, n, k;
};

std::string case_name(const WqCase& c) {
  std::string packing(tilegemm::weight_format_name(c.format));
  if (c.format == WeightFormat::kInt4) packing += fmt::format("g{}{}", c.group, c.zeros ? "z" : "");
  return fmt::format("{}_{}_to_{}_m{}_n{}_k{}", packing, tilegemm::dtype_name(c.act), tilegemm::dtype_name(c.out), c.m,
                     c.n, c.k);
}

// 16-bit float bits of a value exactly representable in `dtype` (normal range).
std::uint16_t half_bits(double v, DType dtype) {
  const auto f = std::bit_cast<std::uint32_t>(static_cast<float>(v));
  if (dtype == DType::kBFloat16) return static_cast<std::uint16_t>(f >> 16);
  if (v == 0) return static_cast<std::uint16_t>((f >> 16) & 0x8000);
  const int e = static_cast<int>((f >> 23) & 0xff) - 127 + 15;
  return static_cast<std::uint16_t>(((f >> 16) & 0x8000) | (e << 10) | ((f >> 13) & 0x3ff));
}

double fp16_value(std::uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}

// Random codes and group data: scales of either sign around 2^-6, MXFP4 exponents up to 131 (an exponent shift).
tilegemm::WeightCodes random_weight(const WqCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  tilegemm::WeightCodes w;
  w.layout = tilegemm::make_weight_layout(c.format, c.n, c.k, c.group, c.zeros, c.act);
  w.codes.resize(static_cast<std::size_t>(c.n) * c.k);
  const int top = c.format == WeightFormat::kInt8 ? 255 : 15;
  for (auto& q : w.codes) q = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, top)(rng));
  if (c.format == WeightFormat::kInt4) {
    const std::size_t entries = static_cast<std::size_t>(c.n) * (c.k / c.group);
    for (std::size_t i = 0; i < entries; ++i) {
      const double s = std::ldexp(std::uniform_int_distribution<int>(64, 127)(rng), -12) * (rng() % 2 ? 1 : -1);
      w.scales.push_back(half_bits(s, c.act));
    }
    if (c.zeros)
      for (std::size_t i = 0; i < entries; ++i)
        w.zeros.push_back(static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 15)(rng)));
  } else if (c.format == WeightFormat::kMxfp4) {
    w.exponents.resize(static_cast<std::size_t>(c.n) * ((c.k + 31) / 32));
    for (auto& e : w.exponents) e = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(112, 131)(rng));
  } else {
    for (int i = 0; i < c.n; ++i) w.channel_scales.push_back(std::ldexp(1.0 + (rng() % 256) / 256.0, -10));
  }
  return w;
}

// A device copy of a host vector (null when empty).
template <class T>
struct DeviceArray {
  void* ptr = nullptr;
  explicit DeviceArray(const std::vector<T>& host) {
    if (host.empty()) return;
    gpu_test::cuda_check(cudaMalloc(&ptr, host.size() * sizeof(T)), "cudaMalloc");
    gpu_test::cuda_check(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

struct DeviceWeight {
  tilegemm::PackedWeight packed;
  DeviceArray<std::uint8_t> data, scales, zeros;
  DeviceArray<float> channel;
  explicit DeviceWeight(const tilegemm::WeightCodes& w)
      : packed(tilegemm::pack_weight(w)),
        data(packed.data),
        scales(packed.scales),
        zeros(packed.zeros),
        channel(packed.channel_scales) {}
  tilegemm::PackedWeightView view() const {
    return {packed.layout, data.ptr, scales.ptr, zeros.ptr, static_cast<const float*>(channel.ptr)};
  }
};

double value_of(const GuardedTensor& t, DType dtype, std::int64_t r, std::int64_t c) {
  return dtype == DType::kFloat16 ? fp16_value(t.bits16(0, r, c)) : t.get(0, r, c);
}

class WqGemmGpu : public ::testing::TestWithParam<WqCase> {};

TEST_P(WqGemmGpu, MatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const WqCase c = GetParam();
  const tilegemm::WeightCodes w = random_weight(c, gpu_test::next_seed());
  const DeviceWeight dw(w);
  // A's values are multiples of 2^-6 in [-2, 2] (exact in bf16 and fp16), never zero; rows padded by 8 elements.
  GuardedTensor a(c.act, 0, c.m, c.k, c.k + 8), d(c.out, 0, c.m, c.n, c.n + 8);
  std::mt19937_64 rng(gpu_test::next_seed());
  std::vector<double> a_host(static_cast<std::size_t>(c.m) * c.k);
  for (int i = 0; i < c.m; ++i)
    for (int kk = 0; kk < c.k; ++kk) {
      int q = std::uniform_int_distribution<int>(-128, 127)(rng);
      if (q == 0) q = 1;
      a_host[static_cast<std::size_t>(i) * c.k + kk] = std::ldexp(q, -6);
      a.set_bits16(0, i, kk, half_bits(std::ldexp(q, -6), c.act));
    }
  a.upload();
  tilegemm::wq_gemm_nt(a.device_view(), dw.view(), d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "wq_gemm_nt");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();

  std::vector<double> wt(static_cast<std::size_t>(c.n) * c.k);
  gpu_test::parallel_for(c.n, [&](std::int64_t r) {
    for (int kk = 0; kk < c.k; ++kk) wt[r * c.k + kk] = tilegemm::dequantized_weight(w, static_cast<int>(r), kk);
  });
  // The decoded weight is rounded to 16 bits once (int4 scale multiply, int8 channel scale in fp32), D once.
  const double rel = c.act == DType::kFloat16 ? 0x1.0p-10 : 0x1.0p-7;
  std::vector<double> row_worst(c.m), row_num(c.m), row_den(c.m);
  gpu_test::parallel_for(c.m, [&](std::int64_t i) {
    for (int r = 0; r < c.n; ++r) {
      double ref = 0, mag = 0;
      for (int kk = 0; kk < c.k; ++kk) {
        const double p = a_host[i * c.k + kk] * wt[static_cast<std::size_t>(r) * c.k + kk];
        ref += p, mag += std::abs(p);
      }
      const double got = value_of(d, c.out, i, r);
      const double bound = rel * mag + 0x1.0p-8 * std::abs(ref) + 1e-30;
      row_worst[i] = std::max(row_worst[i], std::abs(got - ref) / bound);
      row_num[i] += (got - ref) * (got - ref), row_den[i] += ref * ref;
    }
  });
  const double worst = *std::max_element(row_worst.begin(), row_worst.end());
  double num = 0, den = 0;
  for (int i = 0; i < c.m; ++i) num += row_num[i], den += row_den[i];
  const double diff = num / std::max(den, 1e-300);
  const auto config = tilegemm::select_wq_gemm_config(c.m, dw.packed.layout, c.out, tilegemm::hardware_preset("h200"),
                                                      tilegemm::hardware_preset("h200").num_sms);
  gpu_test::report("wq_gemm_nt", case_name(c), config.fused ? "fused" : "dequantise+dense",
                   std::string(tilegemm::dtype_name(c.act)),
                   fmt::format("rel err {:.3g}, worst {:.3g} of bound", diff, worst), worst <= 1 && diff < 1e-4);
  EXPECT_LE(worst, 1.0) << "largest error relative to rounding bound";
  EXPECT_LT(diff, 1e-4);

  // Splits are summed in split order and counters left at zero: a second call gives the same bits.
  const auto first = d.snapshot();
  tilegemm::wq_gemm_nt(a.device_view(), dw.view(), d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "wq_gemm_nt (again)");
  d.download();
  EXPECT_TRUE(d.unchanged_since(first)) << "a second call changed D";
}

TEST_P(WqGemmGpu, DequantizeMatchesEachWeight) {
  GPU_TEST_REQUIRE_SM90();
  const WqCase c = GetParam();
  if (c.m != 1) GTEST_SKIP() << "one dequantise check per packing (the M = 1 cases)";
  const tilegemm::WeightCodes w = random_weight(c, gpu_test::next_seed());
  const DeviceWeight dw(w);
  GuardedTensor out(c.act, 0, c.n, c.k, c.k + 8);
  tilegemm::wq_dequantize(dw.view(), out.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "wq_dequantize");
  out.download();
  const auto cov = out.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << "out: " << cov.describe();
  const double rel = c.act == DType::kFloat16 ? 0x1.0p-11 : 0x1.0p-8;  // half an ulp: one rounding
  int bad = 0;
  for (int r = 0; r < c.n && bad < 5; ++r)
    for (int kk = 0; kk < c.k && bad < 5; ++kk) {
      const double want = tilegemm::dequantized_weight(w, r, kk), got = value_of(out, c.act, r, kk);
      if (std::abs(got - want) > rel * std::abs(want)) {
        ++bad;
        ADD_FAILURE() << "(" << r << ", " << kk << "): got " << got << ", want " << want;
      }
    }
}

// Experts packed one by one and concatenated array by array: the grouped GEMMs' weight.
struct DeviceExperts {
  std::vector<tilegemm::WeightCodes> codes;
  tilegemm::PackedWeight all;  // every expert's arrays, one after another
  std::unique_ptr<DeviceArray<std::uint8_t>> data, scales, zeros;
  std::unique_ptr<DeviceArray<float>> channel;
  DeviceExperts(const WqCase& c, int experts) {
    for (int e = 0; e < experts; ++e) {
      codes.push_back(random_weight(c, gpu_test::next_seed()));
      const tilegemm::PackedWeight p = tilegemm::pack_weight(codes.back());
      // The grouped weight's MXFP4 exponent shift is the largest of its experts' (any shift at least an expert's
      // own keeps its multipliers in range; the packed bytes do not depend on it).
      if (e == 0) all.layout = p.layout;
      all.layout.exp_shift = std::max(all.layout.exp_shift, p.layout.exp_shift);
      all.data.insert(all.data.end(), p.data.begin(), p.data.end());
      all.scales.insert(all.scales.end(), p.scales.begin(), p.scales.end());
      all.zeros.insert(all.zeros.end(), p.zeros.begin(), p.zeros.end());
      all.channel_scales.insert(all.channel_scales.end(), p.channel_scales.begin(), p.channel_scales.end());
    }
    data = std::make_unique<DeviceArray<std::uint8_t>>(all.data);
    scales = std::make_unique<DeviceArray<std::uint8_t>>(all.scales);
    zeros = std::make_unique<DeviceArray<std::uint8_t>>(all.zeros);
    channel = std::make_unique<DeviceArray<float>>(all.channel_scales);
  }
  tilegemm::PackedWeightView view() const {
    return {all.layout,
            data->ptr,
            scales->ptr,
            zeros->ptr,
            static_cast<const float*>(channel->ptr),
            static_cast<int>(codes.size())};
  }
};

// Fills rows [0, rows) of matrix b of `a` with multiples of 2^-6 (never zero) and returns their values.
std::vector<double> fill_activations(GuardedTensor& a, DType act, std::int64_t b, std::int64_t rows, std::int64_t k,
                                     std::mt19937_64& rng) {
  std::vector<double> values(static_cast<std::size_t>(rows * k));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk) {
      int q = std::uniform_int_distribution<int>(-128, 127)(rng);
      if (q == 0) q = 1;
      values[i * k + kk] = std::ldexp(q, -6);
      a.set_bits16(b, i, kk, half_bits(values[i * k + kk], act));
    }
  return values;
}

// The largest error of row `i` of D (matrix b) against expert `w`'s float64 product, relative to the rounding bound.
double worst_row_error(const GuardedTensor& d, DType out, std::int64_t b, std::int64_t d_row, const double* a_row,
                       const tilegemm::WeightCodes& w, int n, int k, double rel) {
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    double ref = 0, mag = 0;
    for (int kk = 0; kk < k; ++kk) {
      const double p = a_row[kk] * tilegemm::dequantized_weight(w, r, kk);
      ref += p, mag += std::abs(p);
    }
    const double got = out == DType::kFloat16 ? fp16_value(d.bits16(b, d_row, r)) : d.get(b, d_row, r);
    worst = std::max(worst, std::abs(got - ref) / (rel * mag + 0x1.0p-8 * std::abs(ref) + 1e-30));
  }
  return worst;
}

class WqGroupedGpu : public ::testing::TestWithParam<WqCase> {};

// Masked: 4 experts with 0, 1, 17 and all M_max valid rows; rows past masked_m stay unwritten.
TEST_P(WqGroupedGpu, MaskedMatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const WqCase c = GetParam();
  const std::vector<std::int32_t> valid = {0, 1, 17, c.m};
  const DeviceExperts experts(c, 4);
  GuardedTensor a(c.act, 4, c.m, c.k), d(c.out, 4, c.m, c.n);
  std::mt19937_64 rng(gpu_test::next_seed());
  std::vector<std::vector<double>> a_host;
  for (int e = 0; e < 4; ++e) a_host.push_back(fill_activations(a, c.act, e, c.m, c.k, rng));
  a.upload();
  const gpu_test::DeviceInts masked_m(valid);
  tilegemm::wq_m_grouped_gemm_nt_masked(a.device_view(), experts.view(), d.device_view(), masked_m.view(), 16);
  gpu_test::cuda_check(cudaDeviceSynchronize(), "wq_m_grouped_gemm_nt_masked");
  d.download();
  const auto cov = d.coverage([&](std::int64_t b, std::int64_t r) { return r < valid[b]; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();
  const double rel = c.act == DType::kFloat16 ? 0x1.0p-10 : 0x1.0p-7;
  double worst = 0;
  for (int e = 0; e < 4; ++e)
    for (int i = 0; i < valid[e]; ++i)
      worst = std::max(worst, worst_row_error(d, c.out, e, i, &a_host[e][static_cast<std::size_t>(i) * c.k],
                                              experts.codes[e], c.n, c.k, rel));
  gpu_test::report("wq_m_grouped_gemm_nt_masked", case_name(c), "masked 0/1/17/M", "",
                   fmt::format("worst {:.3g}", worst), worst <= 1);
  EXPECT_LE(worst, 1.0);
}

// Contiguous: 3 experts of 1, 130 and 64 rows, each padded to the 128-row alignment with -1 rows.
TEST_P(WqGroupedGpu, ContiguousMatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const WqCase c = GetParam();
  const std::vector<int> rows = {1, 130, 64};
  std::vector<std::int32_t> layout;
  for (int e = 0; e < 3; ++e) {
    const int padded = (rows[e] + 127) / 128 * 128;
    for (int i = 0; i < padded; ++i) layout.push_back(i < rows[e] ? e : -1);
  }
  const auto m = static_cast<std::int64_t>(layout.size());
  const DeviceExperts experts(c, 3);
  GuardedTensor a(c.act, 0, m, c.k), d(c.out, 0, m, c.n);
  std::mt19937_64 rng(gpu_test::next_seed());
  const std::vector<double> a_host = fill_activations(a, c.act, 0, m, c.k, rng);
  a.upload();
  const gpu_test::DeviceInts grouped(layout);
  tilegemm::wq_m_grouped_gemm_nt_contiguous(a.device_view(), experts.view(), d.device_view(), grouped.view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "wq_m_grouped_gemm_nt_contiguous");
  d.download();
  // Padding rows are unspecified: only the valid rows and the guards are checked.
  const auto cov = d.coverage([&](std::int64_t, std::int64_t r) { return layout[r] >= 0; });
  EXPECT_EQ(cov.unwritten, 0);
  EXPECT_EQ(cov.stray_guard, 0);
  const double rel = c.act == DType::kFloat16 ? 0x1.0p-10 : 0x1.0p-7;
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    if (layout[i] >= 0)
      worst = std::max(worst, worst_row_error(d, c.out, 0, i, &a_host[static_cast<std::size_t>(i) * c.k],
                                              experts.codes[layout[i]], c.n, c.k, rel));
  gpu_test::report("wq_m_grouped_gemm_nt_contiguous", case_name(c), "contiguous 1/130/64", "",
                   fmt::format("worst {:.3g}", worst), worst <= 1);
  EXPECT_LE(worst, 1.0);
}

constexpr DType kBf16 = DType::kBFloat16, kFp16 = DType::kFloat16, kFp32 = DType::kFloat32;

// Decode-size M (1, 7, 16: one token block; 33: two), an M the model may send either way (128) and a prefill M
// (1024: dequantise + dense for bf16); ragged N (200: one partial row block of 64) and K off the stage (96, 72).
INSTANTIATE_TEST_SUITE_P(Shapes, WqGemmGpu,
                         ::testing::Values(WqCase{WeightFormat::kInt4, 128, false, kBf16, kBf16, 1, 4096, 4096},
                                           WqCase{WeightFormat::kInt4, 128, true, kBf16, kBf16, 7, 200, 4096},
                                           WqCase{WeightFormat::kInt4, 64, false, kFp16, kFp16, 16, 4096, 4096},
                                           WqCase{WeightFormat::kInt4, 32, true, kBf16, kFp32, 33, 200, 96},
                                           WqCase{WeightFormat::kInt4, 32, true, kFp16, kFp16, 1, 200, 96},
                                           WqCase{WeightFormat::kInt4, 128, true, kBf16, kBf16, 128, 4096, 4096},
                                           WqCase{WeightFormat::kInt4, 128, false, kBf16, kBf16, 1024, 4096, 4096},
                                           WqCase{WeightFormat::kInt8, 0, false, kBf16, kBf16, 1, 4096, 4096},
                                           WqCase{WeightFormat::kInt8, 0, false, kFp16, kFp32, 16, 200, 96},
                                           WqCase{WeightFormat::kInt8, 0, false, kBf16, kBf16, 1024, 200, 4096},
                                           WqCase{WeightFormat::kMxfp4, 32, false, kBf16, kBf16, 1, 4096, 4096},
                                           WqCase{WeightFormat::kMxfp4, 32, false, kBf16, kBf16, 33, 200, 72},
                                           WqCase{WeightFormat::kMxfp4, 32, false, kBf16, kFp32, 1024, 4096, 4096}),
                         [](const auto& info) { return case_name(info.param); });

// Grouped: m is M_max of the masked case; N ragged, K of each format's shape rules.
INSTANTIATE_TEST_SUITE_P(Experts, WqGroupedGpu,
                         ::testing::Values(WqCase{WeightFormat::kInt4, 128, true, kBf16, kBf16, 64, 200, 512},
                                           WqCase{WeightFormat::kInt4, 32, false, kFp16, kFp16, 40, 256, 96},
                                           WqCase{WeightFormat::kInt8, 0, false, kBf16, kFp32, 64, 200, 512},
                                           WqCase{WeightFormat::kMxfp4, 32, false, kBf16, kBf16, 64, 200, 512}),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
