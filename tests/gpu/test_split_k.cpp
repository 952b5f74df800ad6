// Split-K and stream-K on the GPU. The scheme is forced with TILEGEMM_GEMM_SCHEME (the selector then only
// offers that scheme) and the reduction mode with tilegemm::set_deterministic:
//   SplitK* / StreamK* .Ragged*: M ∈ {1, 64, 129}, N ∈ {8, 576, 7168}, K ∈ {64, 1000, 7168, 16384} (a covering
//     subset by default, the cross product with TILEGEMM_GPU_TEST_LEVEL=full), both modes, against the float64
//     reference with poisoned guard bands around D (run_dense_case);
//   SplitKDeterminism / StreamKDeterminism: ten calls into the same D give the same bytes.
// Every case prints the config the selector chose ("[split-K choice] ...").
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "../cpp/scoped_env.hpp"
#include "dense_case.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"

namespace gpu_test {
namespace {

// Forces a scheme and a reduction mode for one scope.
class ForcedScheme {
 public:
  ForcedScheme(const std::string& scheme, bool deterministic) {
    ::setenv("TILEGEMM_GEMM_SCHEME", scheme.c_str(), 1);
    tilegemm::reload_env();
    tilegemm::set_deterministic(deterministic);
  }
  ~ForcedScheme() {
    ::unsetenv("TILEGEMM_GEMM_SCHEME");
    tilegemm::reload_env();
    tilegemm::set_deterministic(false);
  }
};

struct SplitCase {
  DenseCase dense;
  std::string scheme;  // TILEGEMM_GEMM_SCHEME value
  bool deterministic = false;
};

std::string split_case_name(const SplitCase& c) {
  std::string s = c.scheme;
  for (char& ch : s)
    if (ch == '-' || ch == ':') ch = '_';
  return case_name(c.dense) + "_" + s + (c.deterministic ? "_det" : "_atomic");
}
void PrintTo(const SplitCase& c, std::ostream* os) {
  *os << split_case_name(c);
}

// The desc bf16_gemm builds for a case (for printing the selector's choice).
tilegemm::GemmDesc desc_of(const DenseCase& c, bool deterministic) {
  tilegemm::GemmDesc d;
  d.type = c.batch ? tilegemm::GemmType::kBatched : tilegemm::GemmType::kNormal;
  d.m = static_cast<int>(c.m), d.n = static_cast<int>(c.n), d.k = static_cast<int>(c.k);
  d.num_groups = c.batch ? static_cast<int>(c.batch) : 1;
  d.d_dtype = c.d_dtype;
  d.major_a = a_mn_major(c.layout) ? tilegemm::Major::kMNMajor : tilegemm::Major::kKMajor;
  d.major_b = b_mn_major(c.layout) ? tilegemm::Major::kMNMajor : tilegemm::Major::kKMajor;
  d.with_c = c.c_mode != CMode::kNone;
  d.deterministic = deterministic;
  return d;
}

// Whether the forced scheme can cut this K at all (split-K needs a K block per slice).
bool splittable(const SplitCase& c) {
  const std::int64_t k_blocks = (c.dense.k + 63) / 64;
  if (c.scheme == "split-k") return k_blocks >= 2;
  if (c.scheme.rfind("split-k:", 0) == 0) return k_blocks >= std::atoi(c.scheme.c_str() + 8);
  return true;
}

void print_choice(const SplitCase& c) {
  const tilegemm::GemmDesc desc = desc_of(c.dense, c.deterministic);
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  try {
    const auto ranked = tilegemm::rank_candidates(desc, tilegemm::hardware_from_device(device));
    const auto& best = ranked.front();
    std::printf("[split-K choice] %s -> %s split_k=%d %s | %s\n", split_case_name(c).c_str(),
                tilegemm::scheme_name(best.config.scheme), best.config.split_k,
                tilegemm::to_string(best.config).c_str(), best.scheme_reason.c_str());
  } catch (const tilegemm::InvalidArgument& e) {
    std::printf("[split-K choice] %s -> none: %s\n", split_case_name(c).c_str(), e.what());
  }
}

void run_split_case(const SplitCase& c) {
  ForcedScheme forced(c.scheme, c.deterministic);
  print_choice(c);
  // A K too short to split under a forced split-K count is rejected before D is touched.
  run_dense_case(
      "bf16_gemm " + c.scheme + (c.deterministic ? " det" : " atomic"), c.dense,
      [](const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* cv) {
        tilegemm::bf16_gemm(a, b, d, cv);
      },
      /*storage_operands=*/false, tma_legal(c.dense) && splittable(c));
}

DenseCase dense(std::int64_t m, std::int64_t n, std::int64_t k, Layout layout = Layout::kNT, DType d = DType::kBFloat16,
                CMode c = CMode::kNone) {
  DenseCase x;
  x.m = m, x.n = n, x.k = k, x.layout = layout, x.d_dtype = d, x.c_mode = c;
  return x;
}

// Quick: every M, N and K value with every scheme and mode, plus fp32 D with C, MN-major operands and a
// batch. Full: the whole M × N × K cross product.
std::vector<DenseCase> ragged_shapes() {
  std::vector<DenseCase> out;
  if (full_level()) {
    for (std::int64_t m : {1, 64, 129})
      for (std::int64_t n : {8, 576, 7168})
        for (std::int64_t k : {64, 1000, 7168, 16384}) out.push_back(dense(m, n, k));
  } else {
    for (auto [m, n, k] :
         {std::tuple{1, 8, 64}, std::tuple{1, 576, 1000}, std::tuple{1, 7168, 16384}, std::tuple{1, 576, 7168},
          std::tuple{64, 7168, 7168}, std::tuple{64, 8, 16384}, std::tuple{64, 576, 64}, std::tuple{64, 7168, 1000},
          std::tuple{129, 576, 16384}, std::tuple{129, 7168, 64}, std::tuple{129, 8, 1000}, std::tuple{129, 576, 7168}})
      out.push_back(dense(m, n, k));
  }
  out.push_back(dense(129, 576, 1000, Layout::kTN, DType::kFloat32, CMode::kInPlace));
  out.push_back(dense(64, 7168, 7168, Layout::kNN, DType::kBFloat16, CMode::kSeparate));
  DenseCase batched = dense(64, 576, 1000);
  batched.batch = 3;
  out.push_back(batched);
  return out;
}

std::vector<SplitCase> cases_for(std::initializer_list<const char*> schemes) {
  std::vector<SplitCase> out;
  for (const DenseCase& d : ragged_shapes())
    for (const char* scheme : schemes)
      for (bool det : {false, true}) out.push_back({d, scheme, det});
  return out;
}

struct SplitNamer {
  std::string operator()(const ::testing::TestParamInfo<SplitCase>& info) const { return split_case_name(info.param); }
};

class SplitK : public ::testing::TestWithParam<SplitCase> {};
class StreamK : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitK, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  run_split_case(GetParam());
}
TEST_P(StreamK, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  run_split_case(GetParam());
}

// "split-k": the selector's count; "split-k:3": a count that divides none of the K block counts evenly.
INSTANTIATE_TEST_SUITE_P(Ragged, SplitK, ::testing::ValuesIn(cases_for({"split-k", "split-k:3"})), SplitNamer());
INSTANTIATE_TEST_SUITE_P(Ragged, StreamK, ::testing::ValuesIn(cases_for({"stream-k"})), SplitNamer());

// Stream-K over two or more full waves of tiles: all full waves but the last walked whole, the rest shared out
// (stream_k_whole_tiles). Ragged M and N, K not a multiple of the stage, fp32 D with C in place, MN-major B, a
// batch whose tiles cross batches in the shared part; both reduction modes.
std::vector<SplitCase> whole_wave_cases() {
  std::vector<SplitCase> out;
  DenseCase batched = dense(1000, 4096, 512);
  batched.batch = 4;
  for (const DenseCase& d : {dense(4096, 4096, 1000), dense(3000, 5000, 640),
                             dense(2500, 4096, 640, Layout::kTN, DType::kFloat32, CMode::kInPlace),
                             dense(4096, 2112, 1024, Layout::kNN), batched})
    for (bool det : {false, true}) out.push_back({d, "stream-k", det});
  return out;
}
INSTANTIATE_TEST_SUITE_P(WholeWaves, StreamK, ::testing::ValuesIn(whole_wave_cases()), SplitNamer());

// 128-wide stages (block_k=128) forced: slices of 128-wide K blocks, the last one zero-filled past K.
class SplitKTwoAtomStages : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitKTwoAtomStages, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_k=128");
  run_split_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitKTwoAtomStages,
                         ::testing::Values(SplitCase{dense(64, 2112, 7168), "split-k:4", false},
                                           SplitCase{dense(129, 576, 1000), "split-k:3", true},
                                           SplitCase{dense(1, 7168, 16384, Layout::kNN), "split-k", false},
                                           SplitCase{dense(64, 576, 7168), "stream-k", true},
                                           SplitCase{dense(129, 8, 1000, Layout::kTN, DType::kFloat32, CMode::kInPlace),
                                                     "stream-k", false}),
                         SplitNamer());

