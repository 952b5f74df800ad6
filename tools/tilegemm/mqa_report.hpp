#pragma once
// `--op mqa_logits` and `--op paged_mqa_logits` of `tilegemm plan` and `tilegemm ledger`: DeepSeek-V3.2's MQA-logits
// operators, their launch configuration (plan) and the ledger behind it (bytes, FLOPs, floors, bound).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "tilegemm/hw.hpp"

namespace tilegemm::cli {

struct MqaArgs {
  int heads = 64, head_dim = 128, next_n = 1, max_seqlen_k = 0;
  std::optional<int> context;     // paged: each batch item's context length (tokens)
  std::string window = "causal";  // prefill: DeepGEMM's test windows ("causal") or whole rows ("full")
  std::string logits = "fp32";
  bool no_clean_logits = false;
};

// The options both commands take for these operators.
void add_mqa_options(CLI::App* cmd, MqaArgs& a);

// What the op prints: `seq_len` and `seq_len_kv` (prefill) or `batch` (paged) come from the command's own options;
// `with_config` adds the heuristics' choice (plan) to the ledger.
struct MqaShape {
  std::optional<int> seq_len, seq_len_kv;  // prefill: --m, --n
  int batch = 0;                           // paged: --batch
};
void print_mqa_report(const std::string& op, const MqaArgs& a, const MqaShape& shape, const HardwareModel& hw,
                      int num_sms, bool with_config, bool json);

}  // namespace tilegemm::cli
