// bf16_gemm on every layout × D dtype × C mode: DeepSeek shapes, ragged shapes, batches.
#include "../cpp/scoped_env.hpp"
#include "case_lists.hpp"
#include "tilegemm/gemm.hpp"

namespace gpu_test {
namespace {

void run_bf16_gemm(const DenseCase& c) {
  run_dense_case(
      "bf16_gemm", c,
      [](const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* cv) {
        tilegemm::bf16_gemm(a, b, d, cv);
      },
      /*storage_operands=*/false, tma_legal(c));
}

class Bf16Gemm : public ::testing::TestWithParam<DenseCase> {};

TEST_P(Bf16Gemm, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  run_bf16_gemm(GetParam());
}

// 128-wide stages (two 64-wide K atoms, block_k=128) forced: every layout, fp32 D with C, K shorter than one
// stage or not a multiple of it (the TMA zero-fills the rest of the last stage), tiles narrow and wide, a batch.
class Bf16GemmTwoAtomStages : public ::testing::TestWithParam<DenseCase> {};

TEST_P(Bf16GemmTwoAtomStages, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_k=128");
  run_bf16_gemm(GetParam());
}

const auto kMultiAtomCases =
    ::testing::Values(DenseCase{0, 64, 2112, 7168, Layout::kNT}, DenseCase{0, 128, 2112, 7168, Layout::kNN},
                      DenseCase{0, 136, 576, 1000, Layout::kTN, DType::kFloat32, CMode::kSeparate},
                      DenseCase{0, 4088, 4096, 7168, Layout::kTT}, DenseCase{0, 1, 8, 64, Layout::kNT},
                      DenseCase{0, 129, 24, 136, Layout::kNT, DType::kFloat32, CMode::kInPlace},
                      DenseCase{0, 65, 7168, 200, Layout::kNN, DType::kBFloat16, CMode::kNone, 8},
                      DenseCase{3, 64, 128, 64, Layout::kTN, DType::kBFloat16, CMode::kSeparate});
INSTANTIATE_TEST_SUITE_P(Shapes, Bf16GemmTwoAtomStages, kMultiAtomCases, CaseNamer());

// 256-wide stages (four K atoms, block_k=256) forced, on the same cases.
class Bf16GemmFourAtomStages : public ::testing::TestWithParam<DenseCase> {};

TEST_P(Bf16GemmFourAtomStages, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", "block_k=256");
  run_bf16_gemm(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16GemmFourAtomStages, kMultiAtomCases, CaseNamer());

// A dense case on a forced config.
struct ForcedCase {
  DenseCase dense;
  const char* filter;  // TILEGEMM_CONFIG_FILTER
};

void PrintTo(const ForcedCase& c, std::ostream* os) {
  *os << case_name(c.dense) << " " << c.filter;
}

std::string forced_case_name(const ::testing::TestParamInfo<ForcedCase>& info) {
  std::string filter = info.param.filter;
  for (char& ch : filter)
    if (ch == '=' || ch == ',') ch = '_';
  return case_name(info.param.dense) + "_" + filter;
}

class Bf16GemmForced : public ::testing::TestWithParam<ForcedCase> {};

TEST_P(Bf16GemmForced, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  test_util::ScopedEnv force("TILEGEMM_CONFIG_FILTER", GetParam().filter);
  run_bf16_gemm(GetParam().dense);
}

// Tiles whose width is an odd multiple of 8, forced (the selector takes 64x56 for N = 7168 at small M): bf16 D leaves
// in 16-byte unswizzled chunks with a final stmatrix x2, fp32 D in 32-byte chunks. The real shapes, ragged M and N
// (a partial last tile of 48 of 56 columns, D rows padded by 8 elements that must stay untouched), MN-major A, fp32 D
// with C in place, a batch, 128-wide stages, two warpgroups.

INSTANTIATE_TEST_SUITE_P(
    OddEighthTiles, Bf16GemmForced,
    ::testing::Values(
        ForcedCase{DenseCase{0, 64, 7168, 16384, Layout::kNT}, "block_m=64,block_n=56"},
        ForcedCase{DenseCase{0, 64, 7168, 2048, Layout::kNT}, "block_n=56,block_k=128"},
        ForcedCase{DenseCase{0, 129, 1000, 1000, Layout::kTN, DType::kBFloat16, CMode::kNone, 8}, "block_n=56"},
        ForcedCase{DenseCase{0, 65, 600, 200, Layout::kNT, DType::kFloat32, CMode::kInPlace}, "block_n=40"},
        ForcedCase{DenseCase{3, 64, 200, 64, Layout::kNT, DType::kBFloat16, CMode::kSeparate}, "block_n=24"},
        ForcedCase{DenseCase{0, 256, 1000, 512, Layout::kNT}, "block_m=128,block_n=120,math_wg=2"}),
    forced_case_name);

// Tails, forced: M not a multiple of the tile, so the last m-block loads A through the tail map (a box of just its
// rows) and the warpgroup holding D's last row stores through D's: one row past a 64-row tile, 128-row tiles on two
// warpgroups (the tail ends in the second warpgroup's rows; or in the first, the second's rows all past M), 128-wide
// stages with a batch, MN-major A (no A tail map, D's only).
INSTANTIATE_TEST_SUITE_P(
    Tails, Bf16GemmForced,
    ::testing::Values(ForcedCase{DenseCase{0, 65, 2112, 7168, Layout::kNT}, "block_m=64"},
                      ForcedCase{DenseCase{0, 200, 1000, 1000, Layout::kNT, DType::kFloat32, CMode::kInPlace},
                                 "block_m=128,math_wg=2"},
                      ForcedCase{DenseCase{0, 129, 7168, 2048, Layout::kNN}, "block_m=128,math_wg=2"},
                      ForcedCase{DenseCase{2, 100, 576, 512, Layout::kNT, DType::kBFloat16, CMode::kSeparate},
                                 "block_m=64,block_k=128"},
                      ForcedCase{DenseCase{0, 72, 2112, 1000, Layout::kTN}, "block_m=64"}),
    forced_case_name);

// Swap AB, forced (sm90_swap_ab_epilogue.cuh): ragged M run as Dᵀ = B·Aᵀ, the tokens on the wgmma's N side and D
// written through stmatrix .trans in 64-column boxes that TMA clips at D's last row; the last token tile comes through
// the tokens' tail map, its stage's other rows stale (they reach only columns past M). The ragged shapes of the BF16
// suite (the selector's own swapped tiles), a width that is an odd multiple of 8 (the x2 store) with MN-major B, 128
// rows per warpgroup (two chunks) with D's rows padded, one token, MN-major A (the kernel's B: no tail map), a 2-CTA
// cluster (the tokens' tile multicast: no tail map).
const auto kSwapAbCases =
    ::testing::Values(ForcedCase{DenseCase{0, 257, 24576, 1536, Layout::kNT}, "swap_ab=1"},
                      ForcedCase{DenseCase{0, 129, 4096, 7168, Layout::kNT}, "swap_ab=1"},
                      ForcedCase{DenseCase{0, 65, 2112, 7168, Layout::kNN}, "swap_ab=1,block_n=72"},
                      ForcedCase{DenseCase{0, 200, 1000, 1000, Layout::kNT, DType::kBFloat16, CMode::kNone, 8},
                                 "swap_ab=1,block_m=256,block_n=104"},
                      ForcedCase{DenseCase{0, 1, 8, 64, Layout::kNT}, "swap_ab=1"},
                      ForcedCase{DenseCase{0, 72, 2112, 1000, Layout::kTN}, "swap_ab=1"},
                      ForcedCase{DenseCase{0, 129, 7168, 2048, Layout::kNT}, "swap_ab=1,cluster_m=2"});
INSTANTIATE_TEST_SUITE_P(SwapAB, Bf16GemmForced, kSwapAbCases, forced_case_name);

// Decode, forced: M under one 64-row tile, so the only m-block is the tail: K-major A is loaded through the tail map
// (boxes of just M rows) and the tile's other rows of shared memory stay stale. 128-row tiles on two warpgroups (the
// second owns no row), stages of two and four K atoms, the 16-wide tile, fp32 D with C in place, MN-major B, a batch,
// MN-major A (no A tail map).
// (Split-K and stream-K at M = 1: test_split_k.cpp.)
INSTANTIATE_TEST_SUITE_P(
    Decode, Bf16GemmForced,
    ::testing::Values(
        ForcedCase{DenseCase{0, 40, 1000, 1000, Layout::kNT}, "block_m=128,math_wg=2"},
        ForcedCase{DenseCase{0, 5, 576, 1000, Layout::kNT, DType::kFloat32, CMode::kInPlace}, "block_k=256"},
        ForcedCase{DenseCase{0, 24, 2112, 7168, Layout::kNT}, "block_m=64,block_n=16,block_k=128"},
        ForcedCase{DenseCase{0, 8, 7168, 2048, Layout::kNN}, "block_k=128"},
        ForcedCase{DenseCase{3, 17, 200, 512, Layout::kNT, DType::kBFloat16, CMode::kSeparate}, "block_m=64"},
        ForcedCase{DenseCase{0, 16, 2112, 1000, Layout::kTN}, "block_m=64"}),
    forced_case_name);

INSTANTIATE_TEST_SUITE_P(DeepSeek, Bf16Gemm, ::testing::ValuesIn(deepseek_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Decode, Bf16Gemm, ::testing::ValuesIn(decode_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Ragged, Bf16Gemm, ::testing::ValuesIn(ragged_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Batched, Bf16Gemm, ::testing::ValuesIn(batched_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Representative, Bf16Gemm, ::testing::ValuesIn(representative_cases()), CaseNamer());

}  // namespace
}  // namespace gpu_test
