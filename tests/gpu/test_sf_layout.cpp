// GPU scaling-factor layout transforms against the CPU references (src/layout/), bit for bit, on ragged
// MN (1, 7, 129, 4097), K-block counts on both sides of every tile width, group counts, row-major and
// MN-major inputs, and an output 4 bytes off 16-byte alignment (the per-row store path). Outputs live between
// poisoned guard bands and their TMA padding rows start poisoned too: the kernels must write exactly the
// view's elements. The K-grouped packer and the prefix-sum (psum) form of the MN-major packer are checked the
// same way.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu_harness.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace {

using gpu_test::cuda_check;
using tilegemm::DType;
using tilegemm::TensorView;

constexpr std::uint8_t kPoison = 0xFF;
constexpr std::size_t kGuardBytes = 4096;

// `body` bytes of device memory between two guard bands; everything starts as kPoison.
class GuardedBytes {
 public:
  explicit GuardedBytes(std::size_t body) : body_(body), host_(body + 2 * kGuardBytes, kPoison) {
    cuda_check(cudaMalloc(&device_, host_.size()), "cudaMalloc");
    cuda_check(cudaMemcpy(device_, host_.data(), host_.size(), cudaMemcpyHostToDevice), "upload poison");
  }
  ~GuardedBytes() { cudaFree(device_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  void* data() const { return static_cast<char*>(device_) + kGuardBytes; }
  void upload(const void* src, std::size_t bytes) {
    cuda_check(cudaMemcpy(data(), src, bytes, cudaMemcpyHostToDevice), "upload");
  }
  // The whole allocation, guards included.
  std::vector<std::uint8_t> download() const {
    std::vector<std::uint8_t> all(host_.size());
    cuda_check(cudaMemcpy(all.data(), device_, all.size(), cudaMemcpyDeviceToHost), "download");
    return all;
  }
  bool guards_intact(const std::vector<std::uint8_t>& all) const {
    for (std::size_t i = 0; i < kGuardBytes; ++i)
      if (all[i] != kPoison || all[kGuardBytes + body_ + i] != kPoison) return false;
    return true;
  }

 private:
  std::size_t body_;
  std::vector<std::uint8_t> host_;
  void* device_ = nullptr;
};

// Random 32-bit patterns (every float, NaNs and infinities included: a layout move must not touch bits).
std::vector<float> random_bits(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(count);
  for (float& x : v) {
    const auto bits = static_cast<std::uint32_t>(rng());
    std::memcpy(&x, &bits, sizeof x);
  }
  return v;
}

// Random powers of two (valid UE8M0 scales) over the whole normal range.
std::vector<float> random_ue8m0(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(-126, 127);
  std::vector<float> v(count);
  for (float& x : v) x = std::ldexp(1.0f, exponent(rng));
  return v;
}

TensorView sf_view(void* data, int groups, int rows, int kb, std::int64_t row_stride, std::int64_t k_stride,
                   std::int64_t group_stride) {
  return groups == 0 ? TensorView::matrix(data, DType::kFloat32, rows, kb, row_stride, k_stride)
                     : TensorView::batched(data, DType::kFloat32, groups, rows, kb, group_stride, row_stride, k_stride);
}

// MN-major TMA-aligned [G?, mn, cols] view of `dtype`.
TensorView mn_major_view(void* data, DType dtype, int groups, int mn, int cols) {
  const std::int64_t aligned = tilegemm::get_tma_aligned_size(mn, 4);
  return groups == 0 ? TensorView::matrix(data, dtype, mn, cols, 1, aligned)
                     : TensorView::batched(data, dtype, groups, mn, cols, aligned * cols, 1, aligned);
}

// Compares the downloaded output (padded [G][cols][aligned] words of 4 bytes) with the reference: equal
// bytes in rows < mn, poison in the padding rows, guards intact. Returns a description of the first problem.
std::string compare_padded(const GuardedBytes& out, const void* reference, int groups, int mn, int cols) {
  const std::vector<std::uint8_t> all = out.download();
  if (!out.guards_intact(all)) return "a guard band was written";
  const int aligned = tilegemm::get_tma_aligned_size(mn, 4);
  const auto* ref = static_cast<const std::uint32_t*>(reference);
  std::int64_t mismatches = 0, padding_written = 0;
  std::string first;
  for (int g = 0; g < groups; ++g)
    for (int c = 0; c < cols; ++c)
      for (int m = 0; m < aligned; ++m) {
        const std::size_t i = (static_cast<std::size_t>(g) * cols + c) * aligned + m;
        std::uint32_t got;
        std::memcpy(&got, all.data() + kGuardBytes + 4 * i, 4);
        if (m >= mn) {
          padding_written += got != 0xFFFFFFFFu;
        } else if (got != ref[i]) {
          if (mismatches++ == 0)
            first = fmt::format(" first at (g {}, col {}, m {}): {:#010x} != {:#010x}", g, c, m, got, ref[i]);
        }
      }
  if (mismatches || padding_written)
    return fmt::format("{} mismatching words, {} padding words written;{}", mismatches, padding_written, first);
  return {};
}

struct Shape {
  int groups;  // 0: a 2-D tensor
  int mn, kb;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  for (int groups : {0, 3})
    for (int mn : {1, 7, 129, 4097})
      for (int kb : {1, 3, 5, 56}) s.push_back({groups, mn, kb});
  // K-block counts around the tile widths (powers of two up to 64 K blocks) and past the widest tile.
  for (int kb : {2, 4, 8, 9, 16, 17, 32, 33, 57, 64, 65, 130}) s.push_back({2, 70, kb});
  return s;
}

std::string shape_name(const Shape& s) {
  return s.groups ? fmt::format("{}x{}x{}", s.groups, s.mn, s.kb) : fmt::format("{}x{}", s.mn, s.kb);
}

class SfLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = gpu_test::why_no_sm90();
    if (!why.empty()) GTEST_SKIP() << why;
    cuda_check(cudaStreamCreate(&stream_), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  void sync() { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  cudaStream_t stream_ = nullptr;
};

TEST_F(SfLayout, MnMajorTmaAlignedMatchesCpuReference) {
  for (const Shape& s : shapes()) {
    for (bool transposed_input : {false, true}) {
      const int g = std::max(s.groups, 1);
      const std::size_t count = static_cast<std::size_t>(g) * s.mn * s.kb;
      const std::vector<float> sf = random_bits(count, gpu_test::next_seed());
      // Row-major [G, mn, kb] input, or the same values stored K-block-major ([G, kb, mn] memory, a strided view).
      std::vector<float> stored = sf;
      if (transposed_input)
        for (int gi = 0; gi < g; ++gi)
          for (int m = 0; m < s.mn; ++m)
            for (int k = 0; k < s.kb; ++k)
              stored[(static_cast<std::size_t>(gi) * s.kb + k) * s.mn + m] =
                  sf[(static_cast<std::size_t>(gi) * s.mn + m) * s.kb + k];
      GuardedBytes in(count * 4), out(static_cast<std::size_t>(g) * s.kb * tilegemm::get_tma_aligned_size(s.mn, 4) * 4);
      in.upload(stored.data(), count * 4);
      const TensorView in_view = transposed_input
                                     ? sf_view(in.data(), s.groups, s.mn, s.kb, 1, s.mn, std::int64_t{s.mn} * s.kb)
                                     : sf_view(in.data(), s.groups, s.mn, s.kb, s.kb, 1, std::int64_t{s.mn} * s.kb);
      tilegemm::get_mn_major_tma_aligned_tensor(
          in_view, mn_major_view(out.data(), DType::kFloat32, s.groups, s.mn, s.kb), stream_);
      sync();
      const std::vector<float> reference = tilegemm::to_mn_major_tma_aligned(sf.data(), g, s.mn, s.kb);
      const std::string problem = compare_padded(out, reference.data(), g, s.mn, s.kb);
      gpu_test::report("sf_mn_major", shape_name(s), transposed_input ? "in kb-major" : "in row-major", "fp32",
                       problem.empty() ? "bit-exact" : problem, problem.empty());
      EXPECT_TRUE(problem.empty()) << shape_name(s) << ": " << problem;
    }
  }
}

TEST_F(SfLayout, PackedUe8m0MatchesCpuReference) {
  for (const Shape& s : shapes()) {
    const int g = std::max(s.groups, 1), packed_k = (s.kb + 3) / 4;
    const std::size_t count = static_cast<std::size_t>(g) * s.mn * s.kb;
    const std::vector<float> sf = random_ue8m0(count, gpu_test::next_seed());
    GuardedBytes in(count * 4), out(tilegemm::sm100_packed_ue8m0_size(g, s.mn, s.kb) * 4);
    in.upload(sf.data(), count * 4);
    tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(
        sf_view(in.data(), s.groups, s.mn, s.kb, s.kb, 1, std::int64_t{s.mn} * s.kb),
        mn_major_view(out.data(), DType::kInt32, s.groups, s.mn, packed_k), stream_);
    sync();
    const std::vector<std::int32_t> reference = tilegemm::pack_ue8m0_sm100(sf.data(), g, s.mn, s.kb);
    const std::string problem = compare_padded(out, reference.data(), g, s.mn, packed_k);
    gpu_test::report("sf_pack_ue8m0", shape_name(s), "sm100 int32", "ue8m0", problem.empty() ? "bit-exact" : problem,
                     problem.empty());
    EXPECT_TRUE(problem.empty()) << shape_name(s) << ": " << problem;
  }
}

TEST_F(SfLayout, PackRejectsNonUe8m0ScalesNamingTheFirst) {
  const int groups = 2, mn = 129, kb = 7;
  std::vector<float> sf = random_ue8m0(static_cast<std::size_t>(groups) * mn * kb, gpu_test::next_seed());
  sf[(1 * mn + 100) * kb + 5] = 0.3f;  // (1, 100, 5)
  sf[(1 * mn + 120) * kb + 2] = 1.5f;  // later in memory: not the one reported
  GuardedBytes in(sf.size() * 4), out(tilegemm::sm100_packed_ue8m0_size(groups, mn, kb) * 4);
  in.upload(sf.data(), sf.size() * 4);
  const TensorView in_view = sf_view(in.data(), groups, mn, kb, kb, 1, std::int64_t{mn} * kb);
  const TensorView out_view = mn_major_view(out.data(), DType::kInt32, groups, mn, 2);
  std::string message;
  try {
    tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(in_view, out_view, stream_);
  } catch (const tilegemm::InvalidArgument& e) {
    message = e.what();
    EXPECT_EQ(e.argument(), "sf");
  }
  gpu_test::report("sf_pack_validate", "2x129x7", "sm100 int32", "fp32", message.empty() ? "no error" : message,
                   message.find("0.3 at (1, 100, 5)") != std::string::npos);
  EXPECT_NE(message.find("UE8M0 scales (powers of two, zero mantissa)"), std::string::npos) << message;
  EXPECT_NE(message.find("0.3 at (1, 100, 5)"), std::string::npos) << message;

  // Without validation the exponent bits are packed as they are (DeepGEMM's truncation).
  tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(in_view, out_view, stream_, /*validate=*/false);
  sync();
  std::vector<float> truncated = sf;
  for (float& v : truncated) v = tilegemm::ue8m0_to_float(tilegemm::float_to_ue8m0(v));
  const std::vector<std::int32_t> reference = tilegemm::pack_ue8m0_sm100(truncated.data(), groups, mn, kb);
  const std::string problem = compare_padded(out, reference.data(), groups, mn, 2);
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST_F(SfLayout, TransformSfIntoRequiredLayout) {
  const int mn = 4097, k = 7168 + 64, kb = (k + 127) / 128, groups = 3;
  // SFA 1x128 → MN-major TMA-aligned fp32 (SM90).
  {
    const std::vector<float> sf = random_bits(static_cast<std::size_t>(groups) * mn * kb, gpu_test::next_seed());
    GuardedBytes in(sf.size() * 4),
        out(static_cast<std::size_t>(groups) * kb * tilegemm::get_tma_aligned_size(mn, 4) * 4);
    in.upload(sf.data(), sf.size() * 4);
    tilegemm::transform_sf_into_required_layout(sf_view(in.data(), groups, mn, kb, kb, 1, std::int64_t{mn} * kb),
                                                mn_major_view(out.data(), DType::kFloat32, groups, mn, kb), mn, k,
                                                {1, 128, 128}, true, groups, false, stream_);
    sync();
    const std::vector<float> reference = tilegemm::to_mn_major_tma_aligned(sf.data(), groups, mn, kb);
    const std::string problem = compare_padded(out, reference.data(), groups, mn, kb);
    gpu_test::report("transform_sf", "3x4097x7232", "sfa (1,128) -> fp32", "fp32",
                     problem.empty() ? "bit-exact" : problem, problem.empty());
    EXPECT_TRUE(problem.empty()) << problem;
  }
  // SFB 128x128 → the same dense K-contiguous fp32 (a copy).
  {
    const int rows = (mn + 127) / 128;
    const std::vector<float> sf = random_bits(static_cast<std::size_t>(groups) * rows * kb, gpu_test::next_seed());
    GuardedBytes in(sf.size() * 4), out(sf.size() * 4);
    in.upload(sf.data(), sf.size() * 4);
    tilegemm::transform_sf_into_required_layout(sf_view(in.data(), groups, rows, kb, kb, 1, std::int64_t{rows} * kb),
                                                sf_view(out.data(), groups, rows, kb, kb, 1, std::int64_t{rows} * kb),
                                                mn, k, {1, 128, 128}, false, groups, false, stream_);
    sync();
    const std::vector<std::uint8_t> all = out.download();
    const bool ok = out.guards_intact(all) && std::memcmp(all.data() + kGuardBytes, sf.data(), sf.size() * 4) == 0;
    gpu_test::report("transform_sf", "3x4097x7232", "sfb (128,128) -> fp32", "fp32", ok ? "bit-exact" : "differs", ok);
    EXPECT_TRUE(ok);
  }
  // SFB 128x128 UE8M0 → packed int32 with each per-block row broadcast to its 128 MN rows (SM100 layout).
  {
    const int rows = (mn + 127) / 128, packed_k = (kb + 3) / 4;
    const std::vector<float> sf = random_ue8m0(static_cast<std::size_t>(groups) * rows * kb, gpu_test::next_seed());
    GuardedBytes in(sf.size() * 4), out(tilegemm::sm100_packed_ue8m0_size(groups, mn, kb) * 4);
    in.upload(sf.data(), sf.size() * 4);
    tilegemm::transform_sf_into_required_layout(sf_view(in.data(), groups, rows, kb, kb, 1, std::int64_t{rows} * kb),
                                                mn_major_view(out.data(), DType::kInt32, groups, mn, packed_k), mn, k,
                                                {1, 128, 128}, false, groups, false, stream_);
    sync();
    std::vector<float> broadcast(static_cast<std::size_t>(groups) * mn * kb);
    for (int g = 0; g < groups; ++g)
      for (int m = 0; m < mn; ++m)
        for (int kk = 0; kk < kb; ++kk)
          broadcast[(static_cast<std::size_t>(g) * mn + m) * kb + kk] =
              sf[(static_cast<std::size_t>(g) * rows + m / 128) * kb + kk];
    const std::vector<std::int32_t> reference = tilegemm::pack_ue8m0_sm100(broadcast.data(), groups, mn, kb);
    const std::string problem = compare_padded(out, reference.data(), groups, mn, packed_k);
    gpu_test::report("transform_sf", "3x4097x7232", "sfb (128,128) -> packed", "ue8m0",
                     problem.empty() ? "bit-exact" : problem, problem.empty());
    EXPECT_TRUE(problem.empty()) << problem;
  }
}

TEST_F(SfLayout, UnalignedOutputTakesThePerRowStores) {
  // The output view starts 4 bytes past a 16-byte boundary, so the kernels cannot use 16-byte stores.
  const int groups = 2, mn = 129, kb = 9;
  const std::vector<float> sf = random_bits(static_cast<std::size_t>(groups) * mn * kb, gpu_test::next_seed());
  const int aligned = tilegemm::get_tma_aligned_size(mn, 4);
  GuardedBytes in(sf.size() * 4), out((static_cast<std::size_t>(groups) * kb * aligned + 1) * 4);
  in.upload(sf.data(), sf.size() * 4);
  void* shifted = static_cast<char*>(out.data()) + 4;
  tilegemm::get_mn_major_tma_aligned_tensor(sf_view(in.data(), groups, mn, kb, kb, 1, std::int64_t{mn} * kb),
                                            mn_major_view(shifted, DType::kFloat32, groups, mn, kb), stream_);
  sync();
  const std::vector<float> reference = tilegemm::to_mn_major_tma_aligned(sf.data(), groups, mn, kb);
  const std::vector<std::uint8_t> all = out.download();
  bool ok = out.guards_intact(all) && all[kGuardBytes] == kPoison;
  for (int g = 0; g < groups && ok; ++g)
    for (int c = 0; c < kb && ok; ++c)
      for (int m = 0; m < mn && ok; ++m) {
        const std::size_t i = (static_cast<std::size_t>(g) * kb + c) * aligned + m;
        ok = std::memcmp(all.data() + kGuardBytes + 4 + 4 * i, &reference[i], 4) == 0;
      }
  gpu_test::report("sf_mn_major", "2x129x9", "out 4 bytes off", "fp32", ok ? "bit-exact" : "differs", ok);
  EXPECT_TRUE(ok);
}

TEST_F(SfLayout, PsumPackZeroesTheGapRows) {
  const int mn = 4097, kb = 57, alignment = 128;
  const std::vector<int> ends = {100, 300, 300, 1000, 4000};  // groups start at 0, 128, 384, 384 and 1024
  const std::vector<float> sf = random_ue8m0(static_cast<std::size_t>(mn) * kb, gpu_test::next_seed());
  GuardedBytes in(sf.size() * 4), out(tilegemm::sm100_packed_ue8m0_size(1, mn, kb) * 4), layout(ends.size() * 4);
  in.upload(sf.data(), sf.size() * 4);
  layout.upload(ends.data(), ends.size() * 4);
  TensorView psum = TensorView::matrix(layout.data(), DType::kInt32, static_cast<std::int64_t>(ends.size()), 1, 1);
  psum.ndim = 1;
  tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(sf_view(in.data(), 0, mn, kb, kb, 1, 0),
                                                         mn_major_view(out.data(), DType::kInt32, 0, mn, (kb + 3) / 4),
                                                         psum, alignment, stream_);
  sync();
  // The reference: every row packed, then the words of the rows outside every group zeroed.
  std::vector<std::int32_t> reference = tilegemm::pack_ue8m0_sm100(sf.data(), 1, mn, kb);
  const int aligned = tilegemm::get_tma_aligned_size(mn, 4);
  std::vector<bool> in_group(mn, false);
  int start = 0;
  for (const int end : ends) {
    for (int m = start; m < end; ++m) in_group[m] = true;
    start = (end + alignment - 1) / alignment * alignment;
  }
  for (int m = 0; m < mn; ++m)
    if (!in_group[m])
      for (int p = 0; p < (kb + 3) / 4; ++p) reference[static_cast<std::size_t>(p) * aligned + m] = 0;
  const std::string problem = compare_padded(out, reference.data(), 1, mn, (kb + 3) / 4);
  gpu_test::report("sf_pack_psum", "4097x57", "sm100 int32", "ue8m0", problem.empty() ? "bit-exact" : problem,
                   problem.empty());
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST_F(SfLayout, KGroupedPackMatchesCpuReference) {
  struct Case {
    int mn, gran_k, k_alignment;
    bool psum;
    std::vector<int> ks;  // the groups' K sizes
  };
  const std::vector<Case> cases = {
      {4096, 128, 128, false, {2048, 1536, 128, 0, 2560}},
      {7168, 128, 128, false, std::vector<int>(72, 384)},
      {256, 32, 32, false, {32, 64, 96, 128, 160}},
      {4096, 128, 160, true, {2048, 1536 + 64, 128, 0, 2560 + 64}},
      {1024, 128, 224, true, std::vector<int>(128, 256 + 64)},
  };
  for (const Case& c : cases) {
    std::vector<int> layout_values;
    int rows = 0, end = 0;
    for (const int k : c.ks) {
      rows += (k + c.gran_k - 1) / c.gran_k;
      if (c.psum) {
        const int start = (end + c.k_alignment - 1) / c.k_alignment * c.k_alignment;
        end = start + k;
        layout_values.push_back(end);
      } else {
        layout_values.push_back(k);
      }
    }
    const std::vector<float> sf = random_ue8m0(static_cast<std::size_t>(rows) * c.mn, gpu_test::next_seed());
    const std::vector<std::int32_t> reference =
        tilegemm::pack_ue8m0_k_grouped(sf.data(), rows, c.mn, layout_values, c.gran_k, c.k_alignment, c.psum);
    const int packed_rows = static_cast<int>(reference.size() / c.mn) + 2;  // two more: an upper bound's spare rows
    GuardedBytes in(sf.size() * 4), out(static_cast<std::size_t>(packed_rows) * c.mn * 4),
        layout(layout_values.size() * 4);
    in.upload(sf.data(), sf.size() * 4);
    layout.upload(layout_values.data(), layout_values.size() * 4);
    TensorView grouped = TensorView::matrix(layout.data(), DType::kInt32, static_cast<std::int64_t>(c.ks.size()), 1, 1);
    grouped.ndim = 1;
    tilegemm::get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
        TensorView::matrix(in.data(), DType::kFloat32, rows, c.mn, c.mn),
        TensorView::matrix(out.data(), DType::kInt32, packed_rows, c.mn, c.mn), grouped, c.gran_k, c.k_alignment,
        c.psum, stream_);
    sync();
    const std::vector<std::uint8_t> all = out.download();
    bool ok =
        out.guards_intact(all) && std::memcmp(all.data() + kGuardBytes, reference.data(), reference.size() * 4) == 0;
    // The spare rows no group owns are not written.
    for (std::size_t i = reference.size() * 4; ok && i < static_cast<std::size_t>(packed_rows) * c.mn * 4; ++i)
      ok = all[kGuardBytes + i] == kPoison;
    const std::string shape = fmt::format("{} groups x {} (sf_k {})", c.ks.size(), c.mn, rows);
    gpu_test::report("sf_pack_k_grouped", shape, c.psum ? "psum" : "sizes", fmt::format("gran_k {}", c.gran_k),
                     ok ? "bit-exact" : "differs", ok);
    EXPECT_TRUE(ok) << shape;
  }
}

}  // namespace
