// The SM90 FP8 x FP4 GEMM on the GPU against float64: A quantised per token 1x128 to e4m3 (DeepGEMM's
// per_token_cast_to_fp8, its scales row-major or MN-major TMA-aligned: the kernel reads any strides), B quantised per
// row 1x32 to e2m1 (DeepGEMM's per_token_cast_to_fp4: scale = amax / 6 rounded up to a power of two, codes rounded to
// nearest) and packed two per byte. Held against the product of the dequantised operands (only accumulation order and
// D's rounding differ) and against the unquantised data (DeepGEMM's FP8 x FP4 bound, calc_diff < 0.01). Decode to
// prefill M, ragged N, K splits, bf16 and fp32 D, which starts poisoned inside guard bands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../cpp/scoped_env.hpp"
#include "fp8_harness.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/reference.hpp"

namespace {

using gpu_test::DeviceBuffer;
using gpu_test::GuardedTensor;
using tilegemm::DType;

struct Fp8Fp4Case {
  int m, n, k;
  DType out;
  bool mn_major_sfa;
  const char* filter = nullptr;  // TILEGEMM_CONFIG_FILTER for the call (e.g. K groups), or none
};

std::string case_name(const ::testing::TestParamInfo<Fp8Fp4Case>& info) {
  const Fp8Fp4Case& c = info.param;
  std::string pinned = c.filter ? c.filter : "";
  for (char& ch : pinned)
    if (ch == '=' || ch == ',') ch = '_';
  return fmt::format("m{}_n{}_k{}_{}{}{}", c.m, c.n, c.k, tilegemm::dtype_name(c.out), c.mn_major_sfa ? "_mn_sfa" : "",
                     pinned.empty() ? "" : "_" + pinned);
}

// The nearest e2m1 code of x (ties to the even mantissa, as DeepGEMM's _quantize_to_fp4_e2m1), |x| <= 6.
int e2m1_code(float x) {
  static constexpr float kValues[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  const float a = std::min(std::abs(x), 6.0f);
  int best = 0;
  for (int i = 1; i < 8; ++i)
    if (std::abs(kValues[i] - a) < std::abs(kValues[best] - a) ||
        (std::abs(kValues[i] - a) == std::abs(kValues[best] - a) && i % 2 == 0))
      best = i;
  return (x < 0 && best != 0 ? 8 : 0) | best;
}

double e2m1_value(int code) {
  static constexpr double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * kValues[code & 7];
}

// [rows, k] random values, row r scaled by 2^(r % spread - shift) (rows of different magnitudes), quantised per row
// and 32 k with UE8M0 scales (the power of two at or above amax / max_value): a code per element (encode), scales
// [rows][k / 32], and both float versions (decode · scale for the dequantised one).
struct Block32Operand {
  std::vector<float> original, dequantised;
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

template <class Encode, class Decode>
Block32Operand make_block32(int rows, int k, std::uint64_t seed, int spread, int shift, float max_value, Encode encode,
                            Decode decode) {
  Block32Operand x;
  x.original.resize(static_cast<std::size_t>(rows) * k);
  x.dequantised.resize(x.original.size());
  x.codes.resize(x.original.size());
  x.scales.resize(static_cast<std::size_t>(rows) * k / 32);
  gpu_test::parallel_for(rows, [&](std::int64_t r) {
    for (int c = 0; c < k; ++c)
      x.original[r * k + c] = gpu_test::random_value(seed, static_cast<std::uint64_t>(r * k + c)) *
                              std::ldexp(1.0f, static_cast<int>(r % spread) - shift);
    for (int g = 0; g < k / 32; ++g) {
      float amax = 1e-4f;
      for (int c = 32 * g; c < 32 * g + 32; ++c) amax = std::max(amax, std::abs(x.original[r * k + c]));
      const float scale = std::exp2(std::ceil(std::log2(amax / max_value)));
      x.scales[r * (k / 32) + g] = scale;
      for (int c = 32 * g; c < 32 * g + 32; ++c) {
        x.codes[r * k + c] = encode(x.original[r * k + c] / scale);
        x.dequantised[r * k + c] = static_cast<float>(decode(x.codes[r * k + c]) * scale);
      }
    }
  });
  return x;
}

// B [n, k] in DeepGEMM's FP4 form: E2M1 codes, two per byte (the lower k in the low nibble), as `packed`.
struct Fp4Operand : Block32Operand {
  std::vector<std::uint8_t> packed;
};

Fp4Operand make_fp4(int n, int k, std::uint64_t seed) {
  Fp4Operand b{make_block32(
                   n, k, seed, 7, 3, 6.0f, [](float v) { return static_cast<std::uint8_t>(e2m1_code(v)); }, e2m1_value),
               {}};
  b.packed.assign(b.codes.size() / 2, 0);
  for (std::size_t i = 0; i < b.codes.size(); ++i)
    b.packed[i / 2] |= static_cast<std::uint8_t>(b.codes[i] << (i % 2 ? 4 : 0));
  return b;
}

class Fp8Fp4GemmGpu : public ::testing::TestWithParam<Fp8Fp4Case> {};

TEST_P(Fp8Fp4GemmGpu, MatchesFloat64References) {
  GPU_TEST_REQUIRE_SM90();
  const Fp8Fp4Case c = GetParam();
  test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", c.filter);
  const std::uint64_t seed = gpu_test::next_seed();
  const auto a = gpu_test::make_quantised(
      0, c.m, c.k, false, seed, /*ue8m0=*/false,
      c.mn_major_sfa ? gpu_test::PerTokenLayout::kMnMajor : gpu_test::PerTokenLayout::kRowMajor);
  const Fp4Operand b = make_fp4(c.n, c.k, gpu_test::next_seed());
  const DeviceBuffer b_codes(b.packed), b_scales(b.scales);
  const auto b_view = tilegemm::TensorView::matrix(b_codes.get(), DType::kInt8, c.n, c.k / 2, c.k / 2);
  const auto sfb_view = tilegemm::TensorView::matrix(b_scales.get(), DType::kFloat32, c.n, c.k / 32, c.k / 32);
  GuardedTensor d(c.out, 0, c.m, c.n, c.n + 8);
  tilegemm::fp8_fp4_gemm_nt(a.data_view, a.sf_view, b_view, sfb_view, d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "fp8_fp4_gemm_nt");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();

  const auto host = [&](const std::vector<float>& v, std::int64_t rows) {
    return tilegemm::TensorView::matrix(const_cast<float*>(v.data()), DType::kFloat32, rows, c.k, c.k);
  };
  const auto sample = gpu_test::rows_to_check(c.m, static_cast<double>(c.m) * c.n * c.k, seed);
  const auto deq = tilegemm::reference_gemm_rows(a.dequantised_host(0), host(b.dequantised, c.n), nullptr, sample);
  const auto orig = tilegemm::reference_gemm_rows(a.original_host(0), host(b.original, c.n), nullptr, sample);
  std::vector<double> got;
  for (std::int64_t r : sample)
    for (int j = 0; j < c.n; ++j) got.push_back(d.get(0, r, j));
  const double kernel_diff = tilegemm::calc_diff(got, deq), quantised_diff = tilegemm::calc_diff(got, orig);
  gpu_test::report("fp8_fp4_gemm_nt", fmt::format("{}x{}x{}", c.m, c.n, c.k), c.mn_major_sfa ? "mn-major sfa" : "nt",
                   std::string(tilegemm::dtype_name(c.out)),
                   fmt::format("calc_diff {:.3e} (vs dequantised {:.3e})", quantised_diff, kernel_diff),
                   kernel_diff < gpu_test::kFp8KernelDiff && quantised_diff < 0.01);
  EXPECT_LT(kernel_diff, gpu_test::kFp8KernelDiff) << "against the float64 product of the dequantised operands";
  EXPECT_LT(quantised_diff, 0.01) << "against the float64 product of the unquantised data";

  // Splits are summed in split order and the counters left at zero: a second call gives the same bits.
  const auto first = d.snapshot();
  tilegemm::fp8_fp4_gemm_nt(a.data_view, a.sf_view, b_view, sfb_view, d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "fp8_fp4_gemm_nt (again)");
  d.download();
  EXPECT_TRUE(d.unchanged_since(first)) << "a second call changed D";
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8Fp4GemmGpu,
                         ::testing::Values(Fp8Fp4Case{1, 2112, 7168, DType::kBFloat16, false},
                                           Fp8Fp4Case{7, 4096, 512, DType::kBFloat16, true},
                                           Fp8Fp4Case{16, 7168, 2048, DType::kFloat32, false},
                                           Fp8Fp4Case{33, 1000, 1536, DType::kBFloat16, false},
                                           Fp8Fp4Case{64, 24576, 1536, DType::kBFloat16, true},
                                           Fp8Fp4Case{129, 576, 7168, DType::kFloat32, false},
                                           Fp8Fp4Case{1000, 2112, 384, DType::kBFloat16, false}),
                         case_name);
// K groups: sets of consumer warps taking turns at the stages, with and without splits; one stage of K (sets past
// the first idle), seven stages (uneven turns), two token blocks.
INSTANTIATE_TEST_SUITE_P(KGroups, Fp8Fp4GemmGpu,
                         ::testing::Values(Fp8Fp4Case{1, 2112, 7168, DType::kBFloat16, false, "k_groups=4,split_k=2"},
                                           Fp8Fp4Case{16, 1000, 256, DType::kFloat32, true, "k_groups=4,split_k=1"},
                                           Fp8Fp4Case{9, 576, 1792, DType::kBFloat16, false, "k_groups=4,split_k=3"},
                                           Fp8Fp4Case{30, 4096, 1792, DType::kBFloat16, false, "k_groups=2,block_m=16"},
                                           Fp8Fp4Case{32, 576, 7168, DType::kFloat32, false, "k_groups=2,split_k=1"}),
                         case_name);

// [rows, k] quantised to e4m3 per row and 32 k with UE8M0 scales (OCP MX).
Block32Operand make_mx(int rows, int k, std::uint64_t seed) {
  return make_block32(rows, k, seed, 5, 2, tilegemm::kE4M3Max, tilegemm::float_to_e4m3, tilegemm::e4m3_to_float);
}

class MxFp8GemmGpu : public ::testing::TestWithParam<Fp8Fp4Case> {};

TEST_P(MxFp8GemmGpu, MatchesFloat64References) {
  GPU_TEST_REQUIRE_SM90();
  const Fp8Fp4Case c = GetParam();
  test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", c.filter);
  const Block32Operand a = make_mx(c.m, c.k, gpu_test::next_seed()), b = make_mx(c.n, c.k, gpu_test::next_seed());
  const DeviceBuffer da(a.codes), dsa(a.scales), db(b.codes), dsb(b.scales);
  using tilegemm::TensorView;
  GuardedTensor d(c.out, 0, c.m, c.n, c.n + 8);
  tilegemm::mxfp8_gemm_nt(TensorView::matrix(da.get(), DType::kFloat8E4M3, c.m, c.k, c.k),
                          TensorView::matrix(dsa.get(), DType::kFloat32, c.m, c.k / 32, c.k / 32),
                          TensorView::matrix(db.get(), DType::kFloat8E4M3, c.n, c.k, c.k),
                          TensorView::matrix(dsb.get(), DType::kFloat32, c.n, c.k / 32, c.k / 32), d.device_view());
  gpu_test::cuda_check(cudaDeviceSynchronize(), "mxfp8_gemm_nt");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();
  const auto host = [&](const std::vector<float>& v, std::int64_t rows) {
    return TensorView::matrix(const_cast<float*>(v.data()), DType::kFloat32, rows, c.k, c.k);
  };
  const std::uint64_t seed = gpu_test::next_seed();
  const auto sample = gpu_test::rows_to_check(c.m, static_cast<double>(c.m) * c.n * c.k, seed);
  const auto deq = tilegemm::reference_gemm_rows(host(a.dequantised, c.m), host(b.dequantised, c.n), nullptr, sample);
  const auto orig = tilegemm::reference_gemm_rows(host(a.original, c.m), host(b.original, c.n), nullptr, sample);
  std::vector<double> got;
  for (std::int64_t r : sample)
    for (int j = 0; j < c.n; ++j) got.push_back(d.get(0, r, j));
  const double kernel_diff = tilegemm::calc_diff(got, deq), quantised_diff = tilegemm::calc_diff(got, orig);
  gpu_test::report("mxfp8_gemm_nt", fmt::format("{}x{}x{}", c.m, c.n, c.k), "nt",
                   std::string(tilegemm::dtype_name(c.out)),
                   fmt::format("calc_diff {:.3e} (vs dequantised {:.3e})", quantised_diff, kernel_diff),
                   kernel_diff < gpu_test::kFp8KernelDiff && quantised_diff < gpu_test::kFp8QuantisedDiff);
  EXPECT_LT(kernel_diff, gpu_test::kFp8KernelDiff) << "against the float64 product of the dequantised operands";
  EXPECT_LT(quantised_diff, gpu_test::kFp8QuantisedDiff) << "against the float64 product of the unquantised data";
}

INSTANTIATE_TEST_SUITE_P(Shapes, MxFp8GemmGpu,
                         ::testing::Values(Fp8Fp4Case{1, 2112, 7168, DType::kBFloat16, false},
                                           Fp8Fp4Case{16, 4096, 512, DType::kFloat32, false},
                                           Fp8Fp4Case{33, 1000, 1536, DType::kBFloat16, false},
                                           Fp8Fp4Case{200, 576, 2048, DType::kBFloat16, false}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(KGroups, MxFp8GemmGpu,
                         ::testing::Values(Fp8Fp4Case{1, 2112, 7168, DType::kBFloat16, false, "k_groups=4,split_k=1"},
                                           Fp8Fp4Case{16, 1000, 1792, DType::kFloat32, false, "k_groups=2,split_k=3"},
                                           Fp8Fp4Case{40, 576, 2048, DType::kBFloat16, false, "k_groups=2,block_m=32"}),
                         case_name);

// MoE decoding: 4 experts with 0, 1, 17 and M_max valid rows, each its own FP4 weight; rows past masked_m stay
// poisoned.
TEST(Fp8Fp4MaskedGpu, EachExpertMatchesItsReferenceAndLeavesItsTailAlone) {
  GPU_TEST_REQUIRE_SM90();
  constexpr int kExperts = 4, kMaxM = 48, kN = 576, kK = 1536;
  const std::vector<int> rows = {0, 1, 17, kMaxM};
  std::vector<gpu_test::QuantisedOperand> a;
  std::vector<Fp4Operand> b;
  std::vector<std::uint8_t> a_bytes, b_bytes;
  std::vector<float> a_scales, b_scales;
  for (int e = 0; e < kExperts; ++e) {
    a.push_back(gpu_test::make_quantised(0, kMaxM, kK, false, gpu_test::next_seed(), /*ue8m0=*/false,
                                         gpu_test::PerTokenLayout::kRowMajor));
    b.push_back(make_fp4(kN, kK, gpu_test::next_seed()));
  }
  // Each expert's operands one after another, as [E, rows, cols] tensors: A's bytes and scales come back from the
  // device copies make_quantised made.
  for (int e = 0; e < kExperts; ++e) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(kMaxM) * kK);
    std::vector<float> scales(static_cast<std::size_t>(kMaxM) * kK / 128);
    gpu_test::cuda_check(cudaMemcpy(bytes.data(), a[e].data->get(), bytes.size(), cudaMemcpyDeviceToHost), "a");
    gpu_test::cuda_check(cudaMemcpy(scales.data(), a[e].sf->get(), scales.size() * 4, cudaMemcpyDeviceToHost), "sfa");
    a_bytes.insert(a_bytes.end(), bytes.begin(), bytes.end());
    a_scales.insert(a_scales.end(), scales.begin(), scales.end());
    b_bytes.insert(b_bytes.end(), b[e].packed.begin(), b[e].packed.end());
    b_scales.insert(b_scales.end(), b[e].scales.begin(), b[e].scales.end());
  }
  const DeviceBuffer da(a_bytes), dsa(a_scales), db(b_bytes), dsb(b_scales), dm(rows);
  using tilegemm::TensorView;
  const auto a_view = TensorView::batched(da.get(), DType::kFloat8E4M3, kExperts, kMaxM, kK, kMaxM * kK, kK);
  const auto sfa_view =
      TensorView::batched(dsa.get(), DType::kFloat32, kExperts, kMaxM, kK / 128, kMaxM * kK / 128, kK / 128);
  const auto b_view = TensorView::batched(db.get(), DType::kInt8, kExperts, kN, kK / 2, kN * kK / 2, kK / 2);
  const auto sfb_view = TensorView::batched(dsb.get(), DType::kFloat32, kExperts, kN, kK / 32, kN * kK / 32, kK / 32);
  TensorView masked_m;
  masked_m.data = dm.get(), masked_m.dtype = DType::kInt32, masked_m.ndim = 1;
  masked_m.shape = {kExperts, 0, 0, 0}, masked_m.strides = {1, 0, 0, 0};
  GuardedTensor d(DType::kBFloat16, kExperts, kMaxM, kN);
  tilegemm::m_grouped_fp8_fp4_gemm_nt_masked(a_view, sfa_view, b_view, sfb_view, d.device_view(), masked_m, 16);
  gpu_test::cuda_check(cudaDeviceSynchronize(), "m_grouped_fp8_fp4_gemm_nt_masked");
  d.download();
  const auto cov = d.coverage([&](std::int64_t e, std::int64_t r) { return r < rows[e]; });
  EXPECT_TRUE(cov.ok()) << "d: " << cov.describe();
  for (int e = 0; e < kExperts; ++e) {
    if (rows[e] == 0) continue;
    const auto host = [&](const std::vector<float>& v, std::int64_t n_rows) {
      return TensorView::matrix(const_cast<float*>(v.data()), DType::kFloat32, n_rows, kK, kK);
    };
    std::vector<std::int64_t> sample(rows[e]);
    for (int r = 0; r < rows[e]; ++r) sample[r] = r;
    const auto deq =
        tilegemm::reference_gemm_rows(a[e].dequantised_host(0), host(b[e].dequantised, kN), nullptr, sample);
    std::vector<double> got;
    for (int r = 0; r < rows[e]; ++r)
      for (int j = 0; j < kN; ++j) got.push_back(d.get(e, r, j));
    const double diff = tilegemm::calc_diff(got, deq);
    gpu_test::report("m_grouped_fp8_fp4_gemm_nt_masked", fmt::format("expert {} of {}x{}x{}", e, rows[e], kN, kK),
                     "masked", "bf16", fmt::format("calc_diff {:.3e} vs dequantised", diff),
                     diff < gpu_test::kFp8KernelDiff);
    EXPECT_LT(diff, gpu_test::kFp8KernelDiff) << "expert " << e;
  }
}

}  // namespace
