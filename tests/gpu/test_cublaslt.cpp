// The cuBLASLt baseline through DeepGEMM's named layouts (operands in their storage shapes) against the
// float64 reference: all four layouts, bf16/fp32 D, no C / separate C / in-place C, ragged and batched.
#include "case_lists.hpp"

namespace gpu_test {
namespace {

DenseFn named_wrapper(Layout layout) {
  return [layout](const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c) {
    switch (layout) {
      case Layout::kNT:
        return tilegemm::cublaslt_gemm_nt(a, b, d, c);
      case Layout::kNN:
        return tilegemm::cublaslt_gemm_nn(a, b, d, c);
      case Layout::kTN:
        return tilegemm::cublaslt_gemm_tn(a, b, d, c);
      case Layout::kTT:
        return tilegemm::cublaslt_gemm_tt(a, b, d, c);
    }
  };
}

std::vector<DenseCase> cublaslt_cases() {
  std::vector<DenseCase> cases;
  const std::int64_t shapes[][3] = {{1, 8, 64}, {65, 24, 136}, {129, 576, 1000}, {256, 2112, 7168}};
  for (int si = 0; si < 4; ++si) {
    const DenseCase base{0, shapes[si][0], shapes[si][1], shapes[si][2]};
    // quick: every combination on one ragged shape, one combination per layout on the others.
    const bool every = full_level() || shapes[si][0] == 65;
    for (int combo = 0; combo < (every ? 24 : 4); ++combo) {
      DenseCase c = with_combo(base, every ? combo : combo + 4 * ((combo + si) % 6));
      c.d_pad = combo % 7 == 3 ? 8 : 0;
      cases.push_back(c);
    }
  }
  for (int l = 0; l < 4; ++l) cases.push_back(with_combo({3, 65, 24, 136}, l + 4 * l));
  return cases;
}

class CublasLt : public ::testing::TestWithParam<DenseCase> {};

TEST_P(CublasLt, MatchesReference) {
  GPU_TEST_REQUIRE_GPU();
  const DenseCase& c = GetParam();
  run_dense_case(std::string("cublaslt_gemm_") + layout_name(c.layout), c, named_wrapper(c.layout),
                 /*storage_operands=*/true, /*expect_accepted=*/true);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CublasLt, ::testing::ValuesIn(cublaslt_cases()), CaseNamer());
INSTANTIATE_TEST_SUITE_P(Representative, CublasLt,
                         ::testing::Values(DenseCase{0, 65, 24, 136, Layout::kTN, DType::kBFloat16, CMode::kSeparate}),
                         CaseNamer());

}  // namespace
}  // namespace gpu_test
