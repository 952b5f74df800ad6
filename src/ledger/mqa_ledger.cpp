// The MQA-logits operators' ledger (mqa_ledger.hpp).
#include "tilegemm/mqa_ledger.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/mqa_logits_params.hpp"
#include "tilegemm/paged_mqa_logits_params.hpp"

namespace tilegemm {
namespace {

void require_hw(const HardwareModel& hw) {
  TILEGEMM_REQUIRE(hw.num_sms > 0 && hw.hbm_gbps > 0 && hw.sm_clock_mhz > 0 && hw.flop_per_cycle_fp8 > 0, "hw",
                   "a hardware model with SMs, DRAM bandwidth, a clock and fp8 tensor cores",
                   fmt::format("{} ({} SMs, {} GB/s)", hw.name, hw.num_sms, hw.hbm_gbps));
}

void require_logits(DType logits_dtype) {
  TILEGEMM_REQUIRE(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16, "logits_dtype", "fp32 or bf16",
                   std::string(dtype_name(logits_dtype)));
}

// The floors of `l`'s FLOPs, accumulators and bytes on `hw`, and the largest of them.
void finish(MqaLedger& l, const HardwareModel& hw) {
  const double clock = hw.sm_clock_mhz * 1e6;
  l.mma_floor_us = l.flops / (hw.flop_per_cycle_fp8 * hw.num_sms * clock) * 1e6;
  l.epilogue_floor_us =
      l.accumulators * kMqaEpilogueInstrPerAccumulator / (kLaneOpsPerSmCycle * hw.num_sms * clock) * 1e6;
  l.dram_floor_us = l.dram_bytes / hw.hbm_bytes_per_s() * 1e6;
  l.bound = l.mma_floor_us >= l.epilogue_floor_us && l.mma_floor_us >= l.dram_floor_us ? "mma"
            : l.epilogue_floor_us >= l.dram_floor_us                                   ? "epilogue"
                                                                                       : "dram";
}

}  // namespace

double MqaLedger::floor_us() const {
  return std::max({mma_floor_us, epilogue_floor_us, dram_floor_us});
}

double mqa_visible_pairs(int seq_len, int seq_len_kv, bool causal) {
  TILEGEMM_REQUIRE(seq_len >= 0 && seq_len_kv >= 0, "seq_len", "row and token counts >= 0",
                   fmt::format("{} rows, {} tokens", seq_len, seq_len_kv));
  if (!causal) return static_cast<double>(seq_len) * seq_len_kv;
  double pairs = 0;  // row i sees [0, i + seq_len_kv - seq_len) clamped to [0, seq_len_kv)
  for (int i = 0; i < seq_len; ++i)
    pairs += std::clamp(static_cast<double>(i) + seq_len_kv - seq_len, 0.0, static_cast<double>(seq_len_kv));
  return pairs;
}

MqaLedger mqa_logits_ledger(int seq_len, int seq_len_kv, int heads, int head_dim, double visible, int max_seqlen_k,
                            bool clean_logits, DType logits_dtype, const HardwareModel& hw) {
  TILEGEMM_REQUIRE(seq_len >= 0 && seq_len_kv >= 0, "seq_len", "row and token counts >= 0",
                   fmt::format("{} rows, {} tokens", seq_len, seq_len_kv));
  TILEGEMM_REQUIRE(heads == 32 || heads == 64, "num_heads", "32 or 64 heads (SM90)", fmt::format("{}", heads));
  TILEGEMM_REQUIRE(head_dim == 32 || head_dim == 64 || head_dim == 128, "head_dim", "32, 64 or 128",
                   fmt::format("{}", head_dim));
  TILEGEMM_REQUIRE(visible >= 0 && visible <= static_cast<double>(seq_len) * seq_len_kv, "visible",
                   fmt::format("a pair count in [0, {} x {}]", seq_len, seq_len_kv), fmt::format("{}", visible));
  require_logits(logits_dtype);
  require_hw(hw);
  MqaLedger l;
  l.flops = 2.0 * visible * heads * head_dim;
  l.accumulators = visible * heads;
  const double logit = dtype_bits(logits_dtype) / 8.0;
  l.logit_bytes = (clean_logits && max_seqlen_k == 0 ? static_cast<double>(seq_len) * seq_len_kv : visible) * logit;
  const double kv_token = head_dim + 4.0;  // fp8 values and an fp32 scale
  l.dram_bytes = static_cast<double>(seq_len) * heads * (head_dim + 4.0) + 8.0 * seq_len +
                 static_cast<double>(seq_len_kv) * kv_token + l.logit_bytes;
  // A block of block_q rows streams its window: about its rows' visible tokens over block_q.
  l.kv_stream_bytes = visible / mqa_logits::block_q(heads) * kv_token;
  finish(l, hw);
  return l;
}

MqaLedger paged_mqa_logits_ledger(int batch, int next_n, int heads, double sum_context, DType logits_dtype,
                                  const HardwareModel& hw) {
  TILEGEMM_REQUIRE(batch >= 0, "batch", "an item count >= 0", fmt::format("{}", batch));
  TILEGEMM_REQUIRE(next_n == 1 || next_n == 2, "next_n", "1 or 2 query rows per batch item (DeepGEMM's SM90)",
                   fmt::format("{}", next_n));
  TILEGEMM_REQUIRE(heads == 32 || heads == 64, "heads", "32 or 64 heads", fmt::format("{}", heads));
  TILEGEMM_REQUIRE(sum_context >= 0, "sum_context", "a token count >= 0", fmt::format("{}", sum_context));
  require_logits(logits_dtype);
  require_hw(hw);
  constexpr double kTokenBytes = paged_mqa::kHeadDim + 4.0;  // the fused cache's values and scale
  MqaLedger l;
  const double pairs = sum_context * next_n;
  l.flops = 2.0 * pairs * heads * paged_mqa::kHeadDim;
  l.accumulators = pairs * heads;
  l.logit_bytes = pairs * dtype_bits(logits_dtype) / 8.0;
  l.kv_stream_bytes = sum_context * kTokenBytes;
  l.dram_bytes =
      static_cast<double>(batch) * next_n * heads * (paged_mqa::kHeadDim + 4.0) + l.kv_stream_bytes + l.logit_bytes;
  finish(l, hw);
  return l;
}

}  // namespace tilegemm
