#pragma once
// int8 x int8 GEMM with per-token and per-channel scales (the W8A8 recipe of SmoothQuant-style checkpoints):
//   D[m, n] = scale_a[m] · scale_b[n] · Σ_k A[m, k] · B[n, k]
// A int8 [M, K] and B int8 [N, K], both K-major (contiguous along K); scale_a fp32 [M] and scale_b fp32 [N],
// contiguous; D bf16 [M, N] with contiguous rows. The products accumulate exactly in int32 (K up to
// kInt8GemmMaxK), scaled once per output element. Runs on torch's / the caller's stream; bad arguments throw
// InvalidArgument naming the argument.
#include "tilegemm/gemm.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// The largest K whose int32 sums cannot overflow: (-128)² · K must stay below 2^31.
constexpr long long kInt8GemmMaxK = ((1LL << 31) - 1) / (128 * 128);

void int8_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
                  const TensorView& d, const GemmOptions& options = {});

}  // namespace tilegemm
