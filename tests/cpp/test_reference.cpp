// The CPU reference against a naive triple loop, calc_diff's properties and bf16 rounding.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

using namespace tilegemm;

namespace {

// A host matrix [rows, cols] stored either row-major (K-major for an operand) or column-major
// (MN-major), with `pad` extra elements per leading dimension so strides differ from the sizes.
struct HostMatrix {
  DType dtype;
  std::vector<std::uint16_t> half_bits;  // bf16 / fp16 storage
  std::vector<float> floats;             // fp32 storage
  TensorView view;
};

HostMatrix random_matrix(std::mt19937& rng, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                         bool column_major, std::int64_t pad) {
  HostMatrix m{dtype, {}, {}, {}};
  const std::int64_t ld = (column_major ? rows : cols) + pad;
  const std::int64_t per_batch = ld * (column_major ? cols : rows) + 3;  // +3: batches are not packed either
  const std::size_t total = static_cast<std::size_t>(per_batch * std::max<std::int64_t>(batch, 1));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  if (dtype == DType::kFloat32) {
    m.floats.resize(total);
    for (auto& x : m.floats) x = dist(rng);
  } else {
    m.half_bits.resize(total);
    for (auto& x : m.half_bits) {
      float v = dist(rng);
      if (dtype == DType::kBFloat16) {
        x = float_to_bf16(v);
      } else {
        // fp16 test values: small integers over 8 are exact in fp16; encode them directly.
        const int i = static_cast<int>(std::lround(v * 4));
        const float f = static_cast<float>(i) / 8.0f;  // k/8, |k| < 64: exact in fp16
        if (f == 0) {
          x = 0;
        } else {
          int e = 0;
          const float frac = std::frexp(std::fabs(f), &e);  // f = frac·2^e, frac in [0.5, 1)
          const auto mant = static_cast<std::uint16_t>(std::lround((frac * 2 - 1) * 1024));
          x = static_cast<std::uint16_t>((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
        }
      }
    }
  }
  void* data = dtype == DType::kFloat32 ? static_cast<void*>(m.floats.data()) : static_cast<void*>(m.half_bits.data());
  const std::int64_t row_stride = column_major ? 1 : ld, col_stride = column_major ? ld : 1;
  m.view = batch == 0 ? TensorView::matrix(data, dtype, rows, cols, row_stride, col_stride)
                      : TensorView::batched(data, dtype, batch, rows, cols, per_batch, row_stride, col_stride);
  return m;
}

// The obvious definition, one element at a time through host_element.
std::vector<double> naive_gemm(const TensorView& a, const TensorView& b, const TensorView* c) {
  const bool batched = a.ndim == 3;
  const std::int64_t batch = batched ? a.shape[0] : 1, m = a.size(-2), n = b.size(-2), k = a.size(-1);
  std::vector<double> d;
  for (std::int64_t g = 0; g < batch; ++g)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        if (c) {
          std::vector<std::int64_t> idx =
              batched ? std::vector<std::int64_t>{g, i, j} : std::vector<std::int64_t>{i, j};
          acc = host_element(*c, idx);
        }
        for (std::int64_t p = 0; p < k; ++p) {
          auto ia = batched ? std::vector<std::int64_t>{g, i, p} : std::vector<std::int64_t>{i, p};
          auto ib = batched ? std::vector<std::int64_t>{g, j, p} : std::vector<std::int64_t>{j, p};
          acc += host_element(a, ia) * host_element(b, ib);
        }
        d.push_back(acc);
      }
  return d;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << "element " << i;
}

}  // namespace

TEST(Bf16Conversion, KnownValuesAreExact) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16(0.15625f), 0x3E20);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(Bf16Conversion, RoundsToNearestTiesToEven) {
  // 1 + 2^-8 lies exactly between 0x3F80 and 0x3F81: the even one (0x3F80) wins.
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);
  // 1 + 3·2^-8 lies between 0x3F81 and 0x3F82: the even one (0x3F82) wins.
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // just above the tie
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F807FFFu)), 0x3F80);  // just below
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // overflows to +inf
}

TEST(Bf16Conversion, NaNStaysNaNAndEveryBf16RoundTrips) {
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A signalling NaN whose payload sits only in the low bits must not become an infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7F800001u)))));
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = bf16_to_float(static_cast<std::uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), bits) << std::hex << bits;
  }
}

TEST(CalcDiff, IdenticalIsZeroScaledIsPositive) {
  std::mt19937 rng(7);
  std::normal_distribution<double> dist;
  std::vector<double> x(1000), doubled(1000), negated(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = dist(rng), doubled[i] = 2 * x[i], negated[i] = -x[i];
  EXPECT_EQ(calc_diff(x, x), 0.0);
  EXPECT_NEAR(calc_diff(x, doubled), 0.2, 1e-12);  // 1 − 2·2/(1+4)
  EXPECT_NEAR(calc_diff(x, negated), 2.0, 1e-12);
  std::vector<double> zeros(5, 0.0);
  EXPECT_EQ(calc_diff(zeros, zeros), 0.0);
  std::vector<double> with_nan = x;
  with_nan[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(calc_diff(x, with_nan)));
}

TEST(CalcDiff, SizeMismatchNamesY) {
  std::vector<double> x(3, 1.0), y(4, 1.0);
  try {
    calc_diff(x, y);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "y");
  }
}

