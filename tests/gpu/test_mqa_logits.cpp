// fp8_mqa_logits on the GPU against float64 references, DeepGEMM's test_mqa_logits checks on small shapes: both of its
// ks/ke generators (and ragged windows of our own: negative starts, ends past seq_len_kv, empty and inverted rows),
// clean (-inf around the window), compressed and window-only logits, fp32 and bf16.
//   - the -inf mask exactly (clean): -inf at every column outside the row's window, a finite value at every one inside;
//   - the values: DeepGEMM's calc_diff against the float64 logits of the dequantised inputs (< 5e-6 fp32, 3e-5 bf16)
//     and of the unquantised ones (< 1e-3);
//   - nothing written outside the window (compressed, window-only) or outside the view (row padding, guard bands,
//     the rows DeepGEMM's allocation adds past seq_len);
//   - 20 calls give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "fp8_harness.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/fp8_quant.hpp"
#include "tilegemm/mqa_logits.hpp"

namespace gpu_test {
namespace {

// clean: DeepGEMM's default; compressed: max_seqlen_k > 0; window-only: clean_logits = false, full rows.
enum class Mode { kClean, kCompressed, kWindowOnly };
// DeepGEMM's generate_ks_ke_tests (disable_cp True / False), and ragged windows.
enum class Windows { kNoCp, kCp, kRagged };

struct MqaCase {
  int seq_len, seq_len_kv, heads, head_dim;
  DType logits;
  Mode mode;
  Windows windows;
  int weights_pad = 0;  // elements between weights' rows beyond H (any stride: weights travel by cp.async)
};

const char* mode_name(Mode m) {
  return m == Mode::kClean ? "clean" : m == Mode::kCompressed ? "compressed" : "window_only";
}
const char* windows_name(Windows w) {
  return w == Windows::kNoCp ? "nocp" : w == Windows::kCp ? "cp" : "ragged";
}
std::string case_name(const MqaCase& c) {
  return fmt::format("s{}_kv{}_h{}_d{}_{}_{}_{}{}", c.seq_len, c.seq_len_kv, c.heads, c.head_dim,
                     tilegemm::dtype_name(c.logits), mode_name(c.mode), windows_name(c.windows),
                     c.weights_pad ? fmt::format("_wpad{}", c.weights_pad) : "");
}
void PrintTo(const MqaCase& c, std::ostream* os) {
  *os << case_name(c);
}

void make_windows(const MqaCase& c, std::uint64_t seed, std::vector<int>& ks, std::vector<int>& ke) {
  const int s = c.seq_len, l = c.seq_len_kv;
  ks.assign(s, 0), ke.assign(s, 0);
  if (c.windows == Windows::kNoCp) {
    for (int i = 0; i < s; ++i) ke[i] = i + (l - s);
  } else if (c.windows == Windows::kCp) {
    const int chunk = s / 2, cp_size = l / s, cp_id = cp_size / 3;  // DeepGEMM: an arbitrary context-parallel rank
    for (int i = 0; i < chunk; ++i) {
      ke[i] = cp_id * chunk + i;
      ke[i + chunk] = (cp_size * 2 - 1 - cp_id) * chunk + i;
    }
  } else {
    std::mt19937_64 rng(seed);
    const auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int i = 0; i < s; ++i) {
      switch (i % 8) {
        case 0:  // empty
          ks[i] = ke[i] = uniform(0, l);
          break;
        case 1:  // starts before the first token
          ks[i] = -uniform(1, 300), ke[i] = uniform(0, l);
          break;
        case 2:  // ends past the last token
          ks[i] = uniform(0, l - 1), ke[i] = l + uniform(1, 300);
          break;
        case 3:  // inverted: empty
          ks[i] = uniform(10, l), ke[i] = ks[i] - uniform(1, 10);
          break;
        default:
          ks[i] = uniform(0, l - 1), ke[i] = ks[i] + uniform(1, std::min(l, 700));
      }
    }
  }
}

class MqaLogitsGpu : public ::testing::TestWithParam<MqaCase> {};

TEST_P(MqaLogitsGpu, MatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const MqaCase c = GetParam();
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const int s = c.seq_len, l = c.seq_len_kv, h = c.heads, d = c.head_dim;
  const bool bf16 = c.logits == DType::kBFloat16;

  // q e4m3 as DeepGEMM's test casts it (no scale); kv per token scaled to amax / 448 (per_custom_dims_cast_to_fp8).
  std::vector<float> q_orig(static_cast<std::size_t>(s) * h * d), q_dec(q_orig.size());
  std::vector<std::uint8_t> q_codes(q_orig.size());
  for (std::size_t i = 0; i < q_orig.size(); ++i) {
    q_orig[i] = 2.0f * random_value(seed, i);
    q_codes[i] = tilegemm::float_to_e4m3(q_orig[i]);
    q_dec[i] = tilegemm::e4m3_to_float(q_codes[i]);
  }
  std::vector<float> kv_orig(static_cast<std::size_t>(l) * d), kv_dec(kv_orig.size()), kv_scale(l);
  std::vector<std::uint8_t> kv_codes(kv_orig.size());
  for (int j = 0; j < l; ++j) {
    float amax = 0;
    for (int k = 0; k < d; ++k) {
      const std::size_t e = static_cast<std::size_t>(j) * d + k;
      kv_orig[e] = 3.0f * random_value(seed + 1, e);
      amax = std::max(amax, std::abs(kv_orig[e]));
    }
    kv_scale[j] = std::max(amax, tilegemm::kFp8AmaxFloor) / tilegemm::kE4M3Max;
    for (int k = 0; k < d; ++k) {
      const std::size_t e = static_cast<std::size_t>(j) * d + k;
      kv_codes[e] = tilegemm::float_to_e4m3(kv_orig[e] * (1.0f / kv_scale[j]));
      kv_dec[e] = tilegemm::e4m3_to_float(kv_codes[e]);
    }
  }
  const int w_stride = h + c.weights_pad;
  std::vector<float> weights(static_cast<std::size_t>(s) * w_stride, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < s; ++i)
    for (int k = 0; k < h; ++k)
      weights[static_cast<std::size_t>(i) * w_stride + k] =
          random_value(seed + 2, static_cast<std::uint64_t>(i * h + k));
  std::vector<int> ks, ke;
  make_windows(c, seed + 3, ks, ke);
  int max_seqlen_k = 0;
  if (c.mode == Mode::kCompressed) {
    max_seqlen_k = 1;
    for (int i = 0; i < s; ++i) max_seqlen_k = std::max(max_seqlen_k, ke[i] - ks[i]);
    // Ragged windows: a width below the longest window, whose tokens past it are dropped.
    if (c.windows == Windows::kRagged) max_seqlen_k = std::max(1, max_seqlen_k * 3 / 4);
  }

  DeviceBuffer q_dev(q_codes), kv_dev(kv_codes), scale_dev(kv_scale), w_dev(weights);
  DeviceInts ks_dev(ks), ke_dev(ke);
  TensorView q;
  q.data = q_dev.get(), q.dtype = DType::kFloat8E4M3, q.ndim = 3;
  q.shape = {s, h, d, 0}, q.strides = {static_cast<std::int64_t>(h) * d, d, 1, 0};
  const TensorView kv = TensorView::matrix(kv_dev.get(), DType::kFloat8E4M3, l, d, d);
  TensorView scales;
  scales.data = scale_dev.get(), scales.dtype = DType::kFloat32, scales.ndim = 1;
  scales.shape[0] = l, scales.strides[0] = 1;
  const TensorView w = TensorView::matrix(w_dev.get(), DType::kFloat32, s, h, w_stride);
  // The logits in DeepGEMM's allocation: its row stride; the rows it adds past seq_len lie in the guard band.
  const tilegemm::MqaLogitsLayout layout = tilegemm::mqa_logits_layout(s, l, h, max_seqlen_k, c.logits);
  GuardedTensor logits(c.logits, 0, s, layout.cols, layout.row_stride);
  const bool clean = c.mode == Mode::kClean;
  const auto call = [&] {
    tilegemm::fp8_mqa_logits(q, kv, scales, w, ks_dev.view(), ke_dev.view(), logits.device_view(), clean, max_seqlen_k);
    cuda_check(cudaDeviceSynchronize(), "fp8_mqa_logits");
  };
  call();
  logits.download();

  // Row i's window [lo, hi) of tokens, and the token of column col.
  const auto window = [&](int i) {
    const int lo = std::clamp(ks[i], 0, l);
    std::int64_t hi = std::clamp(ke[i], lo, l);
    if (max_seqlen_k > 0) hi = std::clamp<std::int64_t>(static_cast<std::int64_t>(ks[i]) + max_seqlen_k, lo, hi);
    return std::pair<int, int>{lo, static_cast<int>(hi)};
  };
  const auto token = [&](int i, std::int64_t col) { return max_seqlen_k > 0 ? col + ks[i] : col; };

  // Per row: calc_diff's sums against both references, and the elements in the wrong state.
  struct RowCheck {
    double xy_sim = 0, xx_sim = 0, xy_orig = 0, xx_orig = 0;
    std::int64_t bad_inside = 0, bad_outside = 0;
  };
  std::vector<RowCheck> rows(s);
  parallel_for(s, [&](std::int64_t i64) {
    const int i = static_cast<int>(i64);
    const auto [lo, hi] = window(i);
    RowCheck& r = rows[i];
    for (std::int64_t col = 0; col < layout.cols; ++col) {
      const std::int64_t j = token(i, col);
      const double got = logits.get(0, i, col);
      if (j < lo || j >= hi) {
        const bool ok =
            clean ? got == -std::numeric_limits<double>::infinity() : logits.is_poison_at(logits.offset(0, i, col));
        r.bad_outside += !ok;
        continue;
      }
      if (!std::isfinite(got)) {
        ++r.bad_inside;
        continue;
      }
      double sim = 0, orig = 0;
      for (int k = 0; k < h; ++k) {
        const float* qd = &q_dec[(static_cast<std::size_t>(i) * h + k) * d];
        const float* qo = &q_orig[(static_cast<std::size_t>(i) * h + k) * d];
        const float* kd = &kv_dec[static_cast<std::size_t>(j) * d];
        const float* ko = &kv_orig[static_cast<std::size_t>(j) * d];
        double dot_sim[4] = {}, dot_orig[4] = {};
        for (int e = 0; e < d; e += 4)
          for (int u = 0; u < 4; ++u) {
            dot_sim[u] += static_cast<double>(qd[e + u]) * kd[e + u];
            dot_orig[u] += static_cast<double>(qo[e + u]) * ko[e + u];
          }
        const double wk = weights[static_cast<std::size_t>(i) * w_stride + k];
        sim += wk * std::max(0.0, kv_scale[j] * (dot_sim[0] + dot_sim[1] + dot_sim[2] + dot_sim[3]));
        orig += wk * std::max(0.0, dot_orig[0] + dot_orig[1] + dot_orig[2] + dot_orig[3]);
      }
      r.xy_sim += got * sim, r.xx_sim += got * got + sim * sim;
      r.xy_orig += got * orig, r.xx_orig += got * got + orig * orig;
    }
  });
  RowCheck total;
  for (const RowCheck& r : rows) {
    total.xy_sim += r.xy_sim, total.xx_sim += r.xx_sim, total.xy_orig += r.xy_orig, total.xx_orig += r.xx_orig;
    total.bad_inside += r.bad_inside, total.bad_outside += r.bad_outside;
  }
  const auto calc_diff = [](double xy, double xx) { return xx == 0 ? 0.0 : 1.0 - 2.0 * xy / xx; };
  const double simulated_diff = calc_diff(total.xy_sim, total.xx_sim), diff = calc_diff(total.xy_orig, total.xx_orig);
  const double simulated_bound = bf16 ? 3e-5 : 5e-6;
  const auto cov = logits.coverage([](std::int64_t, std::int64_t) { return true; });

  // 20 calls, the same bits (outside the window too: -inf, or the poison left untouched).
  const auto first = logits.snapshot();
  int changed_calls = 0;
  for (int repeat = 1; repeat < 20; ++repeat) {
    call();
    logits.download();
    changed_calls += !logits.unchanged_since(first);
  }

  const bool ok = total.bad_inside == 0 && total.bad_outside == 0 && simulated_diff < simulated_bound && diff < 1e-3 &&
                  cov.stray_guard == 0 && cov.stray_padding == 0 && changed_calls == 0;
  report("fp8_mqa_logits", case_name(c), mode_name(c.mode), std::string(tilegemm::dtype_name(c.logits)),
         fmt::format("simulated diff {:.3g}, diff {:.3g}, {} bad in / {} bad out of the windows, {} calls changed",
                     simulated_diff, diff, total.bad_inside, total.bad_outside, changed_calls),
         ok);
  EXPECT_EQ(total.bad_inside, 0) << "window elements not finite (unwritten or -inf)";
  EXPECT_EQ(total.bad_outside, 0) << (clean ? "elements outside the windows not exactly -inf"
                                            : "elements outside the windows written");
  EXPECT_LT(simulated_diff, simulated_bound) << "against the float64 logits of the dequantised inputs";
  EXPECT_LT(diff, 1e-3) << "against the float64 logits of the unquantised inputs";
  EXPECT_EQ(cov.stray_guard, 0) << cov.describe();
  EXPECT_EQ(cov.stray_padding, 0) << cov.describe();
  if (clean) EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(changed_calls, 0) << "calls 2-20 gave other bits than the first";
}

// DeepGEMM's generators at small sizes (cp needs seq_len_kv a multiple of seq_len, seq_len even; nocp seq_len_kv >=
// seq_len), every H × D, both dtypes and all three modes; ragged q blocks (510 rows at block_q 4), KV lengths off the
// 256-token stage (2000, 1500) and under one stage (64), an empty first row (cp with one rank), weights rows padded
// to odd strides.
INSTANTIATE_TEST_SUITE_P(
    Shapes, MqaLogitsGpu,
    ::testing::Values(MqaCase{512, 2048, 64, 128, DType::kFloat32, Mode::kClean, Windows::kCp},
                      MqaCase{256, 2048, 64, 128, DType::kBFloat16, Mode::kCompressed, Windows::kNoCp},
                      MqaCase{256, 1024, 32, 64, DType::kFloat32, Mode::kCompressed, Windows::kCp, 3},
                      MqaCase{128, 1024, 32, 32, DType::kBFloat16, Mode::kClean, Windows::kNoCp},
                      MqaCase{64, 64, 64, 32, DType::kFloat32, Mode::kClean, Windows::kCp},
                      MqaCase{510, 2000, 32, 128, DType::kBFloat16, Mode::kClean, Windows::kNoCp, 1},
                      MqaCase{64, 2048, 32, 64, DType::kFloat32, Mode::kClean, Windows::kCp},
                      MqaCase{96, 1920, 64, 64, DType::kBFloat16, Mode::kWindowOnly, Windows::kCp},
                      MqaCase{300, 1500, 64, 64, DType::kFloat32, Mode::kWindowOnly, Windows::kRagged, 5},
                      MqaCase{300, 1500, 32, 128, DType::kBFloat16, Mode::kCompressed, Windows::kRagged},
                      MqaCase{200, 1000, 64, 32, DType::kBFloat16, Mode::kClean, Windows::kRagged, 2},
                      MqaCase{128, 512, 32, 32, DType::kFloat32, Mode::kCompressed, Windows::kNoCp}),
    [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace gpu_test
