// SM90 FP8 block-scaled GEMMs on the GPU: 1D2D and 1D1D, dense, batched, M-grouped (contiguous, prefix-sum,
// masked) and K-grouped, against float64 references of the dequantised and of the original data, with D
// poisoned before the run and its guard bands checked after.
#include <optional>
#include <random>
#include <tuple>

#include "../cpp/scoped_env.hpp"
#include "fp8_harness.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/gemm.hpp"

namespace gpu_test {
namespace {

std::int64_t align_up(std::int64_t x, std::int64_t a) {
  return (x + a - 1) / a * a;
}

// ---------------- dense and batched ----------------
enum class Recipe { k1D2D, k1D1D };
struct Fp8DenseCase {
  std::int64_t batch, m, n, k;
  Recipe recipe;
  CMode c_mode;                // 1D1D only
  const char* scheme = "";     // force a scheme (TILEGEMM_GEMM_SCHEME: "split-k", "stream-k", ...), "" = selector's
  bool deterministic = false;  // the split reduction mode (tilegemm::set_deterministic)
  const char* filter = "";     // a forced config (TILEGEMM_CONFIG_FILTER), "" = none
  PerTokenLayout sf_layout = PerTokenLayout::kMnMajor;  // of the per-token scales (A's; B's too in 1D1D)
};

// The filter that forces a 2x1 cluster sharing B; test names call it "cluster2".
constexpr const char* kClusterFilter = "cluster_m=2";

// A dense case on a forced config.
Fp8DenseCase forced_case(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, const char* filter,
                         Recipe recipe = Recipe::k1D2D, CMode c_mode = CMode::kNone) {
  Fp8DenseCase c{batch, m, n, k, recipe, c_mode};
  c.filter = filter;
  return c;
}

// Forces a split scheme and reduction mode for one scope ("" = leave the selector alone).
class ForcedScheme {
 public:
  ForcedScheme(const char* scheme, bool deterministic) : on_(scheme[0] != '\0') {
    if (!on_) return;
    scope_.emplace("TILEGEMM_GEMM_SCHEME", scheme);
    tilegemm::set_deterministic(deterministic);
  }
  ~ForcedScheme() {
    if (on_) tilegemm::set_deterministic(false);
  }

