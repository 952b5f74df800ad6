// K-grouped contiguous BF16 GEMM (weight gradients): groups follow each other along K in a [ΣK, M] and
// b [ΣK, N]; d[g] (fp32) = c[g] + a_gᵀ·b_g. Random group sizes including an empty group, every C mode; every
// element of d must be written (empty groups get c or zeros) and nothing around it.
#include <random>

#include "gpu_harness.hpp"
#include "tilegemm/gemm.hpp"

namespace gpu_test {
namespace {

struct KGroupedCase {
  int groups;
  std::int64_t m, n;
  int mean_k;  // group sizes are random multiples of 64 in [0, 2·mean_k]
  CMode c_mode;
};

std::string k_grouped_name(const ::testing::TestParamInfo<KGroupedCase>& info) {
  const auto& c = info.param;
  return fmt::format("g{}_m{}_n{}_k{}_c{}", c.groups, c.m, c.n, c.mean_k, static_cast<int>(c.c_mode));
}

void PrintTo(const KGroupedCase& c, std::ostream* os) {
  *os << fmt::format("g{} m{} n{} mean_k{} c={}", c.groups, c.m, c.n, c.mean_k, c_mode_name(c.c_mode));
}

class KGroupedContiguous : public ::testing::TestWithParam<KGroupedCase> {};

TEST_P(KGroupedContiguous, MatchesReferenceAndWritesEveryGroup) {
  GPU_TEST_REQUIRE_SM90();
  const KGroupedCase cs = GetParam();
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> blocks(0, 2 * cs.mean_k / 64);
  std::vector<int> ks(cs.groups);
  for (auto& k : ks) k = 64 * blocks(rng);
  ks[0] = std::max(ks[0], 64);
  if (cs.groups > 1) ks[1] = 0;  // an empty group: d[1] must become c[1] (or zeros)
  std::vector<std::int32_t> ks32(ks.begin(), ks.end());
  std::int64_t sum_k = 0;
  for (int k : ks) sum_k += k;

  GuardedTensor a(DType::kBFloat16, 0, sum_k, cs.m);
  GuardedTensor b(DType::kBFloat16, 0, sum_k, cs.n);
  GuardedTensor d(DType::kFloat32, cs.groups, cs.m, cs.n);
  GuardedTensor c(DType::kFloat32, cs.groups, cs.m, cs.n);
  a.fill_random(seed * 4 + 0);
  b.fill_random(seed * 4 + 1);
  c.fill_random(seed * 4 + 2);
  if (cs.c_mode == CMode::kInPlace) d.fill_random(seed * 4 + 2);  // d starts as c
  DeviceInts ks_tensor(ks32);

  const TensorView c_view = cs.c_mode == CMode::kInPlace ? d.device_view() : c.device_view();
  const TensorView* c_arg = cs.c_mode == CMode::kNone ? nullptr : &c_view;
  tilegemm::k_grouped_bf16_gemm_tn_contiguous(a.device_view(), b.device_view(), d.device_view(), ks, ks_tensor.view(),
                                              c_arg);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(cov.stray_guard + cov.stray_padding, 0) << cov.describe();

  std::vector<double> got, want;
  std::int64_t k0 = 0;
  for (int g = 0; g < cs.groups; ++g) {
    const TensorView a_g = tilegemm::transpose_last2(a.host_slice(0, k0, k0 + ks[g]));  // [M, K_g]
    const TensorView b_g = tilegemm::transpose_last2(b.host_slice(0, k0, k0 + ks[g]));  // [N, K_g]
    const TensorView c_g = c.host_slice(g, 0, cs.m);
    const auto rows = rows_to_check(cs.m, static_cast<double>(cs.m) * cs.n * ks[g], seed + g);
    std::vector<double> ref;
    if (ks[g] > 0) {
      ref = tilegemm::reference_gemm_rows(a_g, b_g, cs.c_mode == CMode::kNone ? nullptr : &c_g, rows);
    } else {
      for (std::int64_t r : rows)
        for (std::int64_t j = 0; j < cs.n; ++j) ref.push_back(cs.c_mode == CMode::kNone ? 0.0 : c.get(g, r, j));
    }
    want.insert(want.end(), ref.begin(), ref.end());
    for (std::int64_t r : rows)
      for (std::int64_t j = 0; j < cs.n; ++j) got.push_back(d.get(g, r, j));
    k0 += ks[g];
  }
  const double diff = tilegemm::calc_diff(got, want);
  EXPECT_LT(diff, kMaxDiff);
  std::string k_list;
  for (int k : ks) k_list += fmt::format("{}{}", k_list.empty() ? "" : ",", k);
  report("k_grouped_bf16_gemm_tn_contiguous", fmt::format("{}x{} ks [{}]", cs.m, cs.n, k_list), "tn",
         fmt::format("d=fp32 c={}", c_mode_name(cs.c_mode)), fmt::format("calc_diff {:.3e}", diff), !HasFailure());
}

INSTANTIATE_TEST_SUITE_P(Shapes, KGroupedContiguous,
                         ::testing::Values(KGroupedCase{4, 576, 2112, 512, CMode::kNone},
                                           KGroupedCase{4, 576, 2112, 512, CMode::kSeparate},
                                           KGroupedCase{3, 136, 24, 256, CMode::kInPlace},
                                           KGroupedCase{8, 4096, 7168, 1024, CMode::kInPlace},
                                           KGroupedCase{2, 1024, 1024, 2048, CMode::kNone}),
                         k_grouped_name);
INSTANTIATE_TEST_SUITE_P(Representative, KGroupedContiguous,
                         ::testing::Values(KGroupedCase{3, 136, 24, 256, CMode::kSeparate}), k_grouped_name);

}  // namespace
}  // namespace gpu_test
