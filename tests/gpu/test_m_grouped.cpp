// M-grouped BF16 GEMMs: the contiguous layout (per-row group index with -1 padding, and the prefix-sum
// layout) and the masked layout, with random group sizes including empty groups. As in DeepGEMM, rows a
// group does not own (padding rows, rows beyond masked_m inside M_max) hold unspecified values afterwards;
// every owned row must be written and nothing outside D (guards, row padding of the stride) may be.
#include <random>

#include "../cpp/scoped_env.hpp"
#include "gpu_harness.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"

namespace gpu_test {
namespace {

std::int64_t align_up(std::int64_t x, std::int64_t a) {
  return (x + a - 1) / a * a;
}

// Compares the rows each group owns with the float64 reference (a sample of rows for big groups) and
// appends to got/want.
void check_group(const GuardedTensor& a, std::int64_t a_batch, std::int64_t row0, std::int64_t rows,
                 const GuardedTensor& b, std::int64_t g, bool b_mn, const GuardedTensor& d, std::int64_t d_batch,
                 std::uint64_t seed, std::vector<double>& got, std::vector<double>& want) {
  if (rows == 0) return;
  const std::int64_t n = d.cols(), k = a.cols();
  const TensorView a_host = a.host_slice(a_batch, row0, row0 + rows);
  const TensorView b_storage = b.host_slice(g, 0, b.rows());
  const TensorView b_host = b_mn ? tilegemm::transpose_last2(b_storage) : b_storage;
  const auto sample = rows_to_check(rows, static_cast<double>(rows) * n * k, seed + static_cast<std::uint64_t>(g));
  const auto ref = tilegemm::reference_gemm_rows(a_host, b_host, nullptr, sample);
  want.insert(want.end(), ref.begin(), ref.end());
  for (std::int64_t r : sample)
    for (std::int64_t j = 0; j < n; ++j) got.push_back(d.get(d_batch, row0 + r, j));
}

struct ContiguousCase {
  int groups;
  std::int64_t n, k;
  int mean_m;
  bool b_mn;
  bool psum;
};

std::string contiguous_name(const ::testing::TestParamInfo<ContiguousCase>& info) {
  const auto& c = info.param;
  return fmt::format("g{}_n{}_k{}_m{}_{}{}", c.groups, c.n, c.k, c.mean_m, c.b_mn ? "nn" : "nt", c.psum ? "_psum" : "");
}

void PrintTo(const ContiguousCase& c, std::ostream* os) {
  *os << fmt::format("g{} n{} k{} mean_m{} {}{}", c.groups, c.n, c.k, c.mean_m, c.b_mn ? "nn" : "nt",
                     c.psum ? " psum" : "");
}

class MGroupedContiguous : public ::testing::TestWithParam<ContiguousCase> {};

void run_contiguous_case(const ContiguousCase& cs) {
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const std::int64_t alignment = tilegemm::get_mk_alignment_for_contiguous_layout();

  const ContiguousGroups layout_groups = random_contiguous_groups(cs.groups, cs.mean_m, alignment, seed);
  const auto& sizes = layout_groups.sizes;
  const auto& starts = layout_groups.starts;
  const auto& row_group = layout_groups.row_group;
  const std::int64_t m_total = layout_groups.m_total;
  DeviceInts layout(cs.psum ? layout_groups.ends : row_group);

  GuardedTensor a(DType::kBFloat16, 0, m_total, cs.k);
  GuardedTensor b(DType::kBFloat16, cs.groups, cs.b_mn ? cs.k : cs.n, cs.b_mn ? cs.n : cs.k);
  GuardedTensor d(DType::kBFloat16, 0, m_total, cs.n);
  a.fill_random(seed * 4 + 0);  // padding rows of A hold random values too: they must not leak into D
  b.fill_random(seed * 4 + 1);
  const TensorView b_view = cs.b_mn ? tilegemm::transpose_last2(b.device_view()) : b.device_view();
  try {
    tilegemm::m_grouped_bf16_gemm_contiguous(a.device_view(), b_view, d.device_view(), layout.view(), cs.psum);
  } catch (const tilegemm::InvalidArgument& e) {
    if (cs.psum && e.argument() == "use_psum_layout") GTEST_SKIP() << "prefix-sum layout rejected: " << e.what();
    throw;
  }
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  const auto cov = d.coverage([&](std::int64_t, std::int64_t r) { return row_group[r] >= 0; });
  EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(cov.stray_guard + cov.stray_padding, 0) << cov.describe();

  std::vector<double> got, want;
  for (int g = 0; g < cs.groups; ++g) check_group(a, 0, starts[g], sizes[g], b, g, cs.b_mn, d, 0, seed, got, want);
  const double diff = tilegemm::calc_diff(got, want);
  EXPECT_LT(diff, kMaxDiff);
  std::string size_list;
  for (auto s : sizes) size_list += fmt::format("{}{}", size_list.empty() ? "" : ",", s);
  report("m_grouped_bf16_gemm_contiguous", fmt::format("M={} [{}] x{} x{}", m_total, size_list, cs.n, cs.k),
         cs.b_mn ? "nn" : "nt", cs.psum ? "d=bf16 psum" : "d=bf16 per-row", fmt::format("calc_diff {:.3e}", diff),
         !::testing::Test::HasFailure());
}

TEST_P(MGroupedContiguous, MatchesReferenceAndLeavesPaddingAlone) {
  GPU_TEST_REQUIRE_SM90();
  run_contiguous_case(GetParam());
}

// 2-CTA clusters forced (the selector offers them for large problems): pairs of 128-row blocks that share B,
// straddle two groups (each CTA loads its own B) or hold padding (the padding CTA only feeds its peer).
class MGroupedContiguousClustered : public ::testing::TestWithParam<ContiguousCase> {};

TEST_P(MGroupedContiguousClustered, MatchesReferenceAndLeavesPaddingAlone) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "cluster_m=2,block_m=128");
  run_contiguous_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedContiguousClustered,
                         ::testing::Values(ContiguousCase{5, 576, 1000, 150, false, false},
                                           ContiguousCase{7, 2112, 7168, 260, false, false},
                                           ContiguousCase{3, 256, 136, 300, false, false}),
                         contiguous_name);

