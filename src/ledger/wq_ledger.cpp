// The weight-only GEMM's ledger terms (weight_quant.hpp): bytes, FLOPs and the decode's instruction count.
#include <algorithm>

#include "tilegemm/dtype.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {
namespace {

constexpr double kLaneOpsPerCycle = 4 * 32;  // four schedulers per SM, one warp instruction each per cycle

}  // namespace

double wq_decode_ops_per_weight(WeightFormat f, bool scale_each) {
  // Per 32-bit step word (eight 4-bit weights) or pair of words (eight int8 weights), from prim/dequant.cuh:
  //   int4:  3 shifts + 4 lop3 (nibble | magic) + 4 zero-point subtracts (+ 4 scale multiplies)
  //   mxfp4: 3 shifts + 4 x (shift, two masks merged) + 4 scale multiplies
  //   int8:  8 x (byte permute + float subtract) + 4 pair conversions
  switch (f) {
    case WeightFormat::kInt4:
      return (scale_each ? 15.0 : 11.0) / 8;
    case WeightFormat::kMxfp4:
      return 19.0 / 8;
    case WeightFormat::kInt8:
      return 20.0 / 8;
  }
  return 0;
}

WqLedger wq_ledger(int m, const WeightLayout& w, DType d_dtype, const HardwareModel& hw) {
  WqLedger l;
  const double n = w.n, k = w.k;
  l.packed_bytes = static_cast<double>(w.data_bytes() + w.scale_bytes() + w.zero_bytes()) +
                   (w.format == WeightFormat::kInt8 ? 4.0 * w.n_pad : 0.0);
  l.dense_weight_bytes = 2 * n * k;
  l.act_bytes = 2.0 * m * k;
  l.out_bytes = dtype_bytes(d_dtype, static_cast<double>(m) * n);
  l.flops = 2.0 * m * n * k;
  l.decode_ops = wq_decode_ops_per_weight(w.format, true) * w.n_pad * static_cast<double>(w.k_pad);
  const double bw = hw.hbm_bytes_per_s();
  l.memory_floor_us = (l.packed_bytes + l.act_bytes + l.out_bytes) / bw * 1e6;
  l.dense_memory_floor_us = (l.dense_weight_bytes + l.act_bytes + l.out_bytes) / bw * 1e6;
  l.decode_floor_us = l.decode_ops / (kLaneOpsPerCycle * hw.num_sms * hw.sm_clock_mhz * 1e6) * 1e6;
  return l;
}

}  // namespace tilegemm
