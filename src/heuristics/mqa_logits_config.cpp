// The MQA-logits launch: the kernel's block is fixed by the problem (block_q · H = 128 q rows, the wgmma's N; 256 KV
// tokens per stage, four consumer warpgroups of 64), so what is chosen is the rings' depths and the grids.
//   Q ring: three stages, so that the producer loads the next q block's tile while the consumers still hold the
//     current one and the one before is being released (two would drain the KV ring at each q-block boundary).
//   KV ring: as deep as shared memory allows, up to kMaxKvStages: the deeper the prefetch, the less a KV block's
//     L2/DRAM latency shows (every q block streams its whole window of KV through the SM).
//   Grid: one persistent CTA per SM (640 threads, most of the shared memory), at most one per q block.
//   Clean kernel: a warp per logits row, as many CTAs as the SMs hold at once (a memory-bound fill).
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/mqa_logits.hpp"
#include "tilegemm/mqa_logits_params.hpp"

namespace tilegemm {
namespace {

constexpr int kMqaQStages = 3;
constexpr int kMqaMaxKvStages = 8;

}  // namespace

MqaLogitsConfig select_mqa_logits_config(int seq_len, int seq_len_kv, int num_heads, int head_dim, int max_seqlen_k,
                                         DType logits_dtype, bool clean_logits, const HardwareModel& hw, int num_sms) {
  TILEGEMM_REQUIRE(seq_len >= 0, "seq_len", "a row count >= 0", fmt::format("{}", seq_len));
  TILEGEMM_REQUIRE(seq_len_kv >= 0, "seq_len_kv", "a token count >= 0", fmt::format("{}", seq_len_kv));
  TILEGEMM_REQUIRE(num_heads == 32 || num_heads == 64, "num_heads", "32 or 64 heads (SM90)",
                   fmt::format("{}", num_heads));
  TILEGEMM_REQUIRE(head_dim == 32 || head_dim == 64 || head_dim == 128, "head_dim", "32, 64 or 128",
                   fmt::format("{}", head_dim));
  TILEGEMM_REQUIRE(max_seqlen_k >= 0, "max_seqlen_k", "0 (full rows) or the compressed width > 0",
                   fmt::format("{}", max_seqlen_k));
  TILEGEMM_REQUIRE(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16, "logits", "fp32 or bf16 logits",
                   std::string(dtype_name(logits_dtype)));
  TILEGEMM_REQUIRE(!(clean_logits && max_seqlen_k > 0), "clean_logits",
                   "false with compressed logits (max_seqlen_k > 0)",
                   fmt::format("true with max_seqlen_k = {}", max_seqlen_k));
  TILEGEMM_REQUIRE(num_sms > 0 && hw.num_sms > 0 && hw.max_threads_per_sm > 0, "hw",
                   "a hardware model with SMs and a thread limit",
                   fmt::format("{} ({} SMs asked, {} threads per SM)", hw.name, num_sms, hw.max_threads_per_sm));
  MqaLogitsConfig c;
  c.seq_len = seq_len, c.seq_len_kv = seq_len_kv, c.num_heads = num_heads, c.head_dim = head_dim;
  c.max_seqlen_k = max_seqlen_k, c.logits_dtype = logits_dtype, c.clean_logits = clean_logits;
  c.block_q = mqa_logits::block_q(num_heads);
  c.block_kv = mqa_logits::kBlockKv;
  c.q_stages = kMqaQStages;
  c.kv_stages = kMqaMaxKvStages;
  while (c.kv_stages > 2 && mqa_logits::smem_plan(head_dim, c.q_stages, c.kv_stages).total > hw.smem_per_block_bytes)
    --c.kv_stages;
  c.smem_bytes = mqa_logits::smem_plan(head_dim, c.q_stages, c.kv_stages).total;
  TILEGEMM_REQUIRE(c.smem_bytes <= hw.smem_per_block_bytes, "hw",
                   "room for the Q ring and two KV stages in shared memory",
                   fmt::format("{} bytes per block ({} needed)", hw.smem_per_block_bytes, c.smem_bytes));
  const std::int64_t q_blocks = (static_cast<std::int64_t>(seq_len) + c.block_q - 1) / c.block_q;
  c.grid = static_cast<int>(std::min<std::int64_t>(q_blocks, num_sms));
  if (clean_logits) {
    const std::int64_t row_ctas =
        (static_cast<std::int64_t>(seq_len) + mqa_logits::kCleanWarps - 1) / mqa_logits::kCleanWarps;
    const int resident = num_sms * std::max(1, hw.max_threads_per_sm / mqa_logits::kCleanThreads);
    c.clean_grid = static_cast<int>(std::min<std::int64_t>(row_ctas, resident));
  }
  return c;
}

std::string format_mqa_logits_config(const MqaLogitsConfig& c) {
  const std::string width = c.max_seqlen_k > 0 ? fmt::format(" compressed={}", c.max_seqlen_k) : "";
  const std::string clean = c.clean_logits ? fmt::format(" | clean_logits grid={}", c.clean_grid) : "";
  return fmt::format(
      "fp8_mqa_logits seq_len={} seq_len_kv={} h={} d={} logits={}{} -> block_q={} block_kv={} q_stages={} "
      "kv_stages={} smem={} grid={}{}",
      c.seq_len, c.seq_len_kv, c.num_heads, c.head_dim, dtype_name(c.logits_dtype), width, c.block_q, c.block_kv,
      c.q_stages, c.kv_stages, c.smem_bytes, c.grid, clean);
}

}  // namespace tilegemm