 private:
  bool on_;
  std::optional<test_util::ScopedEnv> scope_;
};

// Forces the 2-CTA B-multicast kernel for the rest of a test when `on` (the selector picks it only for large
// problems).
void force_cluster(std::optional<test_util::ScopedEnv>& scope, bool on) {
  if (on) scope.emplace("TILEGEMM_CONFIG_FILTER", kClusterFilter);
}

std::string dense_name(const ::testing::TestParamInfo<Fp8DenseCase>& info) {
  const auto& c = info.param;
  const std::string forced = c.filter;
  std::string scheme = c.scheme;
  std::string filter = forced == kClusterFilter ? "cluster2" : forced;
  for (std::string* text : {&scheme, &filter})
    for (char& ch : *text)
      if (ch == '-' || ch == ':' || ch == '=' || ch == ',') ch = '_';
  return fmt::format("{}m{}_n{}_k{}_{}_c{}{}{}", c.batch ? fmt::format("b{}_", c.batch) : "", c.m, c.n, c.k,
                     c.recipe == Recipe::k1D2D ? "1d2d" : "1d1d", static_cast<int>(c.c_mode),
                     scheme.empty() ? "" : "_" + scheme, scheme.empty() ? "" : (c.deterministic ? "_det" : "_atomic")) +
         (filter.empty() ? "" : "_" + filter) + (c.sf_layout == PerTokenLayout::kRowMajor ? "_rowsf" : "");
}
void PrintTo(const Fp8DenseCase& c, std::ostream* os) {
  *os << fmt::format("batch {} m {} n {} k {} {} c={}", c.batch, c.m, c.n, c.k,
                     c.recipe == Recipe::k1D2D ? "1d2d" : "1d1d", c_mode_name(c.c_mode));
}

class Fp8Dense : public ::testing::TestWithParam<Fp8DenseCase> {};

TEST_P(Fp8Dense, MatchesReferencesAndStaysInBounds) {
  GPU_TEST_REQUIRE_SM90();
  const Fp8DenseCase cs = GetParam();
  std::optional<test_util::ScopedEnv> filter_scope;
  if (cs.filter[0] != '\0') filter_scope.emplace("TILEGEMM_CONFIG_FILTER", cs.filter);
  const ForcedScheme forced(cs.scheme, cs.deterministic);
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const bool one_d_one_d = cs.recipe == Recipe::k1D1D;
  const QuantisedOperand a = make_quantised(cs.batch, cs.m, cs.k, false, seed * 8 + 0, false, cs.sf_layout);
  const QuantisedOperand b = make_quantised(cs.batch, cs.n, cs.k, !one_d_one_d, seed * 8 + 1, false, cs.sf_layout);
  GuardedTensor d(one_d_one_d ? DType::kFloat32 : DType::kBFloat16, cs.batch, cs.m, cs.n);
  std::unique_ptr<GuardedTensor> c;
  if (cs.c_mode != CMode::kNone) {
    c = std::make_unique<GuardedTensor>(DType::kFloat32, cs.batch, cs.m, cs.n);
    c->fill_random(seed * 8 + 2);
  }
  const GuardedTensor* c_host = c.get();
  if (cs.c_mode == CMode::kInPlace) {
    d.fill_random(seed * 8 + 2);  // the same values as c: d holds C before the call
  }
  const TensorView c_view = c ? c->device_view() : TensorView{};
  const TensorView* c_arg = cs.c_mode == CMode::kSeparate ? &c_view : nullptr;
  const TensorView d_view = d.device_view();
  if (cs.c_mode == CMode::kInPlace) c_arg = &d_view;

  if (one_d_one_d)
    tilegemm::fp8_gemm_1d1d(a.data_view, a.sf_view, b.data_view, b.sf_view, d_view, c_arg);
  else
    tilegemm::fp8_gemm_1d2d(a.data_view, a.sf_view, b.data_view, b.sf_view, d_view);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << cov.describe();
  Fp8Comparison cmp;
  for (std::int64_t g = 0; g < a.batches(); ++g)
    compare_rows(a, g, 0, cs.m, b, g, d, g, 0, c_host, 0, cs.k, seed + g, cmp);
  expect_fp8_accuracy(cmp);
  report(one_d_one_d ? "fp8_gemm_1d1d" : "fp8_gemm_1d2d",
         fmt::format("{}{}x{}x{}", cs.batch ? fmt::format("{}x", cs.batch) : "", cs.m, cs.n, cs.k), "nt",
         fmt::format("d={} c={}", one_d_one_d ? "fp32" : "bf16", c_mode_name(cs.c_mode)), diff_text(cmp),
         !HasFailure());
}

// DeepSeek-V3's six dense weights (N, K), for the DeepSeek and decode cases.
constexpr std::pair<std::int64_t, std::int64_t> kDeepSeekNK[] = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                                 {7168, 16384}, {4096, 7168},  {7168, 2048}};

std::vector<Fp8DenseCase> dense_cases() {
  std::vector<Fp8DenseCase> cases;
  // The 18 DeepSeek shapes (quick: the six N,K pairs, each with one of the three M).
  const std::int64_t ms[] = {64, 128, 4096};
  int i = 0;
  for (auto m : ms)
    for (auto [n, k] : kDeepSeekNK) {
      if (full_level() || i % 4 == 0 || (m == 4096 && i % 2 == 1))
        cases.push_back({0, m, n, k, Recipe::k1D2D, CMode::kNone});
      ++i;
    }
  // Ragged: M not a multiple of any tile, N of 16 bytes of bf16, K not a multiple of 128 (a partial last scale block).
  const std::int64_t ragged_m[] = {1, 7, 65, 129, 4095};
  const std::int64_t ragged_n[] = {8, 24, 576, 2112, 7168};
  const std::int64_t ragged_k[] = {128, 1008, 7168, 272, 3200};
  for (int j = 0; j < 5; ++j)
    cases.push_back({0, ragged_m[j], ragged_n[(j + 2) % 5], ragged_k[j], Recipe::k1D2D, CMode::kNone});
  // 1D1D with each way C can enter.
  cases.push_back({0, 129, 576, 1008, Recipe::k1D1D, CMode::kNone});
  cases.push_back({0, 4096, 7168, 2048, Recipe::k1D1D, CMode::kSeparate});
  cases.push_back({0, 65, 2112, 512, Recipe::k1D1D, CMode::kInPlace});
  // Batched.
  cases.push_back({3, 129, 576, 512, Recipe::k1D2D, CMode::kNone});
  cases.push_back({2, 200, 2112, 1024, Recipe::k1D1D, CMode::kInPlace});
  // 2x1 clusters sharing B (forced): an odd m-block count, 1D1D with C in place, batched.
  cases.push_back(forced_case(0, 4096, 7168, 2048, kClusterFilter));
  cases.push_back(forced_case(0, 256, 2112, 1008, kClusterFilter, Recipe::k1D1D, CMode::kInPlace));
  cases.push_back(forced_case(2, 256, 576, 512, kClusterFilter));
  // Split-K and stream-K (forced), both reduction modes: tiny M, a partial last scale block, long K, 1D1D with C
  // accumulated in place, a batch.
  for (const char* scheme : {"split-k", "stream-k"})
    for (bool det : {false, true}) {
      cases.push_back({0, 1, 576, 1008, Recipe::k1D2D, CMode::kNone, scheme, det});
      cases.push_back({0, 129, 7168, 7168, Recipe::k1D2D, CMode::kNone, scheme, det});
      cases.push_back({0, 64, 2112, 16384, Recipe::k1D2D, CMode::kNone, scheme, det});
      cases.push_back({0, 65, 576, 2048, Recipe::k1D1D, CMode::kInPlace, scheme, det});
      cases.push_back({2, 64, 576, 1024, Recipe::k1D2D, CMode::kNone, scheme, det});
    }
  // Stream-K over several full waves of tiles (the whole-tile waves, then the shared tail), both modes.
  for (bool det : {false, true}) {
    cases.push_back({0, 4096, 4096, 1024, Recipe::k1D2D, CMode::kNone, "stream-k", det});
    cases.push_back({0, 3000, 2112, 640, Recipe::k1D1D, CMode::kInPlace, "stream-k", det});
  }
  return cases;
}

// 1D2D tiles whose columns straddle two 128-wide scale blocks of B, forced: the kernel's K loop is specialised on
// where the split falls for 96, 160 and 192 columns (first columns at every offset the width allows, a partial last
// tile, a partial last scale block of K, a batch, a 2x1 cluster) and keeps a runtime split for 144.
std::vector<Fp8DenseCase> scale_straddle_cases() {
  return {forced_case(0, 200, 2112, 1024, "block_n=160"),
          forced_case(0, 129, 1000, 1008, "block_m=128,block_n=192"),
          forced_case(2, 129, 576, 512, "block_n=192"),
          forced_case(0, 300, 2112, 512, "block_n=96"),
          forced_case(0, 65, 2112, 640, "block_n=144"),
          forced_case(0, 512, 2112, 1024, "block_m=128,block_n=192,cluster_m=2")};
}

// Appends a forced dense case per split scheme and reduction mode: split-K in 3 and stream-K, atomic and deterministic.
void append_split_cases(std::vector<Fp8DenseCase>& out, std::int64_t m, std::int64_t n, std::int64_t k,
                        const char* filter) {
  for (const char* scheme : {"split-k:3", "stream-k"})
    for (bool det : {false, true}) {
      Fp8DenseCase c = forced_case(0, m, n, k, filter);
      c.scheme = scheme, c.deterministic = det;
      out.push_back(c);
    }
}

// Tiles whose width is an odd multiple of 8, forced (the selector takes 64x56 and 128x56 for N = 7168 at small M):
// the real shapes, ragged M and N (a partial last tile of 48 of 56 columns, a partial last scale block of K), a
// batch, 1D1D with C in place (32-byte fp32 chunks), a 136-wide tile straddling two scale blocks of B (the K loop's
// runtime split), and split-K / stream-K fix-ups of 56-wide tiles.
std::vector<Fp8DenseCase> odd_eighth_cases() {
  std::vector<Fp8DenseCase> out = {forced_case(0, 64, 7168, 2048, "block_m=64,block_n=56"),
                                   forced_case(0, 128, 7168, 1024, "block_m=128,block_n=56,math_wg=2"),
                                   forced_case(0, 129, 1000, 1008, "block_n=56"),
                                   forced_case(2, 65, 600, 512, "block_n=24"),
                                   forced_case(0, 256, 1000, 1008, "block_n=40", Recipe::k1D1D, CMode::kInPlace),
                                   forced_case(0, 200, 2112, 1024, "block_m=128,block_n=136,math_wg=2")};
  append_split_cases(out, 129, 1000, 1008, "block_m=64,block_n=56");
  return out;
}

// Stages of two 128-wide K blocks (block_k = 256), forced: an odd number of K blocks (the last stage's second block
// past K: zero-filled operands, the first block's B scales again), K of one block, a partial last scale block, a
// batch, the narrow and 64-wide small-M tiles, a 128x192 tile on two warpgroups, split-K and stream-K.
std::vector<Fp8DenseCase> two_block_stage_cases() {
  std::vector<Fp8DenseCase> out = {forced_case(0, 64, 2112, 7168, "block_m=64,block_n=16,block_k=256"),
                                   forced_case(0, 64, 7168, 16384, "block_m=64,block_n=64,block_k=256"),
                                   forced_case(0, 129, 1000, 1152, "block_k=256"),
                                   forced_case(0, 65, 576, 128, "block_k=256"),
                                   forced_case(0, 129, 1000, 1008, "block_k=256"),
                                   forced_case(2, 129, 576, 640, "block_k=256"),
                                   forced_case(0, 256, 2112, 1024, "block_m=128,block_n=192,math_wg=2,block_k=256")};
  append_split_cases(out, 129, 1000, 1152, "block_m=64,block_k=256");
  return out;
}

// Stages of four 128-wide K blocks (block_k = 512), forced: K-block counts leaving one, two and three blocks of the
// last stage past K (9, 5 and 3 blocks; 1008 also a partial scale block), K of one block, a batch, the small-M tiles
// of the DeepSeek shapes, split-K and stream-K.
std::vector<Fp8DenseCase> four_block_stage_cases() {
  std::vector<Fp8DenseCase> out = {forced_case(0, 64, 2112, 7168, "block_m=64,block_n=16,block_k=512"),
                                   forced_case(0, 64, 7168, 16384, "block_m=64,block_n=64,block_k=512"),
                                   forced_case(0, 129, 1000, 1152, "block_k=512"),
                                   forced_case(0, 65, 576, 128, "block_k=512"),
                                   forced_case(0, 129, 1000, 1008, "block_k=512"),
                                   forced_case(0, 72, 640, 384, "block_k=512"),
                                   forced_case(2, 129, 576, 640, "block_k=512"),
                                   forced_case(0, 128, 7168, 7168, "block_m=128,block_n=64,math_wg=2,block_k=512")};
  append_split_cases(out, 129, 1000, 1152, "block_m=64,block_k=512");
  return out;
}

// Decode: M under one 64-row tile, so the only m-block is the tail: A and its scales are loaded through the tail maps
// (boxes of just M rows) and the tile's other rows of shared memory stay stale. The decode suite's shapes (quick:
// each N,K pair at one of the four M), then forced configs: 128-row tiles on two warpgroups (the second owns no row),
// stages of two and four K blocks, the 16-wide tile, 1D1D with C in place, a batch, split-K and stream-K.
std::vector<Fp8DenseCase> decode_cases() {
  std::vector<Fp8DenseCase> out;
  const std::int64_t ms[] = {1, 8, 16, 32};
  int i = 0;
  for (auto [n, k] : kDeepSeekNK) {
    for (int j = 0; j < 4; ++j)
      if (full_level() || j == i % 4) out.push_back({0, ms[j], n, k, Recipe::k1D2D, CMode::kNone});
    ++i;
  }
  out.push_back(forced_case(0, 40, 1000, 1008, "block_m=128,math_wg=2"));
  out.push_back(forced_case(0, 3, 2112, 1152, "block_k=256"));
  out.push_back(forced_case(0, 5, 640, 1008, "block_k=512"));
  out.push_back(forced_case(0, 8, 2112, 7168, "block_m=64,block_n=16,block_k=512"));
  out.push_back(forced_case(0, 7, 576, 1008, "", Recipe::k1D1D, CMode::kInPlace));
  out.push_back(forced_case(2, 9, 576, 512, ""));
  append_split_cases(out, 5, 1000, 1152, "block_m=64");
  return out;
}

// Tails, forced: M not a multiple of the tile, so the last m-block loads A and its scales through the tail maps and
// the warpgroup holding D's last row stores through D's: one row past a 64-row tile, 128-row tiles on two
// warpgroups, a 256-row tile whose tail is one row, 1D1D with C in place, a batch on four-block stages, a 2x1
// cluster sharing B, split-K and stream-K.
std::vector<Fp8DenseCase> tail_cases() {
  std::vector<Fp8DenseCase> out = {forced_case(0, 65, 2112, 7168, "block_m=64"),
                                   forced_case(0, 200, 1000, 1008, "block_m=128,math_wg=2"),
                                   forced_case(0, 129, 7168, 2048, "block_m=256"),
                                   forced_case(0, 300, 576, 1008, "", Recipe::k1D1D, CMode::kInPlace),
                                   forced_case(2, 100, 576, 512, "block_k=512"),
                                   forced_case(0, 200, 2112, 1008, kClusterFilter)};
  append_split_cases(out, 100, 1000, 1152, "block_m=64");
  return out;
}

// Per-token scales row-major, as DeepGEMM's per_token_cast_to_fp8 returns them: the kernel's scale warp copies them
// without a layout pass, on every tile shape and mode the tails cover, decode, the 1D1D recipe (B's per-token scales
// row-major too) and a batch.
std::vector<Fp8DenseCase> row_major_scale_cases() {
  std::vector<Fp8DenseCase> out = tail_cases();
  const std::vector<Fp8DenseCase> decode = decode_cases();
  for (std::size_t i = 0; i < decode.size(); i += 2) out.push_back(decode[i]);
  out.push_back(Fp8DenseCase{0, 128, 7168, 2048, Recipe::k1D2D, CMode::kNone});
  out.push_back(Fp8DenseCase{0, 4096, 2112, 7168, Recipe::k1D2D, CMode::kNone});
  out.push_back(Fp8DenseCase{3, 129, 576, 1152, Recipe::k1D1D, CMode::kSeparate});
  for (auto& c : out) c.sf_layout = PerTokenLayout::kRowMajor;
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8Dense, ::testing::ValuesIn(dense_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(RowMajorScales, Fp8Dense, ::testing::ValuesIn(row_major_scale_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(ScaleStraddle, Fp8Dense, ::testing::ValuesIn(scale_straddle_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(OddEighthTiles, Fp8Dense, ::testing::ValuesIn(odd_eighth_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(Decode, Fp8Dense, ::testing::ValuesIn(decode_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(Tails, Fp8Dense, ::testing::ValuesIn(tail_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(TwoBlockStages, Fp8Dense, ::testing::ValuesIn(two_block_stage_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(FourBlockStages, Fp8Dense, ::testing::ValuesIn(four_block_stage_cases()), dense_name);
INSTANTIATE_TEST_SUITE_P(Representative, Fp8Dense,
                         ::testing::Values(Fp8DenseCase{0, 65, 576, 272, Recipe::k1D2D, CMode::kNone},
                                           Fp8DenseCase{0, 65, 576, 272, Recipe::k1D1D, CMode::kInPlace}),
                         dense_name);

// Deterministic split-K / stream-K: ten calls on the same operands give the same bytes.
TEST(Fp8SplitDeterminism, TenRunsBitIdentical) {
  GPU_TEST_REQUIRE_SM90();
  for (const char* scheme : {"split-k", "stream-k"}) {
    SCOPED_TRACE(scheme);
    const ForcedScheme forced(scheme, true);
    const std::uint64_t seed = next_seed();
    const QuantisedOperand a = make_quantised(0, 129, 7168, false, seed * 8 + 0);
    const QuantisedOperand b = make_quantised(0, 2112, 7168, true, seed * 8 + 1);
    GuardedTensor d(DType::kBFloat16, 0, 129, 2112);
    std::vector<double> first;
    for (int run = 0; run < 10; ++run) {
      tilegemm::fp8_gemm_1d2d(a.data_view, a.sf_view, b.data_view, b.sf_view, d.device_view());
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
      d.download();
      std::vector<double> got;
      for (std::int64_t r = 0; r < 129; ++r)
        for (std::int64_t j = 0; j < 2112; ++j) got.push_back(d.get(0, r, j));
      if (run == 0)
        first = got;
      else
        ASSERT_EQ(got, first) << "run " << run << " differs from run 0";
    }
  }
}

// ---------------- M-grouped contiguous ----------------
struct Fp8ContiguousCase {
  int groups;
  std::int64_t n, k;
  int mean_m;
  bool psum;
  bool clustered = false;
  // 256-row tiles forced, and fixed group sizes whose starts fall mid-tile: tiles straddling two groups run
  // in two passes (sched::Tile::two_passes). mean_m is unused then.
  bool two_pass = false;
  PerTokenLayout sf_layout = PerTokenLayout::kMnMajor;  // of A's per-token scales
};
// Sizes 130, 0, 250, 384, 129, 5 start at rows 0, 256, 256, 512, 896, 1152: 896 and 1152 are mid-tile.
const std::vector<std::int64_t> kStraddlingGroupSizes = {130, 0, 250, 384, 129, 5};
std::string contiguous_name(const ::testing::TestParamInfo<Fp8ContiguousCase>& info) {
  const auto& c = info.param;
  return fmt::format("g{}_n{}_k{}_m{}{}{}{}{}", c.groups, c.n, c.k, c.mean_m, c.psum ? "_psum" : "",
                     c.clustered ? "_cluster2" : "", c.two_pass ? "_two_pass" : "",
                     c.sf_layout == PerTokenLayout::kRowMajor ? "_rowsf" : "");
}
void PrintTo(const Fp8ContiguousCase& c, std::ostream* os) {
  *os << fmt::format("g{} n{} k{} m{}", c.groups, c.n, c.k, c.mean_m);
}

class Fp8MGroupedContiguous : public ::testing::TestWithParam<Fp8ContiguousCase> {};

TEST_P(Fp8MGroupedContiguous, MatchesReferencesAndLeavesPaddingAlone) {
  GPU_TEST_REQUIRE_SM90();
  const Fp8ContiguousCase cs = GetParam();
  std::optional<test_util::ScopedEnv> config_filter;  // forces 2x1 clusters or 256-row tiles (never both)
  force_cluster(config_filter, cs.clustered);
  if (cs.two_pass) config_filter.emplace("TILEGEMM_CONFIG_FILTER", "block_m=256");
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const std::int64_t alignment = tilegemm::get_mk_alignment_for_contiguous_layout();
  const ContiguousGroups layout_groups = cs.two_pass ? contiguous_groups_of(kStraddlingGroupSizes, alignment)
                                                     : random_contiguous_groups(cs.groups, cs.mean_m, alignment, seed);
  ASSERT_EQ(static_cast<int>(layout_groups.sizes.size()), cs.groups);
  const auto& sizes = layout_groups.sizes;
  const auto& starts = layout_groups.starts;
  const auto& row_group = layout_groups.row_group;
  const std::int64_t m_total = layout_groups.m_total;
  DeviceInts layout(cs.psum ? layout_groups.ends : row_group);

  const QuantisedOperand a = make_quantised(0, m_total, cs.k, false, seed * 8 + 0, false, cs.sf_layout);
  const QuantisedOperand b = make_quantised(cs.groups, cs.n, cs.k, true, seed * 8 + 1);
  GuardedTensor d(DType::kBFloat16, 0, m_total, cs.n);
  tilegemm::m_grouped_fp8_gemm_contiguous(a.data_view, a.sf_view, b.data_view, b.sf_view, d.device_view(),
                                          layout.view(), cs.psum);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();

  const auto cov = d.coverage([&](std::int64_t, std::int64_t r) { return row_group[r] >= 0; });
  EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(cov.stray_guard + cov.stray_padding, 0) << cov.describe();
  Fp8Comparison cmp;
  for (int g = 0; g < cs.groups; ++g)
    compare_rows(a, 0, starts[g], sizes[g], b, g, d, 0, starts[g], nullptr, 0, cs.k, seed + g, cmp);
  expect_fp8_accuracy(cmp);
  std::string size_list;
  for (auto s : sizes) size_list += fmt::format("{}{}", size_list.empty() ? "" : ",", s);
  report("m_grouped_fp8_gemm_contiguous", fmt::format("M={} [{}] x{} x{}", m_total, size_list, cs.n, cs.k), "nt",
         cs.psum ? "1d2d psum" : "1d2d per-row", diff_text(cmp), !HasFailure());
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8MGroupedContiguous,
                         ::testing::Values(Fp8ContiguousCase{4, 4096, 7168, 300, false},
                                           Fp8ContiguousCase{8, 7168, 2048, 200, true},
                                           Fp8ContiguousCase{3, 576, 1008, 100, false},
                                           Fp8ContiguousCase{5, 24, 272, 150, true},
                                           Fp8ContiguousCase{7, 2112, 1008, 260, false, true},
                                           Fp8ContiguousCase{6, 4096, 7168, 0, false, false, true},
                                           Fp8ContiguousCase{6, 576, 1008, 0, false, false, true}),
                         contiguous_name);
INSTANTIATE_TEST_SUITE_P(
    RowMajorScales, Fp8MGroupedContiguous,
    ::testing::Values(Fp8ContiguousCase{4, 4096, 7168, 300, false, false, false, PerTokenLayout::kRowMajor},
                      Fp8ContiguousCase{7, 2112, 1008, 260, false, true, false, PerTokenLayout::kRowMajor},
                      Fp8ContiguousCase{6, 4096, 7168, 0, false, false, true, PerTokenLayout::kRowMajor}),
    contiguous_name);

// ---------------- M-grouped masked ----------------
// {groups, m_max, n, k, forced}: forced 1 = a 2x1 cluster, 2 = two-block stages, 3 = four-block stages, 4 = row-major
// per-token scales of A (the selector's config)
class Fp8MGroupedMasked : public ::testing::TestWithParam<std::array<std::int64_t, 5>> {};

TEST_P(Fp8MGroupedMasked, MatchesReferencesAndStaysInBounds) {
  GPU_TEST_REQUIRE_SM90();
  const auto [groups, m_max, n, k, forced] = GetParam();
  std::optional<test_util::ScopedEnv> cluster_scope;
  force_cluster(cluster_scope, forced == 1);
  if (forced == 2) cluster_scope.emplace("TILEGEMM_CONFIG_FILTER", "block_k=256");
  if (forced == 3) cluster_scope.emplace("TILEGEMM_CONFIG_FILTER", "block_k=512");
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, m_max);
  std::vector<std::int32_t> masked(static_cast<std::size_t>(groups));
  for (auto& m : masked) m = static_cast<std::int32_t>(dist(rng));
  masked[0] = 0;
  if (groups > 1) masked[1] = static_cast<std::int32_t>(m_max);
  DeviceInts masked_m(masked);

  const QuantisedOperand a = make_quantised(groups, m_max, k, false, seed * 8 + 0, false,
                                            forced == 4 ? PerTokenLayout::kRowMajor : PerTokenLayout::kMnMajor);
  const QuantisedOperand b = make_quantised(groups, n, k, true, seed * 8 + 1);
  GuardedTensor d(DType::kBFloat16, groups, m_max, n);
  tilegemm::m_grouped_fp8_gemm_masked(a.data_view, a.sf_view, b.data_view, b.sf_view, d.device_view(), masked_m.view(),
                                      static_cast<int>(m_max / 2 + 1));
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();
  const auto cov = d.coverage([&](std::int64_t g, std::int64_t r) { return r < masked[g]; });
  EXPECT_EQ(cov.unwritten, 0) << cov.describe();
  EXPECT_EQ(cov.stray_guard + cov.stray_padding, 0) << cov.describe();
  Fp8Comparison cmp;
  for (std::int64_t g = 0; g < groups; ++g)
    compare_rows(a, g, 0, masked[g], b, g, d, g, 0, nullptr, 0, k, seed + g, cmp);
  expect_fp8_accuracy(cmp);
  std::string mask_list;
  for (auto m : masked) mask_list += fmt::format("{}{}", mask_list.empty() ? "" : ",", m);
  report("m_grouped_fp8_gemm_masked", fmt::format("{}x{} masked [{}] x{} x{}", groups, m_max, mask_list, n, k), "nt",
         "1d2d", diff_text(cmp), !HasFailure());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp8MGroupedMasked,
    ::testing::Values(
        std::array<std::int64_t, 5>{4, 256, 4096, 7168, 0}, std::array<std::int64_t, 5>{6, 192, 2112, 1008, 0},
        std::array<std::int64_t, 5>{2, 64, 24, 272, 0}, std::array<std::int64_t, 5>{5, 320, 2112, 1008, 1},
        std::array<std::int64_t, 5>{4, 256, 4096, 7168, 2}, std::array<std::int64_t, 5>{6, 192, 2112, 1152, 2},
        std::array<std::int64_t, 5>{4, 256, 4096, 7168, 3}, std::array<std::int64_t, 5>{6, 192, 2112, 1408, 3},
        // M_max not a multiple of the tile (tail maps): under one 64-row
        // tile (decode), and 100.
        std::array<std::int64_t, 5>{6, 24, 2112, 1008, 0}, std::array<std::int64_t, 5>{4, 8, 4096, 7168, 0},
        std::array<std::int64_t, 5>{5, 40, 2112, 1408, 3}, std::array<std::int64_t, 5>{4, 100, 2112, 1008, 0},
        // Row-major A scales, as DeepGEMM's quantiser returns them.
        std::array<std::int64_t, 5>{4, 256, 4096, 7168, 4}, std::array<std::int64_t, 5>{6, 100, 2112, 1008, 4},
        std::array<std::int64_t, 5>{4, 100, 2112, 1152, 4}));

// ---------------- K-grouped contiguous (1D1D) ----------------
// blocks: a and b as 1-D tensors in DeepGEMM's layout (each group's K-major [rows, k_g] block in turn, read through a
// map per group, in launches of at most kFp8MaxGroupMaps groups); else [rows, ΣK] with the groups side by side.
class Fp8KGrouped
    : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, std::vector<int>, CMode, bool>> {};

// The groups of a [rows, ΣK] e4m3 device operand as DeepGEMM lays them out: group g's [rows, k_g] block after the
// previous groups'.
std::unique_ptr<DeviceBuffer> to_group_blocks(const TensorView& side_by_side, const std::vector<int>& ks) {
  const std::int64_t rows = side_by_side.size(0), sum_k = side_by_side.size(1);
  auto out = std::make_unique<DeviceBuffer>(static_cast<std::size_t>(rows * sum_k));
  std::int64_t k0 = 0;
  for (int k_g : ks) {
    if (k_g > 0)
      cuda_check(
          cudaMemcpy2D(static_cast<char*>(out->get()) + rows * k0, k_g,
                       static_cast<const char*>(side_by_side.data) + k0, sum_k, k_g, rows, cudaMemcpyDeviceToDevice),
          "cudaMemcpy2D into group blocks");
    k0 += k_g;
  }
  return out;
}

TEST_P(Fp8KGrouped, MatchesReferencesPerGroup) {
  GPU_TEST_REQUIRE_SM90();
  const auto& [m, n, ks, c_mode, blocks] = GetParam();
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  const auto groups = static_cast<std::int64_t>(ks.size());
  std::int64_t sum_k = 0;
  std::vector<std::int64_t> k0(ks.size());
  for (std::size_t g = 0; g < ks.size(); ++g) k0[g] = sum_k, sum_k += ks[g];
  // Per-token scales along the concatenated K: each group's 128-blocks are its own.
  const QuantisedOperand a = make_quantised(0, m, sum_k, false, seed * 8 + 0);
  const QuantisedOperand b = make_quantised(0, n, sum_k, false, seed * 8 + 1);
  GuardedTensor d(DType::kFloat32, groups, m, n);
  std::unique_ptr<GuardedTensor> c;
  if (c_mode != CMode::kNone) {
    c = std::make_unique<GuardedTensor>(DType::kFloat32, groups, m, n);
    c->fill_random(seed * 8 + 2);
    if (c_mode == CMode::kInPlace) d.fill_random(seed * 8 + 2);
  }
  const TensorView d_view = d.device_view();
  const TensorView c_view = c ? c->device_view() : TensorView{};
  const TensorView* c_arg = c_mode == CMode::kSeparate ? &c_view : c_mode == CMode::kInPlace ? &d_view : nullptr;
  DeviceInts ks_tensor(std::vector<std::int32_t>(ks.begin(), ks.end()));
  std::unique_ptr<DeviceBuffer> a_blocks, b_blocks;
  TensorView a_view = a.data_view, b_view = b.data_view;
  if (blocks) {
    a_blocks = to_group_blocks(a.data_view, ks), b_blocks = to_group_blocks(b.data_view, ks);
    for (auto [view, buffer, rows] : {std::tuple{&a_view, a_blocks.get(), m}, std::tuple{&b_view, b_blocks.get(), n}}) {
      view->data = buffer->get(), view->ndim = 1;
      view->shape = {rows * sum_k, 0, 0, 0}, view->strides = {1, 0, 0, 0};
    }
  }
  tilegemm::k_grouped_fp8_gemm_contiguous(a_view, a.sf_view, b_view, b.sf_view, d_view, ks, ks_tensor.view(), c_arg);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GEMM");
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << cov.describe();
  Fp8Comparison cmp;
  for (std::int64_t g = 0; g < groups; ++g) {
    if (ks[g] == 0) {
      // Nothing to add: D[g] is C[g] (or zeros).
      for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t j = 0; j < n; ++j) {
          const double want = c ? c->get(g, r, j) : 0.0;
          cmp.got.push_back(d.get(g, r, j));
          cmp.want_dequantised.push_back(want);
          cmp.want_original.push_back(want);
        }
      continue;
    }
    compare_rows(a, 0, 0, m, b, 0, d, g, 0, c.get(), k0[g], ks[g], seed + g, cmp);
  }
  expect_fp8_accuracy(cmp);
  std::string k_list;
  for (int kg : ks) k_list += fmt::format("{}{}", k_list.empty() ? "" : ",", kg);
  report("k_grouped_fp8_gemm_contiguous", fmt::format("{}x{} ks [{}]", m, n, k_list), "nt",
         fmt::format("1d1d c={}{}", c_mode_name(c_mode), blocks ? " group blocks" : ""), diff_text(cmp), !HasFailure());
}

// 40 groups, some empty: two launches of per-group maps (32 + 8 groups).
std::vector<int> forty_groups() {
  std::vector<int> ks(40);
  for (int g = 0; g < 40; ++g) ks[g] = g % 7 == 3 ? 0 : 128 * (1 + g % 3);
  return ks;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp8KGrouped,
    ::testing::Values(
        std::tuple{std::int64_t{256}, std::int64_t{576}, std::vector<int>{128, 0, 384, 1024}, CMode::kInPlace, false},
        std::tuple{std::int64_t{129}, std::int64_t{2112}, std::vector<int>{512, 256}, CMode::kNone, false},
        std::tuple{std::int64_t{4096}, std::int64_t{7168}, std::vector<int>{2048, 1024}, CMode::kSeparate, false},
        std::tuple{std::int64_t{256}, std::int64_t{576}, std::vector<int>{128, 0, 384, 1024}, CMode::kInPlace, true},
        std::tuple{std::int64_t{129}, std::int64_t{2112}, std::vector<int>{512, 256}, CMode::kNone, true},
        std::tuple{std::int64_t{4096}, std::int64_t{7168}, std::vector<int>{2048, 1024}, CMode::kSeparate, true},
        std::tuple{std::int64_t{136}, std::int64_t{264}, forty_groups(), CMode::kSeparate, true}));

}  // namespace
}  // namespace gpu_test
