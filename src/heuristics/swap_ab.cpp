// The problem a swap-AB BF16 GEMM runs (heuristics.hpp).
#include <utility>

#include "tilegemm/heuristics.hpp"

namespace tilegemm {

bool sm90_swap_ab_runs(const GemmDesc& desc) {
  // The swapped epilogue stores bf16 with stmatrix .trans and one TMA box per tile; fp32 D, int8/FP8, C given and the
  // grouped and batched layouts keep the plain kernel.
  return desc.type == GemmType::kNormal && desc.a_dtype == DType::kBFloat16 && desc.d_dtype == DType::kBFloat16 &&
         !desc.with_c && !desc.d_transposed;
}

GemmDesc swapped_problem(const GemmDesc& desc) {
  GemmDesc s = desc;
  std::swap(s.m, s.n);
  std::swap(s.major_a, s.major_b);
  std::swap(s.a_dtype, s.b_dtype);
  s.d_transposed = true;
  return s;
}

GemmDesc kernel_problem(const GemmDesc& desc, const GemmConfig& config) {
  return config.swap_ab && !desc.d_transposed ? swapped_problem(desc) : desc;
}

}  // namespace tilegemm
