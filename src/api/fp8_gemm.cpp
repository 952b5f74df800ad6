// FP8 block-scaled GEMMs. PLACEHOLDER while the kernel is being written in this session: every entry point
// throws, so nothing pretends to work.
#include "tilegemm/fp8_gemm.hpp"

#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {
[[noreturn]] void not_yet(const char* what) {
  throw RuntimeError(std::string(what) + ": the SM90 FP8 kernel is not implemented yet");
}
}  // namespace

void fp8_gemm_1d2d(const TensorView&, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                   const GemmOptions&) { not_yet("fp8_gemm_1d2d"); }
void fp8_gemm_1d1d(const TensorView&, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                   const TensorView*, const GemmOptions&) { not_yet("fp8_gemm_1d1d"); }
void m_grouped_fp8_gemm_contiguous(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                                   const TensorView&, const TensorView&, bool, const GemmOptions&) {
  not_yet("m_grouped_fp8_gemm_contiguous");
}
void m_grouped_fp8_gemm_masked(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                               const TensorView&, const TensorView&, int, const GemmOptions&) {
  not_yet("m_grouped_fp8_gemm_masked");
}
void k_grouped_fp8_gemm_contiguous(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                                   const TensorView&, const std::vector<int>&, const TensorView&, const TensorView*,
                                   const GemmOptions&) {
  not_yet("k_grouped_fp8_gemm_contiguous");
}

}  // namespace tilegemm
