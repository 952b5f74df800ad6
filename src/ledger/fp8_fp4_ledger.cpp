// The FP8 x FP4 (and MXFP8) GEMM's ledger terms (fp8_fp4_gemm.hpp): bytes and the K loop's lane instructions.
#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/fp8_fp4_params.hpp"

namespace tilegemm {
namespace {

// SASS of the 8-token FP4 kernel (docs/kernels.md): 356 instructions per warp between the first and last HMMA of a
// 256-k stage, about 45 per 32-k step of 16 rows; each further 8 tokens adds about 11 (load, conversion, two HMMAs,
// four FFMAs). MXFP8 is counted alike: its B loads and conversions stand in for the decode (not counted apart).
constexpr double kStepFixedInstr = 34, kStepInstrPerNTile = 11;
constexpr double kWeightsPerWarpStep = fp8_fp4::kRowBlock * fp8_fp4::kScaleGroupK;

}  // namespace

double fp8_fp4_ops_per_weight(int block_m) {
  TILEGEMM_REQUIRE(block_m >= 8 && block_m <= fp8_fp4::kMaxBlockM && block_m % 8 == 0, "block_m",
                   fmt::format("8 to {} tokens in whole n-tiles of 8", fp8_fp4::kMaxBlockM),
                   fmt::format("{}", block_m));
  return (kStepFixedInstr + kStepInstrPerNTile * (block_m / 8)) * 32 / kWeightsPerWarpStep;
}

Fp8Fp4Ledger fp8_fp4_ledger(int m, int n, int k, int block_m, DType d_dtype, bool mx, const HardwareModel& hw,
                            int experts) {
  TILEGEMM_REQUIRE(experts >= 1, "experts", "an expert count >= 1", fmt::format("{}", experts));
  TILEGEMM_REQUIRE(m > 0 && n > 0 && k > 0 && k % fp8_fp4::kScaleBlockK == 0, "k",
                   "positive sizes with K a multiple of 128", fmt::format("m {}, n {}, k {}", m, n, k));
  TILEGEMM_REQUIRE(d_dtype == DType::kBFloat16 || d_dtype == DType::kFloat32, "d_dtype", "bf16 or fp32",
                   std::string(dtype_name(d_dtype)));
  TILEGEMM_REQUIRE(hw.num_sms > 0 && hw.hbm_gbps > 0 && hw.sm_clock_mhz > 0, "hw",
                   "a hardware model with SMs, a clock and DRAM bandwidth",
                   fmt::format("{} ({} SMs, {} GB/s)", hw.name, hw.num_sms, hw.hbm_gbps));
  Fp8Fp4Ledger l;
  const double dm = m, dn = n, dk = k;
  const double a_scales = dm * dk / (mx ? fp8_fp4::kScaleGroupK : fp8_fp4::kScaleBlockK) * 4;
  const double b_bytes = mx ? dn * dk : dn * dk / 2;
  const double e = experts;
  l.bytes =
      e * (dm * dk + a_scales + b_bytes + dn * dk / fp8_fp4::kScaleGroupK * 4 + dm * dn * dtype_bits(d_dtype) / 8);
  l.flops = 2 * e * dm * dn * dk;
  const double passes = e * ((m + block_m - 1) / block_m);
  // The kernel decodes whole blocks of 64 rows of B.
  const double n_pad = (n + fp8_fp4::kBlockN - 1) / fp8_fp4::kBlockN * static_cast<double>(fp8_fp4::kBlockN);
  l.issue_ops = fp8_fp4_ops_per_weight(block_m) * n_pad * dk * passes;
  l.memory_floor_us = l.bytes / hw.hbm_bytes_per_s() * 1e6;
  l.issue_floor_us = l.issue_ops / (kLaneOpsPerSmCycle * hw.num_sms * hw.sm_clock_mhz * 1e6) * 1e6;
  l.bound = l.memory_floor_us >= l.issue_floor_us ? "memory" : "issue";
  return l;
}

}  // namespace tilegemm
