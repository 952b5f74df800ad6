// The FP8 MoE layer on the GPU against a float64 reference built from the host quantisers: tokens routed to 3 of 8
// experts (some ids -1 or past the experts, one token routed nowhere), int32 and int64 ids; then the routing's
// layout (every kept pair one row inside its expert's 128-aligned segment) and calc_diff < 1e-3 of the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gpu_harness.hpp"
#include "tilegemm/fp8_quant.hpp"
#include "tilegemm/moe.hpp"
#include "tilegemm/reference.hpp"

namespace {

using tilegemm::DType;
using tilegemm::TensorView;

// A device copy of a host vector, and back.
template <class T>
struct DeviceVector {
  T* ptr = nullptr;
  std::size_t size;
  explicit DeviceVector(const std::vector<T>& host) : size(host.size()) {
    gpu_test::cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<std::size_t>(size, 1) * sizeof(T)),
                         "cudaMalloc");
    gpu_test::cuda_check(cudaMemcpy(ptr, host.data(), size * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  explicit DeviceVector(std::size_t n) : DeviceVector(std::vector<T>(n)) {}
  ~DeviceVector() { cudaFree(ptr); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  std::vector<T> get() const {
    std::vector<T> host(size);
    gpu_test::cuda_check(cudaMemcpy(host.data(), ptr, size * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
};

constexpr int kT = 37, kK = 3, kE = 8, kH = 256, kI = 256;

// Each expert's [rows, cols] weight, random, quantised 128x128 to e4m3; returns its dequantised float64 values.
std::vector<double> expert_weights(int rows, int cols, std::uint64_t seed, std::vector<std::uint8_t>& data,
                                   std::vector<float>& scales) {
  std::vector<double> dequantised;
  for (int e = 0; e < kE; ++e) {
    std::vector<float> w(static_cast<std::size_t>(rows) * cols);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = gpu_test::random_value(seed + e, i) / 16.0f;
    const tilegemm::Fp8Quantized q = tilegemm::quantize_per_block_128x128(w.data(), rows, cols, false);
    data.insert(data.end(), q.data.begin(), q.data.end());
    scales.insert(scales.end(), q.scales.begin(), q.scales.end());
    const std::vector<float> back = tilegemm::dequantize(q, true);
    dequantised.insert(dequantised.end(), back.begin(), back.end());
  }
  return dequantised;
}

class MoeLayerGpu : public ::testing::TestWithParam<DType> {};

TEST_P(MoeLayerGpu, MatchesTheFloat64Layer) {
  GPU_TEST_REQUIRE_SM90();
  const bool int64_ids = GetParam() == DType::kInt64;
  const std::uint64_t seed = gpu_test::next_seed();
  std::mt19937_64 rng(seed);
  // x: bf16 values; the reference quantises the same values as the layer does.
  std::vector<std::uint16_t> x_bits(kT * kH);
  std::vector<float> x(kT * kH);
  for (int i = 0; i < kT * kH; ++i) {
    x_bits[i] = tilegemm::float_to_bf16(gpu_test::random_value(seed, i) * 4.0f);
    x[i] = tilegemm::bf16_to_float(x_bits[i]);
  }
  // Routing: 3 distinct experts per token; some ids skipped (-1 or 8), token 5 routed nowhere.
  std::vector<std::int64_t> ids(kT * kK);
  std::vector<float> weights(kT * kK);
  for (int t = 0; t < kT; ++t) {
    std::vector<int> experts{0, 1, 2, 3, 4, 5, 6, 7};
    std::shuffle(experts.begin(), experts.end(), rng);
    for (int k = 0; k < kK; ++k) {
      ids[t * kK + k] = rng() % 7 == 0 ? (rng() % 2 ? -1 : kE) : experts[k];
      weights[t * kK + k] = static_cast<float>(rng() % 1000 + 1) / 1000.0f;
    }
  }
  for (int k = 0; k < kK; ++k) ids[5 * kK + k] = -1;
  std::vector<std::uint8_t> w1_data, w2_data;
  std::vector<float> w1_sf, w2_sf;
  const std::vector<double> w1 = expert_weights(2 * kI, kH, seed + 100, w1_data, w1_sf);
  const std::vector<double> w2 = expert_weights(kH, kI, seed + 200, w2_data, w2_sf);

  const std::int64_t rows = tilegemm::moe_buffer_rows(kT, kK, kE);
  DeviceVector<std::uint16_t> dx(x_bits), dy(kT * kH), dh1(rows * 2 * kI), dy2(rows * kH);
  DeviceVector<std::int64_t> dids64(ids);
  DeviceVector<std::int32_t> dids32(std::vector<std::int32_t>(ids.begin(), ids.end()));
  DeviceVector<float> dweights(weights), dw1_sf(w1_sf), dw2_sf(w2_sf), dsfa1(rows * kH / 128), dsfa2(rows * kI / 128);
  DeviceVector<std::uint8_t> dw1(w1_data), dw2(w2_data), da1(rows * kH), da2(rows * kI);
  DeviceVector<std::int32_t> dgroup_end(kE), drow_of(kT * kK);

  const TensorView idx = int64_ids ? TensorView::matrix(dids64.ptr, DType::kInt64, kT, kK, kK)
                                   : TensorView::matrix(dids32.ptr, DType::kInt32, kT, kK, kK);
  const tilegemm::Fp8MoeWeights w{
      TensorView::batched(dw1.ptr, DType::kFloat8E4M3, kE, 2 * kI, kH, 2 * kI * kH, kH),
      TensorView::batched(dw1_sf.ptr, DType::kFloat32, kE, 2 * kI / 128, kH / 128, 2 * kI / 128 * kH / 128, kH / 128),
      TensorView::batched(dw2.ptr, DType::kFloat8E4M3, kE, kH, kI, kH * kI, kI),
      TensorView::batched(dw2_sf.ptr, DType::kFloat32, kE, kH / 128, kI / 128, kH / 128 * kI / 128, kI / 128)};
  const tilegemm::MoeWorkspace ws{TensorView::contiguous(dgroup_end.ptr, DType::kInt32, {kE}),
                                  TensorView::matrix(drow_of.ptr, DType::kInt32, kT, kK, kK),
                                  TensorView::matrix(da1.ptr, DType::kFloat8E4M3, rows, kH, kH),
                                  TensorView::matrix(dsfa1.ptr, DType::kFloat32, rows, kH / 128, 1, rows),
                                  TensorView::matrix(dh1.ptr, DType::kBFloat16, rows, 2 * kI, 2 * kI),
                                  TensorView::matrix(da2.ptr, DType::kFloat8E4M3, rows, kI, kI),
                                  TensorView::matrix(dsfa2.ptr, DType::kFloat32, rows, kI / 128, 1, rows),
                                  TensorView::matrix(dy2.ptr, DType::kBFloat16, rows, kH, kH)};
  tilegemm::fp8_moe_layer(TensorView::matrix(dx.ptr, DType::kBFloat16, kT, kH, kH), idx,
                          TensorView::matrix(dweights.ptr, DType::kFloat32, kT, kK, kK), w,
                          TensorView::matrix(dy.ptr, DType::kBFloat16, kT, kH, kH), ws, false);
  gpu_test::cuda_check(cudaDeviceSynchronize(), "fp8_moe_layer");

  // The routing's layout.
  const std::vector<std::int32_t> row_of = drow_of.get(), group_end = dgroup_end.get();
  std::vector<int> counts(kE, 0);
  for (std::int64_t id : ids)
    if (id >= 0 && id < kE) ++counts[id];
  std::set<int> seen;
  for (int i = 0; i < kT * kK; ++i) {
    if (ids[i] < 0 || ids[i] >= kE) {
      EXPECT_EQ(row_of[i], -1) << i;
      continue;
    }
    const int e = static_cast<int>(ids[i]), start = group_end[e] - counts[e];
    EXPECT_EQ(start % 128, 0) << e;
    EXPECT_TRUE(row_of[i] >= start && row_of[i] < group_end[e]) << i << " row " << row_of[i];
    EXPECT_TRUE(seen.insert(row_of[i]).second) << "row " << row_of[i] << " given twice";
  }

  // The float64 layer on the quantised x.
  const tilegemm::Fp8Quantized xq = tilegemm::quantize_per_token_1x128(x.data(), kT, kH, false);
  const std::vector<float> x_hat = tilegemm::dequantize(xq, false);
  std::vector<double> want(kT * kH, 0.0), got(kT * kH);
  for (int t = 0; t < kT; ++t)
    for (int k = 0; k < kK; ++k) {
      const std::int64_t e = ids[t * kK + k];
      if (e < 0 || e >= kE) continue;
      std::vector<double> act(kI);
      for (int j = 0; j < kI; ++j) {
        double g = 0, u = 0;
        for (int c = 0; c < kH; ++c) {
          g += x_hat[t * kH + c] * w1[(e * 2 * kI + j) * kH + c];
          u += x_hat[t * kH + c] * w1[(e * 2 * kI + kI + j) * kH + c];
        }
        act[j] = g / (1 + std::exp(-g)) * u;
      }
      for (int c = 0; c < kH; ++c) {
        double s = 0;
        for (int j = 0; j < kI; ++j) s += act[j] * w2[(e * kH + c) * kI + j];
        want[t * kH + c] += weights[t * kK + k] * s;
      }
    }
  const std::vector<std::uint16_t> y = dy.get();
  for (int i = 0; i < kT * kH; ++i) got[i] = tilegemm::bf16_to_float(y[i]);
  for (int c = 0; c < kH; ++c) EXPECT_EQ(got[5 * kH + c], 0.0) << "token 5 has no expert";
  EXPECT_LT(tilegemm::calc_diff(got, want), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Ids, MoeLayerGpu, ::testing::Values(DType::kInt32, DType::kInt64),
                         [](const auto& info) { return info.param == DType::kInt32 ? "int32" : "int64"; });

}  // namespace