// 128-wide stages (block_k=128) forced.
class MGroupedContiguousTwoAtomStages : public ::testing::TestWithParam<ContiguousCase> {};

TEST_P(MGroupedContiguousTwoAtomStages, MatchesReferenceAndLeavesPaddingAlone) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_k=128");
  run_contiguous_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedContiguousTwoAtomStages,
                         ::testing::Values(ContiguousCase{5, 576, 1000, 150, false, false},
                                           ContiguousCase{3, 256, 7168, 260, true, false},
                                           ContiguousCase{4, 2112, 136, 100, false, true}),
                         contiguous_name);

std::vector<ContiguousCase> contiguous_cases() {
  const ContiguousCase shapes[] = {{4, 576, 1000, 100, false, false},
                                   {8, 2112, 7168, 200, false, false},
                                   {3, 24, 136, 300, false, false},
                                   {16, 7168, 2048, 64, false, false}};
  std::vector<ContiguousCase> cases;
  for (int i = 0; i < 4; ++i)
    for (int variant = 0; variant < 4; ++variant) {
      ContiguousCase c = shapes[i];
      c.b_mn = variant & 1, c.psum = variant & 2;
      // quick: every shape per-row nt, and each of the other three variants on two shapes.
      if (full_level() || variant == 0 || (i + variant) % 2 == 0) cases.push_back(c);
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedContiguous, ::testing::ValuesIn(contiguous_cases()), contiguous_name);
INSTANTIATE_TEST_SUITE_P(Representative, MGroupedContiguous,
                         ::testing::Values(ContiguousCase{3, 24, 136, 300, false, false}), contiguous_name);

struct MaskedCase {
  int groups;
  std::int64_t m_max, n, k;
  bool b_mn;
};

std::string masked_name(const ::testing::TestParamInfo<MaskedCase>& info) {
  const auto& c = info.param;
  return fmt::format("g{}_mmax{}_n{}_k{}_{}", c.groups, c.m_max, c.n, c.k, c.b_mn ? "nn" : "nt");
}

void PrintTo(const MaskedCase& c, std::ostream* os) {
  *os << fmt::format("g{} m_max{} n{} k{} {}", c.groups, c.m_max, c.n, c.k, c.b_mn ? "nn" : "nt");
}

class MGroupedMasked : public ::testing::TestWithParam<MaskedCase> {};

void run_masked_case(const MaskedCase& cs) {
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));

  // Random valid rows per group in [0, M_max]; group 0 is empty and group 1 full.
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, cs.m_max);
  std::vector<std::int32_t> masked(cs.groups);
  for (auto& m : masked) m = static_cast<std::int32_t>(dist(rng));
  masked[0] = 0;
  if (cs.groups > 1) masked[1] = static_cast<std::int32_t>(cs.m_max);
  std::int64_t sum = 0;
  for (auto m : masked) sum += m;
  const int expected_m = static_cast<int>(std::max<std::int64_t>(1, (sum + cs.groups - 1) / cs.groups));
  DeviceInts masked_m(masked);

  GuardedTensor a(DType::kBFloat16, cs.groups, cs.m_max, cs.k);
  GuardedTensor b(DType::kBFloat16, cs.groups, cs.b_mn ? cs.k : cs.n, cs.b_mn ? cs.n : cs.k);
  GuardedTensor d(DType::kBFloat16, cs.groups, cs.m_max, cs.n);
  a.fill_random(seed * 4 + 0);
  b.fill_random(seed * 4 + 1);
  const TensorView b_view = cs.b_mn ? tilegemm::transpose_last2(b.device_view()) : b.device_view();
  tilegemm::m_grouped_bf16_gemm_masked(a.device_view(), b_view, d.device_view(), masked_m.view(), expected_m);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  const auto cov = d.coverage([&](std::int64_t g, std::int64_t r) { return r < masked[g]; });
  EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(cov.stray_guard + cov.stray_padding, 0) << cov.describe();
  std::vector<double> got, want;
  for (int g = 0; g < cs.groups; ++g) check_group(a, g, 0, masked[g], b, g, cs.b_mn, d, g, seed, got, want);
  const double diff = tilegemm::calc_diff(got, want);
  EXPECT_LT(diff, kMaxDiff);
  std::string mask_list;
  for (auto m : masked) mask_list += fmt::format("{}{}", mask_list.empty() ? "" : ",", m);
  report("m_grouped_bf16_gemm_masked",
         fmt::format("{}x{} masked [{}] x{} x{} expected_m {}", cs.groups, cs.m_max, mask_list, cs.n, cs.k, expected_m),
         cs.b_mn ? "nn" : "nt", "d=bf16", fmt::format("calc_diff {:.3e}", diff), !::testing::Test::HasFailure());
}

