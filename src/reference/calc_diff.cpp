// DeepGEMM's calc_diff (deep_gemm/testing): 1 − cosine-like similarity, in double.
#include <cstddef>

#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm {

double calc_diff(std::span<const double> x, std::span<const double> y) {
  TILEGEMM_REQUIRE(x.size() == y.size(), "y", fmt::format("{} elements (as many as x)", x.size()),
                   fmt::format("{}", y.size()));
  double sum_xy = 0, sum_squares = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sum_xy += x[i] * y[i];
    sum_squares += x[i] * x[i] + y[i] * y[i];
  }
  // Two all-zero tensors are identical; without this the ratio would be 0/0.
  if (sum_squares == 0) return 0.0;
  return 1.0 - 2.0 * sum_xy / sum_squares;
}

}  // namespace tilegemm
