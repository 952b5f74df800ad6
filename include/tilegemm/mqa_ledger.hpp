#pragma once
// The ledger of DeepSeek-V3.2's MQA-logits operators (fp8_mqa_logits for prefill, fp8_paged_mqa_logits for decode):
// FLOPs, DRAM bytes and the floors no kernel beats. Seed 004 §5.5: a logit is a dot product per head reduced over
// the heads (relu, weight, sum), so besides the fp8 tensor cores and DRAM the epilogue's instructions per accumulator
// set a floor of their own: the path from the accumulators to memory.
#include <string>

#include "tilegemm/dtype.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

// Lane instructions the epilogue spends per accumulator (a max for the relu and an fma with the head's weight; the
// weight loads, shuffles and the store spread over them). An estimate from the kernels' code, not a measurement;
// the paged kernel's config sizes its warpgroups with it too.
constexpr double kMqaEpilogueInstrPerAccumulator = 2.5;

struct MqaLedger {
  double flops = 0;              // 2 · visible (q row, token) pairs · H · D
  double accumulators = 0;       // visible pairs · H: what the epilogue reduces over the heads
  double dram_bytes = 0;         // q, KV values and scales, weights read once; logits written
  double logit_bytes = 0;        // the part of dram_bytes that is logits
  double kv_stream_bytes = 0;    // KV values and scales brought into the SMs (prefill: once per block of q rows)
  double mma_floor_us = 0;       // flops at the fp8 tensor peak
  double epilogue_floor_us = 0;  // accumulators' instructions at every SM's issue rate (4 x 32 lanes a cycle)
  double dram_floor_us = 0;      // dram_bytes at the DRAM bandwidth
  std::string bound;             // "mma", "epilogue" or "dram": the largest floor
  double floor_us() const;
};

// Prefill: seq_len query rows of `heads` x `head_dim` over seq_len_kv tokens, `visible` (row, token) pairs in all
// (the rows' windows clamped to [0, seq_len_kv): DeepGEMM's cost). Logits: the whole [seq_len, seq_len_kv] matrix
// with clean_logits, the visible pairs without; compressed (max_seqlen_k > 0): the visible pairs.
MqaLedger mqa_logits_ledger(int seq_len, int seq_len_kv, int heads, int head_dim, double visible, int max_seqlen_k,
                            bool clean_logits, DType logits_dtype, const HardwareModel& hw);

// The visible pairs of DeepGEMM's test windows: ks = 0 and ke = i + seq_len_kv - seq_len ("causal", each row one
// token more than the last), or every row the whole KV ("full").
double mqa_visible_pairs(int seq_len, int seq_len_kv, bool causal);

// Decode: `batch` items of next_n query rows, each item's rows over its context, `sum_context` tokens over the
// batch (the KV cache's values and fp32 scales, 132 bytes a token, read once).
MqaLedger paged_mqa_logits_ledger(int batch, int next_n, int heads, double sum_context, DType logits_dtype,
                                  const HardwareModel& hw);

}  // namespace tilegemm
