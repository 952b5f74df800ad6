// Dense tensor-core peaks by operand type.
#include <cmath>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

double HardwareModel::peak_flops(DType t) const {
  double per_cycle = 0;
  switch (t) {
    case DType::kBFloat16:
    case DType::kFloat16:
      per_cycle = flop_per_cycle_bf16;
      break;
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
      per_cycle = flop_per_cycle_fp8;
      break;
    case DType::kInt8:
      per_cycle = flop_per_cycle_int8;
      break;
    case DType::kTFloat32:
      per_cycle = flop_per_cycle_tf32;
      break;
    case DType::kFloat4E2M1:
      per_cycle = flop_per_cycle_fp4;
      break;
    case DType::kInt4:
      per_cycle = flop_per_cycle_int4;
      break;
    case DType::kFloat32:
      per_cycle = flop_per_cycle_fp32_cuda_core;
      break;
    case DType::kInt32:
    case DType::kInt64:
      per_cycle = 0;
      break;  // an accumulator type, never a GEMM operand
  }
  if (!(per_cycle > 0) || !(sm_clock_mhz > 0) || num_sms <= 0)
    throw InvalidArgument(
        "math dtype",
        fmt::format("a type with a known peak on '{}' (num_sms={}, sm_clock_mhz={})", name, num_sms, sm_clock_mhz),
        fmt::format("'{}' (no FLOP/cycle for it)", dtype_name(t)));
  return per_cycle * num_sms * sm_clock_mhz * 1e6;
}

}  // namespace tilegemm
