// The weight-only GEMM's ledger terms (weight_quant.hpp): bytes, FLOPs and the decode's instruction count.
#include <algorithm>

#include "tilegemm/dtype.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {

double wq_decode_ops_per_weight(WeightFormat f, bool scale_each, DType act_dtype) {
  // SASS instructions of the fused kernel's loop per mma step (8 weights a lane), counted with cuobjdump in the
  // sm_90a cubins of the 8-token kernels, less the step's mma and its share of the activation loads (1.5), which
  // the plan counts per n-tile. What they do (prim/dequant.cuh):
  //   int4:  nibble | magic (lop3), zero point subtract and, per weight, scale multiply; group entries per chunk
  //   mxfp4: sign and exponent/mantissa placement (shift, two masks) and the multiplier, per register
  //   int8:  per pair a byte permute into a 16-bit mantissa and a subtract (bf16: two masks to split the top bit)
  switch (f) {
    case WeightFormat::kInt4:
      return (scale_each ? 18.6 : 13.5) / 8;  // g32 with zero points / g128 (products scaled per chunk)
    case WeightFormat::kMxfp4:
      return 21.8 / 8;
    case WeightFormat::kInt8:
      return (act_dtype == DType::kFloat16 ? 9.3 : 17.3) / 8;
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
  l.decode_ops = wq_decode_ops_per_weight(w.format, true, w.act_dtype) * w.n_pad * static_cast<double>(w.k_pad);
  const double bw = hw.hbm_bytes_per_s();
  l.memory_floor_us = (l.packed_bytes + l.act_bytes + l.out_bytes) / bw * 1e6;
  l.dense_memory_floor_us = (l.dense_weight_bytes + l.act_bytes + l.out_bytes) / bw * 1e6;
  l.decode_floor_us = l.decode_ops / (kLaneOpsPerSmCycle * hw.num_sms * hw.sm_clock_mhz * 1e6) * 1e6;
  return l;
}

}  // namespace tilegemm
