// fp8_gemm_1d2d_skip_head_mid (DeepGEMM's fp8_gemm_nt_skip_head_mid) on the GPU: DeepGEMM's test shapes (M 128 and
// 4096, (N, K) (32768, 512) and (8192, 512), head_splits (128, 64, 128)) and a ragged one. Every written column of D
// against the float64 references of the dequantised and of the original data, the mid columns holding the sentinel
// written there before the call, the rest of D's allocation (guard bands) still poisoned.
#include <optional>

#include "../cpp/scoped_env.hpp"
#include "fp8_harness.hpp"
#include "tilegemm/fp8_gemm.hpp"

namespace gpu_test {
namespace {

struct SkipHeadMidCase {
  std::int64_t m, n, k;
  tilegemm::HeadSplits heads;
  const char* filter = "";  // a forced config (TILEGEMM_CONFIG_FILTER), "" = the selector's
  const char* scheme = "";  // a forced scheme (TILEGEMM_GEMM_SCHEME), "" = the selector's
};

// A finite value exact in bf16 that no GEMM of these inputs writes: the mid columns must still hold it afterwards.
constexpr double kSentinel = -1536.0;

std::string case_name(const ::testing::TestParamInfo<SkipHeadMidCase>& info) {
  const SkipHeadMidCase& c = info.param;
  std::string forced;
  for (const char* part : {c.filter, c.scheme})
    if (part[0] != '\0') forced += std::string("_") + part;
  for (char& ch : forced)
    if (ch == '=' || ch == ',' || ch == '-' || ch == ':') ch = '_';
  return fmt::format("m{}_n{}_k{}_heads{}_{}_{}{}", c.m, c.n, c.k, c.heads.left, c.heads.mid, c.heads.right, forced);
}
void PrintTo(const SkipHeadMidCase& c, std::ostream* os) {
  *os << fmt::format("m {} n {} k {} head_splits ({}, {}, {})", c.m, c.n, c.k, c.heads.left, c.heads.mid,
                     c.heads.right);
}

class Fp8SkipHeadMid : public ::testing::TestWithParam<SkipHeadMidCase> {};

TEST_P(Fp8SkipHeadMid, WritesEveryHeadPartAndLeavesTheMidColumns) {
  GPU_TEST_REQUIRE_SM90();
  const SkipHeadMidCase cs = GetParam();
  std::optional<test_util::ScopedEnv> filter_scope, scheme_scope;
  if (cs.filter[0] != '\0') filter_scope.emplace("TILEGEMM_CONFIG_FILTER", cs.filter);
  if (cs.scheme[0] != '\0') scheme_scope.emplace("TILEGEMM_GEMM_SCHEME", cs.scheme);
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const auto [left, mid, right] = cs.heads;
  const std::int64_t head = left + right, heads = cs.n / head, n_out = cs.n + heads * mid;
  // D column of GEMM column j, and whether D column c is one the GEMM never writes.
  auto d_column = [&](std::int64_t j) {
    return j / head * (head + mid) + (j % head < left ? j % head : j % head + mid);
  };
  auto is_mid = [&](std::int64_t c) { return c % (head + mid) >= left && c % (head + mid) < left + mid; };

  const QuantisedOperand a = make_quantised(0, cs.m, cs.k, false, seed * 8 + 0);
  const QuantisedOperand b = make_quantised(0, cs.n, cs.k, true, seed * 8 + 1);
  GuardedTensor d(DType::kBFloat16, 0, cs.m, n_out);
  for (std::int64_t r = 0; r < cs.m; ++r)
    for (std::int64_t c = 0; c < n_out; ++c)
      if (is_mid(c)) d.set(0, r, c, kSentinel);
  d.upload();
  tilegemm::fp8_gemm_1d2d_skip_head_mid(a.data_view, a.sf_view, b.data_view, b.sf_view, d.device_view(), cs.heads);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  // Every row: the head parts written (no poison left), the mid columns exactly the sentinel; nothing outside D.
  std::int64_t unwritten = 0, mid_changed = 0;
  for (std::int64_t r = 0; r < cs.m; ++r)
    for (std::int64_t c = 0; c < n_out; ++c) {
      if (is_mid(c))
        mid_changed += d.get(0, r, c) != kSentinel;
      else
        unwritten += d.is_poison_at(d.offset(0, r, c));
    }
  EXPECT_EQ(unwritten, 0) << "head-part elements still holding the poison";
  EXPECT_EQ(mid_changed, 0) << "mid-column elements overwritten";
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_EQ(cov.stray_guard, 0) << cov.describe();

  // The written columns against the references, GEMM column j read from D column d_column(j).
  const auto sample = rows_to_check(cs.m, static_cast<double>(cs.m) * cs.n * cs.k, seed);
  Fp8Comparison cmp;
  cmp.want_dequantised = tilegemm::reference_gemm_rows(a.dequantised_host(0), b.dequantised_host(0), nullptr, sample);
  cmp.want_original = tilegemm::reference_gemm_rows(a.original_host(0), b.original_host(0), nullptr, sample);
  for (std::int64_t r : sample)
    for (std::int64_t j = 0; j < cs.n; ++j) cmp.got.push_back(d.get(0, r, d_column(j)));
  expect_fp8_accuracy(cmp);
  report("fp8_gemm_1d2d_skip_head_mid", fmt::format("{}x{}x{}", cs.m, cs.n, cs.k), "nt",
         fmt::format("d=bf16 heads=({},{},{})", left, mid, right), diff_text(cmp), !HasFailure());
}

std::vector<SkipHeadMidCase> skip_head_mid_cases() {
  std::vector<SkipHeadMidCase> cases;
  for (std::int64_t m : {128, 4096})
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{32768, 512}, {8192, 512}})
      cases.push_back({m, n, k, {128, 64, 128}});
  // Ragged M and K, unequal parts (three heads of 64 + 128), narrower forced tiles, and split-K (its cut tiles are
  // stored through the same remap once summed).
  cases.push_back({65, 576, 1008, {64, 16, 128}});
  cases.push_back({200, 576, 640, {64, 16, 128}, "block_n=32"});
  cases.push_back({64, 576, 4096, {64, 16, 128}, "", "split-k:3"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, Fp8SkipHeadMid, ::testing::ValuesIn(skip_head_mid_cases()), case_name);

// The remap is a Config feature of its own kernel: a split call and a plain call on the same operands, interleaved,
// each write what their own contract says (the plain one every column of its [M, N] D, the split one the same values
// at the remapped columns, up to accumulation order).
TEST(Fp8SkipHeadMidPlain, PlainAndSplitCallsDoNotShareAKernel) {
  GPU_TEST_REQUIRE_SM90();
  const std::uint64_t seed = next_seed();
  const std::int64_t m = 256, n = 512, k = 512;
  const QuantisedOperand a = make_quantised(0, m, k, false, seed * 8 + 0);
  const QuantisedOperand b = make_quantised(0, n, k, true, seed * 8 + 1);
  GuardedTensor plain(DType::kBFloat16, 0, m, n), split(DType::kBFloat16, 0, m, n + 2 * 64);
  tilegemm::fp8_gemm_1d2d(a.data_view, a.sf_view, b.data_view, b.sf_view, plain.device_view());
  tilegemm::fp8_gemm_1d2d_skip_head_mid(a.data_view, a.sf_view, b.data_view, b.sf_view, split.device_view(),
                                        {128, 64, 128});
  tilegemm::fp8_gemm_1d2d(a.data_view, a.sf_view, b.data_view, b.sf_view, plain.device_view());
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMMs");
  plain.download();
  split.download();
  const auto cov = plain.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << cov.describe();
  std::vector<double> want, got;
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      want.push_back(plain.get(0, r, j));
      got.push_back(split.get(0, r, j / 256 * 320 + (j % 256 < 128 ? j % 256 : j % 256 + 64)));
    }
  EXPECT_LT(tilegemm::calc_diff(got, want), kFp8KernelDiff);
}

}  // namespace
}  // namespace gpu_test
