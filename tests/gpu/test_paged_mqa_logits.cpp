// fp8_paged_mqa_logits on the GPU against a float64 reference of the quantised inputs, as DeepGEMM's
// test_paged_mqa_logits checks it: random block tables over a shuffled cache (unused table entries point past the
// cache), context lengths off the 64-token grid (empty items, rows of next_n = 2 shorter than the last and once
// longer), fp32 and bf16 logits in DeepGEMM's row-padded allocation. The schedule from the device must equal the
// host's, every position before a row's context is checked against the reference (calc_diff under DeepGEMM's
// bounds, and each element), the rest of the item's last block must be exactly -inf, and nothing after it, in the
// row padding or in the guards may change. A second call, and one under another schedule, give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../cpp/scoped_env.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/fp8_quant.hpp"
#include "tilegemm/paged_mqa_logits.hpp"

namespace {

using gpu_test::cuda_check;
using gpu_test::GuardedTensor;
using tilegemm::DType;
using tilegemm::TensorView;

constexpr int kBlockKv = 64, kDim = 128, kTokenBytes = kDim + 4;

struct PagedCase {
  int batch, next_n, heads, mean_context;
  DType logits_dtype;
  int partitions;                // 0: the device's SMs
  int block_pad_bytes;           // bytes between blocks beyond 64 × 132 (a multiple of 16)
  bool ragged_columns;           // max_context_len = the longest context (else DeepGEMM's: whole blocks)
  int checked_rows;              // rows compared with the reference (0: all); coverage is checked on every row
  const char* filter = nullptr;  // TILEGEMM_CONFIG_FILTER pins (math_wg, stages), else the selector's choice
};

std::string case_name(const PagedCase& c) {
  std::string pins = c.filter ? fmt::format("_{}", c.filter) : "";
  std::replace_if(
      pins.begin(), pins.end(), [](char ch) { return ch == '=' || ch == ','; }, '_');
  return fmt::format("b{}_n{}_h{}_l{}_{}{}{}{}{}", c.batch, c.next_n, c.heads, c.mean_context,
                     c.logits_dtype == DType::kBFloat16 ? "bf16" : "fp32",
                     c.partitions ? fmt::format("_p{}", c.partitions) : "", c.block_pad_bytes ? "_padded" : "",
                     c.ragged_columns ? "_ragged" : "", pins);
}

// Device memory holding a host vector's bytes.
class DeviceBuffer {
 public:
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : bytes_(host.size() * sizeof(T)) {
    cuda_check(cudaMalloc(&device_, std::max<std::size_t>(bytes_, 16)), "cudaMalloc");
    cuda_check(cudaMemcpy(device_, host.data(), bytes_, cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceBuffer() { cudaFree(device_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return device_; }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> out(bytes_ / sizeof(T));
    cuda_check(cudaMemcpy(out.data(), device_, bytes_, cudaMemcpyDeviceToHost), "download");
    return out;
  }

 private:
  std::size_t bytes_;
  void* device_ = nullptr;
};

// The inputs of one case, quantised as DeepGEMM's test does it: q cast to e4m3, each KV token scaled by its own
// amax / 448 (kv_cache_cast_to_fp8).
struct PagedInputs {
  int batch, next_n, heads, num_blocks, table_cols, max_blocks_used = 0;
  std::int64_t block_bytes;
  std::vector<std::int32_t> context_lens, block_table;
  std::vector<int> item_blocks;
  std::vector<std::uint8_t> q, cache;
  std::vector<float> weights;

  PagedInputs(const PagedCase& c, std::uint64_t seed)
      : batch(c.batch), next_n(c.next_n), heads(c.heads), block_bytes(kBlockKv * kTokenBytes + c.block_pad_bytes) {
    std::mt19937_64 rng(seed);
    // Lengths: the last row of each item has the item's length; earlier rows are shorter (DeepGEMM's
    // ((len + 1) · rand)), except once the first row is longer. A few special items: empty, exactly one block,
    // one token past a block.
    context_lens.resize(static_cast<std::size_t>(batch) * next_n);
    std::uniform_int_distribution<int> around(c.mean_context / 2, c.mean_context * 3 / 2);
    for (int b = 0; b < batch; ++b) {
      int len = around(rng);
      if (b == 1) len = 0;
      if (b == 2) len = 64;
      if (b == 3) len = 65;
      for (int i = 0; i < next_n; ++i)
        context_lens[b * next_n + i] =
            i == next_n - 1 ? len : static_cast<int>((len + 1) * std::uniform_real_distribution<double>(0, 1)(rng));
      if (b == 4 && next_n == 2) context_lens[b * next_n] = len + 37;  // the first row longest
    }
    item_blocks.resize(batch);
    int used = 0;
    for (int b = 0; b < batch; ++b) {
      const int longest = *std::max_element(context_lens.begin() + b * next_n, context_lens.begin() + (b + 1) * next_n);
      item_blocks[b] = (longest + kBlockKv - 1) / kBlockKv;
      used += item_blocks[b];
      max_blocks_used = std::max(max_blocks_used, item_blocks[b]);
    }
    // A shuffled cache with spare blocks; table entries past an item's blocks point past the cache.
    num_blocks = used + 5;
    table_cols = max_blocks_used + 3;
    std::vector<std::int32_t> pool(num_blocks);
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    block_table.assign(static_cast<std::size_t>(batch) * table_cols, num_blocks + 1000);
    int next = 0;
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < item_blocks[b]; ++k) block_table[b * table_cols + k] = pool[next++];

    const std::uint64_t q_seed = gpu_test::next_seed(), kv_seed = gpu_test::next_seed(), w_seed = gpu_test::next_seed();
    q.resize(static_cast<std::size_t>(batch) * next_n * heads * kDim);
    gpu_test::parallel_for(static_cast<std::int64_t>(q.size()) / kDim, [&](std::int64_t row) {
      for (int d = 0; d < kDim; ++d) {
        const auto index = static_cast<std::uint64_t>(row * kDim + d);
        q[index] = tilegemm::float_to_e4m3(4.0f * gpu_test::random_value(q_seed, index));
      }
    });
    weights.resize(static_cast<std::size_t>(batch) * next_n * heads);
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = gpu_test::random_value(w_seed, i);
    // Every block gets values (spare ones too: never read), each token its own scale.
    cache.assign(static_cast<std::size_t>(num_blocks * block_bytes), 0xA5);
    gpu_test::parallel_for(num_blocks, [&](std::int64_t block) {
      std::uint8_t* base = cache.data() + block * block_bytes;
      for (int t = 0; t < kBlockKv; ++t) {
        float x[kDim], amax = 0;
        for (int d = 0; d < kDim; ++d) {
          x[d] = 3.0f * gpu_test::random_value(kv_seed, static_cast<std::uint64_t>((block * kBlockKv + t) * kDim + d));
          amax = std::max(amax, std::abs(x[d]));
        }
        const float scale = std::max(amax, tilegemm::kFp8AmaxFloor) / tilegemm::kE4M3Max;
        for (int d = 0; d < kDim; ++d) base[t * kDim + d] = tilegemm::float_to_e4m3(x[d] * (1.0f / scale));
        std::memcpy(base + kBlockKv * kDim + 4 * t, &scale, 4);
      }
    });
  }

  int context(int b, int i) const { return context_lens[b * next_n + i]; }
  // Token j of item b, dequantised: value d, and its scale.
  const std::uint8_t* token(int b, int j) const {
    return cache.data() + block_table[b * table_cols + j / kBlockKv] * block_bytes + (j % kBlockKv) * kDim;
  }
  float token_scale(int b, int j) const {
    float s;
    std::memcpy(
        &s,
        cache.data() + block_table[b * table_cols + j / kBlockKv] * block_bytes + kBlockKv * kDim + 4 * (j % kBlockKv),
        4);
    return s;
  }
};

class PagedMqaLogitsGpu : public ::testing::TestWithParam<PagedCase> {};

TEST_P(PagedMqaLogitsGpu, MatchesFloat64Reference) {
  GPU_TEST_REQUIRE_SM90();
  const PagedCase c = GetParam();
  test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", c.filter);
  const PagedInputs in(c, gpu_test::next_seed());
  int device = 0, sms = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int partitions = c.partitions ? c.partitions : sms;
  const int rows = c.batch * c.next_n;
  const int max_context = c.ragged_columns ? *std::max_element(in.context_lens.begin(), in.context_lens.end())
                                           : in.max_blocks_used * kBlockKv;

  DeviceBuffer q(in.q), cache(in.cache), weights(in.weights), lens(in.context_lens), table(in.block_table);
  DeviceBuffer schedule(std::vector<std::int32_t>(2 * (partitions + 1), -7));
  const TensorView q_view = TensorView::contiguous(q.get(), DType::kFloat8E4M3, {c.batch, c.next_n, c.heads, kDim});
  TensorView kv_view = TensorView::contiguous(cache.get(), DType::kInt8, {in.num_blocks, kBlockKv, 1, kTokenBytes});
  kv_view.strides[0] = in.block_bytes;
  const TensorView w_view = TensorView::contiguous(weights.get(), DType::kFloat32, {rows, c.heads});
  const TensorView lens_view = TensorView::contiguous(lens.get(), DType::kInt32, {c.batch, c.next_n});
  const TensorView table_view = TensorView::contiguous(table.get(), DType::kInt32, {c.batch, in.table_cols});
  const TensorView schedule_view = TensorView::contiguous(schedule.get(), DType::kInt32, {partitions + 1, 2});
  GuardedTensor logits(c.logits_dtype, 0, rows, max_context,
                       tilegemm::paged_mqa_logits_row_stride(max_context, c.logits_dtype));

  // The schedule: the device's equals the host's.
  tilegemm::paged_mqa_logits_metadata(lens_view, kBlockKv, schedule_view);
  cuda_check(cudaDeviceSynchronize(), "paged_mqa_logits_metadata");
  EXPECT_EQ(schedule.download<std::int32_t>(),
            tilegemm::paged_mqa_logits_schedule(in.context_lens, c.batch, c.next_n, partitions));

  const auto run = [&](const TensorView& schedule_meta) {
    tilegemm::fp8_paged_mqa_logits(q_view, kv_view, w_view, lens_view, table_view, schedule_meta, logits.device_view());
    cuda_check(cudaDeviceSynchronize(), "fp8_paged_mqa_logits");
    logits.download();
  };
  run(schedule_view);

  // Guards and row padding untouched (every row's own columns are checked below).
  const auto cov = logits.coverage([](std::int64_t, std::int64_t) { return false; });
  EXPECT_EQ(cov.stray_guard, 0) << cov.describe();
  EXPECT_EQ(cov.stray_padding, 0) << cov.describe();

  // Rows compared with the reference: all, or a spread sample with the first and the last.
  std::vector<int> checked(rows);
  std::iota(checked.begin(), checked.end(), 0);
  if (c.checked_rows > 0 && c.checked_rows < rows) {
    std::mt19937 rng(static_cast<unsigned>(rows));
    std::shuffle(checked.begin() + 1, checked.end() - 1, rng);
    checked.resize(static_cast<std::size_t>(c.checked_rows) - 1);
    checked.push_back(rows - 1);
  }
  std::vector<char> compare(rows, 0);
  for (int r : checked) compare[r] = 1;

  // Per row: wrong masked / stray / unwritten positions, the worst element error, calc_diff's sums.
  struct RowResult {
    std::int64_t bad_mask = 0, stray = 0, non_finite = 0;
    double worst = 0, num = 0, den = 0;
  };
  std::vector<RowResult> results(rows);
  // fp8 products summed on the tensor cores, then bf16 rounding (|ref| <= the magnitude) for bf16 logits.
  const double element_bound = c.logits_dtype == DType::kBFloat16 ? 0x1.0p-10 + 0x1.0p-8 : 0x1.0p-10;
  std::array<double, 256> e4m3{};
  for (int code = 0; code < 256; ++code) e4m3[code] = tilegemm::e4m3_to_float(static_cast<std::uint8_t>(code));
  gpu_test::parallel_for(rows, [&](std::int64_t r) {
    const int b = static_cast<int>(r) / c.next_n, i = static_cast<int>(r) % c.next_n;
    const int context = in.context(b, i);
    const int written = std::min(in.item_blocks[b] * kBlockKv, max_context);  // the item's blocks, clipped
    RowResult& res = results[r];
    std::vector<double> dots(c.heads);
    for (int j = 0; j < max_context; ++j) {
      const std::int64_t offset = logits.offset(0, r, j);
      if (j >= written) {
        res.stray += !logits.is_poison_at(offset);
        continue;
      }
      const double got = logits.get(0, r, j);
      if (j >= context) {
        res.bad_mask += !(std::isinf(got) && got < 0);
        continue;
      }
      if (!std::isfinite(got)) {
        ++res.non_finite;
        continue;
      }
      if (!compare[r]) continue;
      // Σ_h w[h] · relu(scale · Σ_d q[h][d] · kv[d]) over the dequantised values, and the same sum of absolute
      // products for the element bound (the tensor cores' fp8 sums keep fewer bits than fp32).
      const std::uint8_t* kv = in.token(b, j);
      const double scale = in.token_scale(b, j);
      double ref = 0, mag = 0;
      for (int h = 0; h < c.heads; ++h) {
        const std::uint8_t* qh = in.q.data() + ((static_cast<std::size_t>(b) * c.next_n + i) * c.heads + h) * kDim;
        double dot = 0, abs_dot = 0;
        for (int d = 0; d < kDim; ++d) {
          const double p = e4m3[qh[d]] * e4m3[kv[d]];
          dot += p, abs_dot += std::abs(p);
        }
        const double w = in.weights[static_cast<std::size_t>(r) * c.heads + h];
        ref += w * std::max(0.0, scale * dot);
        mag += std::abs(w) * scale * abs_dot;
      }
      res.worst = std::max(res.worst, std::abs(got - ref) / (mag + 1e-30));
      res.num += (got - ref) * (got - ref), res.den += got * got + ref * ref;
    }
  });
  RowResult total;
  for (const RowResult& res : results) {
    total.bad_mask += res.bad_mask, total.stray += res.stray, total.non_finite += res.non_finite;
    total.worst = std::max(total.worst, res.worst), total.num += res.num, total.den += res.den;
  }
  // DeepGEMM's calc_diff: 1 - 2·Σxy / Σ(x² + y²) = Σ(x - y)² / Σ(x² + y²).
  const double diff = total.den > 0 ? total.num / total.den : 0;
  const double diff_bound = c.logits_dtype == DType::kBFloat16 ? 3e-5 : 5e-6;
  const bool ok = total.bad_mask == 0 && total.stray == 0 && total.non_finite == 0 && diff < diff_bound &&
                  total.worst < element_bound;
  gpu_test::report(
      "fp8_paged_mqa_logits", case_name(c), fmt::format("{} partitions", partitions),
      c.logits_dtype == DType::kBFloat16 ? "fp8->bf16" : "fp8->fp32",
      fmt::format("calc_diff {:.3g}, worst {:.3g} of sum|w*s*q*kv|, {} rows", diff, total.worst, checked.size()), ok);
  EXPECT_EQ(total.bad_mask, 0) << "positions past a row's context (inside its item's blocks) that are not -inf";
  EXPECT_EQ(total.stray, 0) << "positions past the item's last block that were written";
  EXPECT_EQ(total.non_finite, 0) << "positions inside a row's context that are not finite";
  EXPECT_LT(diff, diff_bound) << "calc_diff against the float64 reference of the quantised inputs";
  EXPECT_LT(total.worst, element_bound) << "largest element error relative to sum_h |w| * scale * sum_d |q * kv|";

  // The same bits from a second call, and from a schedule of another partition count (no cross-CTA sums).
  const auto first = logits.snapshot();
  run(schedule_view);
  EXPECT_TRUE(logits.unchanged_since(first)) << "a second call changed the logits";
  const int other = partitions == 7 ? 3 : 7;
  DeviceBuffer other_schedule(std::vector<std::int32_t>(2 * (other + 1)));
  const TensorView other_view = TensorView::contiguous(other_schedule.get(), DType::kInt32, {other + 1, 2});
  tilegemm::paged_mqa_logits_metadata(lens_view, kBlockKv, other_view);
  run(other_view);
  EXPECT_TRUE(logits.unchanged_since(first)) << "another schedule changed the logits";
}

// DeepGEMM's SM90 grid (next_n 1 and 2, H 32 and 64, fp32 and bf16 logits) on small batches, with fewer and more
// partitions than SMs, padded cache blocks and a max_context_len off the block grid; then DeepGEMM's own decode
// shape (256 items around 8192 tokens) on a sample of rows.
INSTANTIATE_TEST_SUITE_P(Shapes, PagedMqaLogitsGpu,
                         ::testing::Values(PagedCase{6, 1, 32, 150, DType::kFloat32, 0, 0, false, 0},
                                           PagedCase{6, 1, 32, 333, DType::kBFloat16, 0, 256, true, 0},
                                           PagedCase{9, 2, 64, 700, DType::kBFloat16, 0, 0, false, 0},
                                           PagedCase{17, 2, 32, 300, DType::kFloat32, 7, 16, false, 0},
                                           PagedCase{12, 2, 32, 500, DType::kBFloat16, 0, 0, true, 0},
                                           PagedCase{40, 1, 64, 1000, DType::kBFloat16, 0, 0, true, 0},
                                           PagedCase{11, 1, 64, 900, DType::kFloat32, 0, 0, false, 0},
                                           PagedCase{64, 2, 64, 2000, DType::kFloat32, 0, 256, false, 24},
                                           PagedCase{8, 2, 64, 20, DType::kFloat32, 300, 0, false, 0},
                                           PagedCase{256, 2, 64, 8192, DType::kBFloat16, 0, 0, false, 24},
                                           PagedCase{256, 1, 64, 8192, DType::kFloat32, 0, 0, false, 16}),
                         [](const auto& info) { return case_name(info.param); });

// Each warpgroup count with shallow rings (every producer warp laps its ring many times): items shorter than a round
// of the warpgroups (some get no block of an item and release its Q stage through their producer), fewer partitions
// than SMs, and one warpgroup alone.
INSTANTIATE_TEST_SUITE_P(
    Pinned, PagedMqaLogitsGpu,
    ::testing::Values(PagedCase{40, 2, 64, 100, DType::kFloat32, 0, 0, false, 0, "math_wg=4,stages=2"},
                      PagedCase{17, 1, 32, 700, DType::kBFloat16, 7, 0, true, 0, "math_wg=3,stages=2"},
                      PagedCase{9, 2, 32, 1500, DType::kFloat32, 0, 16, false, 0, "math_wg=1,stages=3"},
                      PagedCase{64, 1, 64, 3000, DType::kFloat32, 0, 0, false, 16, "math_wg=4,stages=3"}),
    [](const auto& info) { return case_name(info.param); });

}  // namespace
