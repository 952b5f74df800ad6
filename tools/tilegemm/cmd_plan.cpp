// `tilegemm plan`: the config the heuristics pick for a shape (or a suite of shapes) and the ledger numbers
// that decided it — on any machine, no GPU needed.
#include <algorithm>
#include <climits>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "command.hpp"
#include "mqa_report.hpp"
#include "shared_checks.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/hc_prenorm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm::cli {
namespace {

struct PlanArgs {
  std::optional<int> m, n, k;
  std::string dtype = "bf16";
  std::string out_dtype = "bf16";
  std::string layout = "nt";
  std::string hw = "h200";
  std::string gemm_type = "normal";
  int num_groups = 1;
  int expected_m = 0;
  bool psum = false;  // M-grouped contiguous in the prefix-sum layout
  int num_sms = 0;
  bool with_c = false;
  std::string suite;
  bool json = false;
  int top = 0;
  std::string op = "gemm";
  std::optional<int> num_splits;
  std::string weight = "int4";  // --op wq
  int group_size = 128;
  bool zeros = false;
  MqaArgs mqa;      // --op mqa_logits / paged_mqa_logits
  int batch = 1;    // --op paged_mqa_logits
  bool mx = false;  // --op fp8_fp4: MXFP8 instead
};

// The SMs a plan spreads over: --num-sms, or every SM of the preset.
int plan_sms(const PlanArgs& args, const HardwareModel& hw) {
  return args.num_sms > 0 ? args.num_sms : hw.num_sms;
}

// --op hc_prenorm: the split of DeepSeek-V3.2's mHC pre-norm GEMM (A bf16 [m, k], B fp32 [n, k]) and the model
// behind it.
void run_hc_prenorm_plan(const PlanArgs& args, const HardwareModel& hw) {
  TILEGEMM_REQUIRE(args.m && args.n && args.k, "--m/--n/--k", "all three sizes for --op hc_prenorm", "a size missing");
  const HcPrenormConfig c =
      select_hc_prenorm_config(*args.m, *args.n, *args.k, args.num_splits, hw, plan_sms(args, hw));
  if (!args.json) return fmt::print("{}\n", format_hc_prenorm_config(c));
  const nlohmann::json out = {{"op", "tf32_hc_prenorm_gemm"},
                              {"hw", hw.name},
                              {"m", c.m},
                              {"n", c.n},
                              {"k", c.k},
                              {"block_m", c.block_m},
                              {"num_splits", c.num_splits},
                              {"caller_splits", c.caller_splits},
                              {"reduce_in_kernel", c.reduce_in_kernel},
                              {"cluster", c.cluster},
                              {"grid", c.grid},
                              {"stages", c.stages},
                              {"smem_bytes", c.smem_bytes},
                              {"bytes", c.bytes},
                              {"floor_us", c.floor_us},
                              {"predicted_us", c.predicted_us}};
  fmt::print("{}\n", out.dump(2));
}

// `out` with the launch of a small-M mma.sync kernel's config (weight-only, FP8 x FP4): both configs name them alike.
template <class SmallMConfig>
nlohmann::json with_launch_fields(nlohmann::json out, const SmallMConfig& c) {
  out.update({{"block_m", c.block_m},
              {"stages", c.stages},
              {"num_splits", c.num_splits},
              {"k_groups", c.k_groups},
              {"grid", c.grid},
              {"smem_bytes", c.smem_bytes}});
  return out;
}

// --op wq: the weight-only quantised GEMM's path (decoded in registers, or dequantised + dense), token block, stages
// and split, with the ledger's model times of both paths.
void run_wq_plan(const PlanArgs& args, const HardwareModel& hw) {
  TILEGEMM_REQUIRE(args.m && args.n && args.k, "--m/--n/--k", "all three sizes for --op wq", "a size missing");
  const WeightFormat format = parse_weight_format(args.weight, "--weight");
  const int group = format == WeightFormat::kInt4 ? args.group_size : format == WeightFormat::kMxfp4 ? 32 : 0;
  const WeightLayout w =
      make_weight_layout(format, *args.n, *args.k, group, args.zeros, parse_dtype(args.dtype, "--dtype"));
  const DType d_dtype = parse_dtype(args.out_dtype, "--out-dtype");
  const WqGemmConfig c = select_wq_gemm_config(*args.m, w, d_dtype, hw, plan_sms(args, hw));
  const WqLedger l = wq_ledger(*args.m, w, d_dtype, hw);
  if (!args.json)
    return fmt::print("{}\nledger: packed floor {:.2f} us, 16-bit weight floor {:.2f} us, decode {:.2f} us\n",
                      format_wq_gemm_config(*args.m, w, c), l.memory_floor_us, l.dense_memory_floor_us,
                      l.decode_floor_us);
  const nlohmann::json out = {{"op", "wq_gemm_nt"},
                              {"hw", hw.name},
                              {"m", *args.m},
                              {"n", w.n},
                              {"k", w.k},
                              {"weight", weight_format_name(format)},
                              {"group_size", w.group_size},
                              {"zeros", w.has_zeros},
                              {"path", c.fused ? "fused" : "dequantise+dense"},
                              {"packed_bytes", c.packed_bytes},
                              {"fused_us", c.fused_us},
                              {"dequant_us", c.dequant_us},
                              {"memory_floor_us", l.memory_floor_us},
                              {"dense_memory_floor_us", l.dense_memory_floor_us},
                              {"decode_floor_us", l.decode_floor_us}};
  fmt::print("{}\n", with_launch_fields(out, c).dump(2));
}

GemmType parse_gemm_type(const std::string& name) {
  for (GemmType t : {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked,
                     GemmType::kKGroupedContiguous})
    if (gemm_type_name(t) == name) return t;
  throw InvalidArgument("--gemm-type",
                        "one of normal, batched, m_grouped_contiguous, m_grouped_masked, k_grouped_contiguous",
                        fmt::format("'{}'", name));
}

// --op fp8_fp4: the FP8 x FP4 (or, with --mx, MXFP8) GEMM's token block, stages, split and grid, with its ledger
// (bytes, the K loop's lane instructions, and the floors they set). Masked experts: --gemm-type m_grouped_masked.
void run_fp8_fp4_plan(const PlanArgs& args, const HardwareModel& hw) {
  TILEGEMM_REQUIRE(args.m && args.n && args.k, "--m/--n/--k", "all three sizes for --op fp8_fp4", "a size missing");
  const GemmType type = parse_gemm_type(args.gemm_type);
  TILEGEMM_REQUIRE(type == GemmType::kNormal || (type == GemmType::kMGroupedMasked && !args.mx), "--gemm-type",
                   "normal, or m_grouped_masked (FP4 only) with --num-groups experts", args.gemm_type);
  const int experts = type == GemmType::kMGroupedMasked ? args.num_groups : 0;
  const DType d_dtype = parse_dtype(args.out_dtype, "--out-dtype");
  const Fp8Fp4GemmConfig c =
      select_fp8_fp4_gemm_config(*args.m, *args.n, *args.k, hw, plan_sms(args, hw), experts, args.mx);
  const Fp8Fp4Ledger l =
      fp8_fp4_ledger(*args.m, *args.n, *args.k, c.block_m, d_dtype, args.mx, hw, std::max(experts, 1));
  if (!args.json)
    return fmt::print(
        "{}\nledger: {:.2f} MB, memory floor {:.2f} us, K-loop issue floor {:.2f} us ({:.2f} lane "
        "instructions a weight per token block) -> {}-bound\n",
        format_fp8_fp4_gemm_config(*args.m, *args.n, *args.k, c), l.bytes / 1e6, l.memory_floor_us, l.issue_floor_us,
        fp8_fp4_ops_per_weight(c.block_m), l.bound);
  const nlohmann::json out = {{"op", args.mx ? "mxfp8_gemm_nt" : "fp8_fp4_gemm_nt"},
                              {"hw", hw.name},
                              {"m", *args.m},
                              {"n", *args.n},
                              {"k", *args.k},
                              {"experts", experts},
                              {"bytes", l.bytes},
                              {"flops", l.flops},
                              {"issue_ops", l.issue_ops},
                              {"memory_floor_us", l.memory_floor_us},
                              {"issue_floor_us", l.issue_floor_us},
                              {"bound", l.bound}};
  fmt::print("{}\n", with_launch_fields(out, c).dump(2));
}

// --m is rows per group (per batch); a contiguous desc holds the rows of all groups.
GemmDesc make_plan_desc(GemmType type, int groups, int m, int n, int k, const PlanArgs& args) {
  TILEGEMM_REQUIRE(m > 0, "--m", "a positive size", std::to_string(m));
  TILEGEMM_REQUIRE(groups > 0, "--num-groups", "a positive count", std::to_string(groups));
  // The ledger's size contract (every size below 2^31) applied to the rows of all groups, which m * groups
  // would otherwise wrap into a wrong or negative M.
  if (type == GemmType::kMGroupedContiguous)
    TILEGEMM_REQUIRE(
        std::int64_t{m} * groups <= INT_MAX, "--num-groups",
        fmt::format("at most {} groups of --m = {} rows (all groups' rows at most 2^31 - 1)", INT_MAX / m, m),
        std::to_string(groups));
  GemmDesc desc;
  desc.type = type;
  desc.num_groups = groups;
  desc.m = type == GemmType::kMGroupedContiguous ? m * groups : m;
  desc.n = n;
  desc.k = k;
  desc.expected_m = args.expected_m;
  TILEGEMM_REQUIRE(!args.psum || type == GemmType::kMGroupedContiguous, "--psum",
                   "--gemm-type m_grouped_contiguous (the prefix-sum layout is one of its layouts)",
                   std::string(gemm_type_name(type)));
  desc.use_psum_layout = args.psum;
  desc.a_dtype = desc.b_dtype = parse_dtype(args.dtype, "--dtype");
  TILEGEMM_REQUIRE(
      desc.a_dtype == DType::kBFloat16 || desc.a_dtype == DType::kFloat8E4M3 || desc.a_dtype == DType::kInt8, "--dtype",
      "bf16, fp8 (e4m3, block-scaled: bf16 --out-dtype = 1D2D, fp32 = 1D1D) or int8 (per-token x per-channel scales)",
      fmt::format("'{}'", args.dtype));
  desc.d_dtype = parse_dtype(args.out_dtype, "--out-dtype");
  // DeepGEMM's rule: first letter 'n' = A K-major, 't' = A MN-major; second letter 't' = B K-major, 'n' =
  // B MN-major (its tests: major_opt = 'N' if a K-major else 'T'; += 'T' if b K-major else 'N').
  const std::string_view layout = layout_name(parse_layout(args.layout, "--layout"));
  desc.major_a = layout[0] == 'n' ? Major::kKMajor : Major::kMNMajor;
  desc.major_b = layout[1] == 't' ? Major::kKMajor : Major::kMNMajor;
  desc.with_c = args.with_c;
  return desc;
}

std::vector<GemmDesc> descs_from(const PlanArgs& args) {
  const GemmType type = parse_gemm_type(args.gemm_type);
  if (!args.suite.empty()) {
    TILEGEMM_REQUIRE(!args.m && !args.n && !args.k, "--suite", "no --m/--n/--k alongside a suite",
                     fmt::format("'{}' with a shape", args.suite));
    std::vector<GemmDesc> descs;
    for (const BenchShape& s : suite_shapes(args.suite, "--suite"))
      descs.push_back(make_plan_desc(s.type, s.groups, s.m, s.n, s.k, args));
    return descs;
  }
  TILEGEMM_REQUIRE(
      args.m && args.n && args.k, "--m/--n/--k", "all three sizes (or --suite)",
      fmt::format("--m {} --n {} --k {}", args.m ? std::to_string(*args.m) : "(missing)",
                  args.n ? std::to_string(*args.n) : "(missing)", args.k ? std::to_string(*args.k) : "(missing)"));
  if (type == GemmType::kNormal)
    TILEGEMM_REQUIRE(args.num_groups == 1, "--num-groups", "1 for --gemm-type normal", std::to_string(args.num_groups));
  return {make_plan_desc(type, args.num_groups, *args.m, *args.n, *args.k, args)};
}

// Runners-up that differ in tile shape or cluster (each with its best stage count), best first.
std::vector<const Candidate*> distinct_tiles(const std::vector<Candidate>& ranked, int top) {
  std::vector<const Candidate*> out;
  std::set<std::tuple<int, int, int, int, int>> seen;
  for (const Candidate& c : ranked) {
    if (static_cast<int>(out.size()) >= top) break;
    const auto key = std::make_tuple(c.config.block_m, c.config.block_n, c.config.num_math_warpgroups,
                                     c.config.cluster_m, c.config.cluster_n);
    if (seen.insert(key).second) out.push_back(&c);
  }
  return out;
}

std::string short_config(const GemmConfig& c) {
  return fmt::format("{}x{}x{} wg{} s{} c{}x{}{}", c.block_m, c.block_n, c.block_k, c.num_math_warpgroups, c.stages,
                     c.cluster_m, c.cluster_n, c.swap_ab ? " swap" : "");
}

nlohmann::json cost_json(const CostBreakdown& r) {
  return {{"tiles", r.tiles},
          {"num_sms", r.num_sms},
          {"waves", r.waves},
          {"last_wave_util", r.last_wave_util},
          {"flops", r.flops},
          {"l2_to_sm_bytes", r.l2_to_sm_bytes},
          {"dram_bytes", r.dram_bytes},
          {"smem_bytes", r.smem_bytes},
          {"smem_per_stage_bytes", r.smem_per_stage_bytes},
          {"acc_regs_per_thread", r.acc_regs_per_thread},
          {"mma_efficiency", r.mma_efficiency},
          {"tile_compute_us", r.tile_compute_us},
          {"tile_load_us", r.tile_load_us},
          {"tile_issue_us", r.tile_issue_us},
          {"tile_overhead_us", r.tile_overhead_us},
          {"mainloop_us", r.mainloop_us},
          {"dram_floor_us", r.dram_floor_us},
          {"compute_floor_us", r.compute_floor_us},
          {"predicted_us", r.predicted_us},
          {"predicted_tflops", r.predicted_tflops},
          {"bound", r.bound}};
}

nlohmann::json config_json(const GemmConfig& c) {
  return {{"block_m", c.block_m},
          {"block_n", c.block_n},
          {"block_k", c.block_k},
          {"stages", c.stages},
          {"num_math_warpgroups", c.num_math_warpgroups},
          {"threads", c.num_threads()},
          {"cluster_m", c.cluster_m},
          {"cluster_n", c.cluster_n},
          {"multicast", c.multicast == MulticastSide::kB ? "B" : "none"},
          {"swizzle_d_bytes", c.swizzle_d_bytes},
          {"num_sms", c.num_sms},
          {"raster_group", c.raster_group},
          {"scheme", scheme_name(c.scheme)},
          {"split_k", c.split_k},
          {"swap_ab", c.swap_ab},
          {"smem_bytes", c.smem_bytes}};
}

void print_plan_detail(const GemmDesc& desc, const HardwareModel& hw, const std::vector<Candidate>& ranked,
                       std::size_t enumerated, int top) {
  const Candidate& best = ranked.front();
  const CostBreakdown& r = best.cost;
  fmt::print("problem   {} on {} ({} SMs)\n", to_string(desc), hw.name, r.num_sms);
  fmt::print("config    {}\n", to_string(best.config));
  if (best.config.scheme != GemmScheme::kDataParallel)  // the config line's split_k is 1 under stream-K
    fmt::print("scheme    {}\n", best.scheme_reason.empty() ? scheme_name(best.config.scheme) : best.scheme_reason);
  fmt::print("tiles     {} over {} SMs: {} wave(s), last wave {:.1f}% busy\n", r.tiles, r.num_sms, r.waves,
             100 * r.last_wave_util);
  fmt::print("traffic   L2->SM {:.2f} MB (b*MNK(1/bm+1/bn)), DRAM ~{:.2f} MB (raster group {})\n",
             r.l2_to_sm_bytes / 1e6, r.dram_bytes / 1e6, best.config.raster_group);
  fmt::print("resources smem {} B ({} B/stage x {}), {} fp32 accumulator regs/thread, {} threads\n", r.smem_bytes,
             r.smem_per_stage_bytes, best.config.stages, r.acc_regs_per_thread, best.config.num_threads());
  fmt::print("per tile  mma {:.2f} us (efficiency {:.2f}), load {:.2f} us, issue {:.2f} us, overhead {:.2f} us\n",
             r.tile_compute_us, r.mma_efficiency, r.tile_load_us, r.tile_issue_us, r.tile_overhead_us);
  fmt::print(
      "time      tiles {:.2f} us, DRAM floor {:.2f} us, compute floor {:.2f} us -> predicted {:.2f} us "
      "({} bound), {:.1f} TFLOP/s\n",
      r.mainloop_us, r.dram_floor_us, r.compute_floor_us, r.predicted_us, r.bound, r.predicted_tflops);
  fmt::print("searched  {} candidates, {} legal\n", enumerated, ranked.size());
  if (top > 0) {
    fmt::print("\n{:>4}  {:<24} {:>6} {:>5} {:>6} {:>10} {:>8}  {}\n", "rank", "config", "tiles", "waves", "util",
               "pred us", "TFLOP/s", "bound");
    int rank = 1;
    for (const Candidate* c : distinct_tiles(ranked, top))
      fmt::print("{:>4}  {:<24} {:>6} {:>5} {:>5.1f}% {:>10.2f} {:>8.1f}  {}\n", rank++, short_config(c->config),
                 c->cost.tiles, c->cost.waves, 100 * c->cost.last_wave_util, c->cost.predicted_us,
                 c->cost.predicted_tflops, c->cost.bound);
  }
}

void run_plan_checked(const PlanArgs& args);

// The heuristics check a GemmDesc and name its fields; name the options that set them instead.
void run_plan(const PlanArgs& args) {
  const bool contiguous = args.gemm_type == gemm_type_name(GemmType::kMGroupedContiguous);
  const OptionNames options = {
      // A contiguous desc's M holds the rows of all groups (--m x --num-groups).
      {"m", contiguous ? "--m x --num-groups (all groups' rows)" : "--m"},
      {"n", "--n"},
      {"k", "--k"},
      {"num_groups", "--num-groups"},
      {"expected_m", "--expected-m"},
      {"num_sms", "--num-sms"},
      {"a_dtype", "--dtype"},
      {"b_dtype", "--dtype"},
      {"d_dtype", "--out-dtype"},
      {"major_a", "--layout"},
      {"major_b", "--layout"},
      {"desc", "--m/--n/--k"},
      {"num_splits", "--num-splits"},
      {"group_size", "--group-size"},
      {"act_dtype", "--dtype"},
      {"zeros", "--zeros"},
  };
  with_option_names(options, [&] { run_plan_checked(args); });
}

void run_plan_checked(const PlanArgs& args) {
  TILEGEMM_REQUIRE(args.top >= 0, "--top", "a count >= 0", std::to_string(args.top));
  TILEGEMM_REQUIRE(args.op == "gemm" || args.op == "hc_prenorm" || args.op == "wq" || args.op == "fp8_fp4" ||
                       args.op == "mqa_logits" || args.op == "paged_mqa_logits",
                   "--op", "gemm, hc_prenorm, wq, fp8_fp4, mqa_logits or paged_mqa_logits", args.op);
  const HardwareModel hw = sm90_hardware_preset(args.hw, "--hw");
  if (args.op == "hc_prenorm") return run_hc_prenorm_plan(args, hw);
  if (args.op == "wq") return run_wq_plan(args, hw);
  if (args.op == "fp8_fp4") return run_fp8_fp4_plan(args, hw);
  if (args.op == "mqa_logits" || args.op == "paged_mqa_logits")
    return print_mqa_report(args.op, args.mqa, {args.m, args.n, args.batch}, hw, plan_sms(args, hw), true, args.json);
  const std::vector<GemmDesc> descs = descs_from(args);
  nlohmann::json out = nlohmann::json::array();
  if (!args.json && descs.size() > 1)
    fmt::print("{:<44} {:<24} {:>6} {:>5} {:>6} {:>10} {:>8}  {}\n", "problem", "config", "tiles", "waves", "util",
               "pred us", "TFLOP/s", "bound");
  for (const GemmDesc& desc : descs) {
    const std::size_t enumerated = enumerate_candidates(desc, hw, args.num_sms).size();
    const std::vector<Candidate> ranked = rank_candidates(desc, hw, args.num_sms);
    const Candidate& best = ranked.front();
    if (args.json) {
      nlohmann::json runners = nlohmann::json::array();
      for (const Candidate* c : distinct_tiles(ranked, args.top))
        runners.push_back({{"config", config_json(c->config)}, {"cost", cost_json(c->cost)}});
      out.push_back({{"problem", to_string(desc)},
                     {"hw", hw.name},
                     {"config", config_json(best.config)},
                     {"config_string", to_string(best.config)},
                     {"cost", cost_json(best.cost)},
                     {"candidates", enumerated},
                     {"legal_candidates", ranked.size()},
                     {"top", runners}});
    } else if (descs.size() > 1) {
      fmt::print("{:<44} {:<24} {:>6} {:>5} {:>5.1f}% {:>10.2f} {:>8.1f}  {}\n",
                 fmt::format("{} m={} n={} k={}", desc.num_groups > 1 ? fmt::format("{}x", desc.num_groups) : "",
                             desc.m, desc.n, desc.k),
                 short_config(best.config), best.cost.tiles, best.cost.waves, 100 * best.cost.last_wave_util,
                 best.cost.predicted_us, best.cost.predicted_tflops, best.cost.bound);
    } else {
      print_plan_detail(desc, hw, ranked, enumerated, args.top);
    }
  }
  if (args.json) fmt::print("{}\n", out.dump(2));
}

const CommandRegistrar kPlanRegistrar([](CLI::App& root) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = root.add_subcommand("plan", "Show the GEMM config the heuristics choose and why (no GPU needed)");
  cmd->add_option("--m", args->m, "Rows of A and D (per group / per batch for grouped and batched GEMMs)");
  cmd->add_option("--n", args->n, "Columns of D");
  cmd->add_option("--k", args->k, "Reduction size");
  cmd->add_option("--dtype", args->dtype, "Input dtype of A and B (bf16, fp8 or int8)")->capture_default_str();
  cmd->add_option("--out-dtype", args->out_dtype, "Dtype of D: bf16 or fp32")->capture_default_str();
  cmd->add_option("--layout", args->layout, "nt, nn, tn or tt (DeepGEMM naming)")->capture_default_str();
  cmd->add_option("--hw", args->hw, "Hardware preset (h200, h100-sxm, h800, h20)")->capture_default_str();
  cmd->add_option("--gemm-type", args->gemm_type,
                  "normal, batched, m_grouped_contiguous, m_grouped_masked or k_grouped_contiguous")
      ->capture_default_str();
  cmd->add_option("--num-groups", args->num_groups, "Groups (or batches)")->capture_default_str();
  cmd->add_option("--expected-m", args->expected_m, "Masked or --psum grouped GEMM: expected rows per group (0 = m)");
  cmd->add_flag("--psum", args->psum,
                "M-grouped contiguous in DeepGEMM's prefix-sum layout (group ends on the device; --m x --num-groups "
                "rows of room)");
  cmd->add_option("--num-sms", args->num_sms, "Persistent CTAs (0 = every SM of --hw)");
  cmd->add_flag("--with-c", args->with_c, "D = C + A*B (C read once)");
  cmd->add_option("--suite", args->suite, "Plan every shape of a suite: deepseek, decode, grouped, masked or all");
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->add_option("--top", args->top, "Also list the best N distinct tile shapes")->capture_default_str();
  cmd->add_option("--op", args->op,
                  "gemm, hc_prenorm (tf32_hc_prenorm_gemm: A bf16 [m,k], B fp32 [n,k]), wq (weight-only quantised "
                  "GEMM: A --dtype bf16/fp16 [m,k], W [n,k] packed as --weight), fp8_fp4 (A e4m3, B FP4; --mx: MXFP8), "
                  "mqa_logits (fp8_mqa_logits: --m "
                  "query rows, --n KV tokens) or paged_mqa_logits (fp8_paged_mqa_logits: --batch items of --context "
                  "tokens)")
      ->capture_default_str();
  cmd->add_option("--weight", args->weight, "wq: the weight's format, int4, int8 or mxfp4")->capture_default_str();
  cmd->add_option("--group-size", args->group_size, "wq: int4's group size (32, 64 or 128)")->capture_default_str();
  cmd->add_flag("--zeros", args->zeros, "wq: int4 with zero points (else symmetric, zero point 8)");
  cmd->add_option("--num-splits", args->num_splits, "hc_prenorm: the caller's K split (default: the library's)");
  cmd->add_option("--batch", args->batch, "paged_mqa_logits: batch items")->capture_default_str();
  cmd->add_flag("--mx", args->mx, "fp8_fp4: MXFP8 (B e4m3, 1x32 UE8M0 scales on both operands) instead of FP4 B");
  add_mqa_options(cmd, args->mqa);
  cmd->callback([args] { run_plan(*args); });
});

}  // namespace
}  // namespace tilegemm::cli
