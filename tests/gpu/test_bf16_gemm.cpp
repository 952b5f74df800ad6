// bf16_gemm on every layout × D dtype × C mode: DeepSeek shapes, ragged shapes, batches.
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

INSTANTIATE_TEST_SUITE_P(DeepSeek, Bf16Gemm, ::testing::ValuesIn(deepseek_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Ragged, Bf16Gemm, ::testing::ValuesIn(ragged_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Batched, Bf16Gemm, ::testing::ValuesIn(batched_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Representative, Bf16Gemm, ::testing::ValuesIn(representative_cases()), CaseNamer());

}  // namespace
}  // namespace gpu_test