TEST(ReferenceGemm, MatchesNaiveLoopForEveryLayoutAndC) {
  std::mt19937 rng(1234);
  const std::int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 8, 33}, {9, 24, 64}};
  const DType c_dtypes[] = {DType::kBFloat16, DType::kFloat32};
  int cases = 0;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (int with_c = 0; with_c < 3; ++with_c) {
        const bool a_mn = layout & 2, b_mn = layout & 1;
        auto a = random_matrix(rng, DType::kBFloat16, 0, s[0], s[2], a_mn, layout);
        auto b = random_matrix(rng, DType::kBFloat16, 0, s[1], s[2], b_mn, 2);
        auto c = random_matrix(rng, c_dtypes[with_c % 2], 0, s[0], s[1], false, with_c);
        const TensorView* cv = with_c ? &c.view : nullptr;
        SCOPED_TRACE(::testing::Message()
                     << s[0] << "x" << s[1] << "x" << s[2] << " layout " << layout << " c " << with_c);
        expect_close(reference_gemm(a.view, b.view, cv), naive_gemm(a.view, b.view, cv));
        ++cases;
      }
  EXPECT_EQ(cases, 48);
}

TEST(ReferenceGemm, Fp32AndFp16OperandsAndBatches) {
  std::mt19937 rng(99);
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    auto a = random_matrix(rng, t, 3, 6, 10, false, 1);
    auto b = random_matrix(rng, t, 3, 4, 10, true, 0);
    auto c = random_matrix(rng, DType::kFloat32, 3, 6, 4, false, 2);
    expect_close(reference_gemm(a.view, b.view, &c.view), naive_gemm(a.view, b.view, &c.view));
    expect_close(reference_gemm(a.view, b.view, nullptr), naive_gemm(a.view, b.view, nullptr));
  }
}

TEST(ReferenceGemm, SampledRowsEqualTheFullResultAndThreadsDoNotMatter) {
  std::mt19937 rng(5);
  auto a = random_matrix(rng, DType::kBFloat16, 0, 40, 72, false, 0);
  auto b = random_matrix(rng, DType::kBFloat16, 0, 24, 72, true, 8);
  const auto full = reference_gemm(a.view, b.view, nullptr, 1);
  EXPECT_EQ(reference_gemm(a.view, b.view, nullptr, 3), full);  // bitwise: each row has one owner
  const std::vector<std::int64_t> rows = {39, 0, 17, 17};
  const auto sampled = reference_gemm_rows(a.view, b.view, nullptr, rows, 2);
  ASSERT_EQ(sampled.size(), rows.size() * 24);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < 24; ++j) EXPECT_EQ(sampled[r * 24 + j], full[rows[r] * 24 + j]);
}

TEST(ReferenceGemm, HostToDoublesReadsStridedViews) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  // [2,3] column-major: element (i,j) at i + 2j.
  const auto v = host_to_doubles(TensorView::matrix(data.data(), DType::kFloat32, 2, 3, 1, 2));
  EXPECT_EQ(v, (std::vector<double>{1, 3, 5, 2, 4, 6}));
  const auto t = transpose_last2(TensorView::matrix(data.data(), DType::kFloat32, 2, 3, 3, 1));
  EXPECT_EQ(host_to_doubles(t), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

namespace {
using test_util::expect_invalid;
}  // namespace

TEST(ReferenceGemm, BadInputNamesTheArgument) {
  std::vector<float> buf(64, 1.0f);
  const auto a = TensorView::matrix(buf.data(), DType::kFloat32, 4, 8, 8);
  const auto b = TensorView::matrix(buf.data(), DType::kFloat32, 2, 8, 8);
  const auto b_bad_k = TensorView::matrix(buf.data(), DType::kFloat32, 2, 6, 6);
  const auto c_bad = TensorView::matrix(buf.data(), DType::kFloat32, 4, 3, 3);
  const auto a_int8 = TensorView::matrix(buf.data(), DType::kInt8, 4, 8, 8);
  expect_invalid([&] { reference_gemm(a, b_bad_k); }, "b");
  expect_invalid([&] { reference_gemm(a, b, &c_bad); }, "c");
  expect_invalid([&] { reference_gemm(a_int8, b); }, "a");
  const std::vector<std::int64_t> rows = {4};
  expect_invalid([&] { reference_gemm_rows(a, b, nullptr, rows); }, "rows");
  TensorView null_a = a;
  null_a.data = nullptr;
  expect_invalid([&] { reference_gemm(null_a, b); }, "a");
}
