// Interim: the SM90 BF16 kernel family is being written; these entry points fail loudly until it lands.
#include "tilegemm/gemm.hpp"

#include "tilegemm/errors.hpp"

namespace tilegemm {

void bf16_gemm(const TensorView&, const TensorView&, const TensorView&, const TensorView*, const GemmOptions&) {
  throw RuntimeError("bf16_gemm: the SM90 BF16 kernel is not available in this build yet");
}
void m_grouped_bf16_gemm_contiguous(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                                    bool, const GemmOptions&) {
  throw RuntimeError("m_grouped_bf16_gemm_contiguous: the SM90 BF16 kernel is not available in this build yet");
}
void m_grouped_bf16_gemm_masked(const TensorView&, const TensorView&, const TensorView&, const TensorView&, int,
                                const GemmOptions&) {
  throw RuntimeError("m_grouped_bf16_gemm_masked: the SM90 BF16 kernel is not available in this build yet");
}

}  // namespace tilegemm
