#include "mqa_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "shared_checks.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/mqa_ledger.hpp"
#include "tilegemm/mqa_logits.hpp"
#include "tilegemm/paged_mqa_logits.hpp"

namespace tilegemm::cli {
namespace {

DType logits_dtype(const MqaArgs& a) {
  if (a.logits == "fp32") return DType::kFloat32;
  if (a.logits == "bf16") return DType::kBFloat16;
  throw InvalidArgument("--logits", "fp32 or bf16", fmt::format("'{}'", a.logits));
}

nlohmann::ordered_json ledger_json(const MqaLedger& l) {
  return {{"flops", l.flops},
          {"accumulators", l.accumulators},
          {"dram_bytes", l.dram_bytes},
          {"logit_bytes", l.logit_bytes},
          {"kv_stream_bytes", l.kv_stream_bytes},
          {"mma_floor_us", l.mma_floor_us},
          {"epilogue_floor_us", l.epilogue_floor_us},
          {"dram_floor_us", l.dram_floor_us},
          {"floor_us", l.floor_us()},
          {"bound", l.bound}};
}

std::string ledger_line(const MqaLedger& l, const char* stream_what) {
  return fmt::format(
      "ledger: {:.3g} TFLOP, {:.3g} G accumulators; DRAM {:.3f} GB (logits {:.3f}), KV into the SMs {:.3f} GB {}\n"
      "floors: mma {:.2f} us, epilogue {:.2f} us, dram {:.2f} us -> {}-bound, {:.2f} us",
      l.flops / 1e12, l.accumulators / 1e9, l.dram_bytes / 1e9, l.logit_bytes / 1e9, l.kv_stream_bytes / 1e9,
      stream_what, l.mma_floor_us, l.epilogue_floor_us, l.dram_floor_us, l.bound, l.floor_us());
}

void print_prefill(const MqaArgs& a, const MqaShape& shape, const HardwareModel& hw, int num_sms, bool with_config,
                   bool json) {
  TILEGEMM_REQUIRE(shape.seq_len && shape.seq_len_kv, "--m/--n", "--m (query rows) and --n (KV tokens)",
                   "a size missing");
  TILEGEMM_REQUIRE(a.window == "causal" || a.window == "full", "--window", "causal or full",
                   fmt::format("'{}'", a.window));
  const DType logits = logits_dtype(a);
  const bool clean = !a.no_clean_logits && a.max_seqlen_k == 0;
  const double visible = mqa_visible_pairs(*shape.seq_len, *shape.seq_len_kv, a.window == "causal");
  const MqaLedger l = mqa_logits_ledger(*shape.seq_len, *shape.seq_len_kv, a.heads, a.head_dim, visible, a.max_seqlen_k,
                                        clean, logits, hw);
  std::optional<MqaLogitsConfig> c;
  if (with_config)
    c = select_mqa_logits_config(*shape.seq_len, *shape.seq_len_kv, a.heads, a.head_dim, a.max_seqlen_k, logits, clean,
                                 hw, num_sms);
  if (!json) {
    if (c) fmt::print("{}\n", format_mqa_logits_config(*c));
    return fmt::print("{}\n", ledger_line(l, "(once per block of q rows)"));
  }
  nlohmann::ordered_json out = {{"op", "fp8_mqa_logits"},    {"hw", hw.name},
                                {"seq_len", *shape.seq_len}, {"seq_len_kv", *shape.seq_len_kv},
                                {"heads", a.heads},          {"head_dim", a.head_dim},
                                {"window", a.window},        {"visible", visible}};
  if (c)
    out["config"] = {{"block_q", c->block_q},      {"block_kv", c->block_kv},     {"q_stages", c->q_stages},
                     {"kv_stages", c->kv_stages},  {"smem_bytes", c->smem_bytes}, {"grid", c->grid},
                     {"clean_grid", c->clean_grid}};
  out["ledger"] = ledger_json(l);
  fmt::print("{}\n", out.dump(2));
}

void print_paged(const MqaArgs& a, const MqaShape& shape, const HardwareModel& hw, int num_sms, bool with_config,
                 bool json) {
  TILEGEMM_REQUIRE(a.context.has_value(), "--context", "each batch item's context length in tokens", "none");
  TILEGEMM_REQUIRE(*a.context >= 0, "--context", "a token count >= 0", fmt::format("{}", *a.context));
  const DType logits = logits_dtype(a);
  const MqaLedger l = paged_mqa_logits_ledger(shape.batch, a.next_n, a.heads,
                                              static_cast<double>(shape.batch) * *a.context, logits, hw);
  std::optional<PagedMqaLogitsConfig> c;
  if (with_config) c = select_paged_mqa_logits_config(a.next_n, a.heads, logits, num_sms, hw);
  if (!json) {
    if (c) fmt::print("{}\n", format_paged_mqa_logits_config(*c));
    return fmt::print("{}\n", ledger_line(l, "(each block once)"));
  }
  nlohmann::ordered_json out = {{"op", "fp8_paged_mqa_logits"}, {"hw", hw.name},    {"batch", shape.batch},
                                {"next_n", a.next_n},           {"heads", a.heads}, {"context", *a.context}};
  if (c)
    out["config"] = {{"partitions", c->partitions},  {"math_warpgroups", c->math_warpgroups},
                     {"kv_stages", c->kv_stages},    {"q_stages", c->q_stages},
                     {"threads", c->threads},        {"smem_bytes", c->smem_bytes},
                     {"mma_cycles", c->mma_cycles},  {"epilogue_cycles", c->epilogue_cycles},
                     {"dram_cycles", c->dram_cycles}};
  out["ledger"] = ledger_json(l);
  fmt::print("{}\n", out.dump(2));
}

}  // namespace

void add_mqa_options(CLI::App* cmd, MqaArgs& a) {
  cmd->add_option("--heads", a.heads, "mqa_logits / paged_mqa_logits: query heads (32 or 64)")->capture_default_str();
  cmd->add_option("--head-dim", a.head_dim, "mqa_logits: head dimension (32, 64 or 128; paged: 128)")
      ->capture_default_str();
  cmd->add_option("--next-n", a.next_n, "paged_mqa_logits: query rows per batch item (1 or 2)")->capture_default_str();
  cmd->add_option("--context", a.context, "paged_mqa_logits: each batch item's context length (tokens)");
  cmd->add_option("--window", a.window,
                  "mqa_logits: the rows' KV windows, causal (DeepGEMM's test: ks = 0, ke = i + n - m) or full")
      ->capture_default_str();
  cmd->add_option("--max-seqlen-k", a.max_seqlen_k, "mqa_logits: compressed logits' width (0: whole rows)")
      ->capture_default_str();
  cmd->add_option("--logits", a.logits, "mqa_logits / paged_mqa_logits: the logits' dtype, fp32 or bf16")
      ->capture_default_str();
  cmd->add_flag("--no-clean-logits", a.no_clean_logits, "mqa_logits: leave the logits outside the windows unwritten");
}

void print_mqa_report(const std::string& op, const MqaArgs& a, const MqaShape& shape, const HardwareModel& hw,
                      int num_sms, bool with_config, bool json) {
  TILEGEMM_REQUIRE(op == "mqa_logits" || op == "paged_mqa_logits", "--op", "mqa_logits or paged_mqa_logits",
                   fmt::format("'{}'", op));
  // The library names the fields it checks; name the options that set them instead.
  with_option_names({{"seq_len", "--m"},
                     {"seq_len_kv", "--n"},
                     {"visible", "--m/--n"},
                     {"num_heads", "--heads"},
                     {"heads", "--heads"},
                     {"head_dim", "--head-dim"},
                     {"next_n", "--next-n"},
                     {"max_seqlen_k", "--max-seqlen-k"},
                     {"clean_logits", "--no-clean-logits"},
                     {"logits", "--logits"},
                     {"logits_dtype", "--logits"},
                     {"batch", "--batch"},
                     {"partitions", "--num-sms"},
                     {"hw", "--hw"}},
                    [&] {
                      if (op == "mqa_logits") return print_prefill(a, shape, hw, num_sms, with_config, json);
                      print_paged(a, shape, hw, num_sms, with_config, json);
                    });
}

}  // namespace tilegemm::cli