TEST_P(MGroupedMasked, MatchesReferenceAndStaysInBounds) {
  GPU_TEST_REQUIRE_SM90();
  run_masked_case(GetParam());
}

// 2-CTA clusters forced: m-blocks paired inside each group; a group with an odd block count has an inactive
// last CTA that must store nothing.
class MGroupedMaskedClustered : public ::testing::TestWithParam<MaskedCase> {};

TEST_P(MGroupedMaskedClustered, MatchesReferenceAndStaysInBounds) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "cluster_m=2");
  run_masked_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedMaskedClustered,
                         ::testing::Values(MaskedCase{4, 384, 4096, 7168, false}, MaskedCase{6, 320, 576, 1000, false},
                                           MaskedCase{3, 200, 2112, 1000, false}),
                         masked_name);

// 128-wide stages (block_k=128) forced.
class MGroupedMaskedTwoAtomStages : public ::testing::TestWithParam<MaskedCase> {};

TEST_P(MGroupedMaskedTwoAtomStages, MatchesReferenceAndStaysInBounds) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_k=128");
  run_masked_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedMaskedTwoAtomStages,
                         ::testing::Values(MaskedCase{4, 128, 7168, 2048, false}, MaskedCase{3, 192, 2112, 1000, true}),
                         masked_name);

INSTANTIATE_TEST_SUITE_P(Shapes, MGroupedMasked,
                         ::testing::Values(MaskedCase{4, 128, 7168, 2048, false}, MaskedCase{6, 256, 576, 1000, false},
                                           MaskedCase{2, 64, 24, 136, false}, MaskedCase{8, 384, 4096, 7168, false},
                                           MaskedCase{3, 192, 2112, 1000, true},
                                           // M_max not a multiple of the tile (tail maps): under one 64-row
                                           // tile (decode), and 100.
                                           MaskedCase{6, 24, 576, 1000, false}, MaskedCase{4, 8, 2112, 7168, false},
                                           MaskedCase{3, 40, 2112, 1000, true}, MaskedCase{4, 100, 2112, 1000, false}),
                         masked_name);
INSTANTIATE_TEST_SUITE_P(Representative, MGroupedMasked, ::testing::Values(MaskedCase{2, 64, 24, 136, false}),
                         masked_name);

}  // namespace
}  // namespace gpu_test