// 56-wide tiles (an odd multiple of 8), forced: split-K and stream-K fix-ups over 7 float4 chunks per sub-block,
// ragged N (a last tile of 48 columns), fp32 D with C in place; both reduction modes.
class SplitOddEighthTiles : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitOddEighthTiles, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_m=64,block_n=56");
  run_split_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitOddEighthTiles,
                         ::testing::Values(SplitCase{dense(64, 7168, 7168), "split-k:4", false},
                                           SplitCase{dense(129, 1000, 1000), "split-k:3", true},
                                           SplitCase{dense(64, 7168, 2048), "stream-k", true},
                                           SplitCase{
                                               dense(129, 1000, 1000, Layout::kTN, DType::kFloat32, CMode::kInPlace),
                                               "stream-k", false}),
                         SplitNamer());

// Ten calls into the same D (no C): the bytes must not change in deterministic mode. The atomic mode is run
// the same way and only reports whether it happened to be identical.
void check_bit_identical(const std::string& scheme, const DenseCase& cs, bool deterministic) {
  ForcedScheme forced(scheme, deterministic);
  const SplitCase sc{cs, scheme, deterministic};
  print_choice(sc);
  const std::uint64_t seed = next_seed();
  GuardedTensor a(DType::kBFloat16, 0, cs.m, cs.k), b(DType::kBFloat16, 0, cs.n, cs.k), d(cs.d_dtype, 0, cs.m, cs.n);
  a.fill_random(seed * 4), b.fill_random(seed * 4 + 1);
  std::vector<std::uint8_t> first;
  int identical = 0;
  for (int run = 0; run < 10; ++run) {
    tilegemm::bf16_gemm(a.device_view(), b.device_view(), d.device_view(), nullptr);
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    d.download();
    if (run == 0) {
      first = d.snapshot();
      const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
      EXPECT_TRUE(cov.ok()) << cov.describe();
    } else {
      identical += d.unchanged_since(first);
    }
  }
  if (deterministic) EXPECT_EQ(identical, 9) << "deterministic mode changed D between runs";
  report("bf16_gemm " + scheme + (deterministic ? " det" : " atomic"), fmt::format("{}x{}x{}", cs.m, cs.n, cs.k), "nt",
         dtype_label(cs.d_dtype), fmt::format("{} of 9 reruns bit-identical to the first", identical),
         !::testing::Test::HasFailure());
}

TEST(SplitKDeterminism, TenRunsBitIdentical) {
  GPU_TEST_REQUIRE_SM90();
  for (bool det : {true, false}) {
    check_bit_identical("split-k", dense(64, 7168, 7168), det);
    check_bit_identical("split-k:7", dense(1, 576, 7168, Layout::kNT, DType::kFloat32), det);
  }
}

TEST(StreamKDeterminism, TenRunsBitIdentical) {
  GPU_TEST_REQUIRE_SM90();
  for (bool det : {true, false}) {
    check_bit_identical("stream-k", dense(129, 576, 16384), det);
    check_bit_identical("stream-k", dense(64, 7168, 1000), det);
    check_bit_identical("stream-k", dense(4096, 4096, 1000), det);  // whole-tile waves, then the shared tail
  }
}

}  // namespace
}  // namespace gpu_test
