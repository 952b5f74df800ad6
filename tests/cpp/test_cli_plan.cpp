// `tilegemm plan` as a user runs it, on a machine without a GPU: a plan for a shape or a suite (text and
// JSON), and exit status 2 with the argument named for bad input.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

using cli_test::CliResult;

CliResult run_plan(const std::string& args, bool merge_stderr = true) {
  return cli_test::run_cli("plan " + args, "", merge_stderr);
}

void expect_usage_error(const std::string& args, const std::string& mentions) {
  const CliResult r = run_plan(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(mentions), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
}

}  // namespace

TEST(CliPlan, PrintsTheChosenConfigAndItsLedgerNumbers) {
  const CliResult r = run_plan("--m 64 --n 2112 --k 7168 --dtype bf16 --hw h200 --top 3");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* expected : {"config    block=64x", "tiles", "wave", "last wave", "L2->SM", "DRAM", "smem",
                               "accumulator regs", "predicted", "TFLOP/s", "rank"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
}

TEST(CliPlan, JsonForOneShape) {
  const CliResult r = run_plan("--m 4096 --n 7168 --k 2048 --layout tn --out-dtype fp32 --json --top 4", false);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.size(), 1u);
  const auto& plan = j[0];
  EXPECT_NE(plan["problem"].get<std::string>().find("layout=tn"), std::string::npos);
  EXPECT_NE(plan["problem"].get<std::string>().find("d=fp32"), std::string::npos);
  EXPECT_EQ(plan["config"]["block_m"].get<int>() % 64, 0);  // MN-major A
  EXPECT_EQ(plan["config"]["num_math_warpgroups"].get<int>(), 2);
  EXPECT_GT(plan["cost"]["predicted_us"].get<double>(), 0);
  EXPECT_GE(plan["cost"]["tiles"].get<long long>(), 132);
  EXPECT_EQ(plan["top"].size(), 4u);
  EXPECT_EQ(plan["top"][0]["config"], plan["config"]);
  EXPECT_GT(plan["candidates"].get<int>(), plan["legal_candidates"].get<int>());
}

// A scheme other than data-parallel is named: in the text (the config line's split_k is 1 under stream-K) and in
// the JSON config.
TEST(CliPlan, NamesTheScheme) {
  const std::string shape = "--m 64 --n 2112 --k 7168 --dtype bf16 --hw h100-sxm";
  const CliResult plain = run_plan(shape + " --json", false);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(nlohmann::json::parse(plain.output)[0]["config"]["scheme"], "data-parallel");
  EXPECT_EQ(run_plan(shape).output.find("scheme    "), std::string::npos);
  for (const auto& [forced, name] : {std::pair{"stream-k", "stream-K"}, std::pair{"split-k:3", "split-K"}}) {
    const std::string env = std::string("TILEGEMM_GEMM_SCHEME=") + forced;
    const CliResult text = cli_test::run_cli("plan " + shape, env);
    ASSERT_EQ(text.status, 0) << text.output;
    EXPECT_NE(text.output.find(std::string("scheme    ") + name), std::string::npos) << text.output;
    const CliResult json = cli_test::run_cli("plan " + shape + " --json", env, false);
    ASSERT_EQ(json.status, 0) << json.output;
    EXPECT_EQ(nlohmann::json::parse(json.output)[0]["config"]["scheme"], name);
  }
}

TEST(CliPlan, DeepSeekSuite) {
  const CliResult r = run_plan("--suite deepseek --json", false);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.size(), 18u);
  for (const auto& plan : j) EXPECT_GT(plan["cost"]["predicted_tflops"].get<double>(), 0) << plan["problem"];
  const CliResult text = run_plan("--suite grouped");
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("4x m=32768 n=4096 k=7168"), std::string::npos) << text.output;
}

TEST(CliPlan, GroupedAndNumSmsOptions) {
  const CliResult masked =
      run_plan("--m 4096 --n 7168 --k 2048 --gemm-type m_grouped_masked --num-groups 8 --expected-m 64 --json", false);
  ASSERT_EQ(masked.status, 0) << masked.output;
  EXPECT_EQ(nlohmann::json::parse(masked.output)[0]["config"]["block_m"].get<int>(), 64);
  // The MoE layer's GEMM 1 at 512 tokens: a buffer of 36608 rows for 256 experts of ~16 rows each.
  const CliResult psum = run_plan(
      "--m 143 --n 4096 --k 7168 --dtype fp8 --gemm-type m_grouped_contiguous "
      "--num-groups 256 --psum --expected-m 16 --json",
      false);
  ASSERT_EQ(psum.status, 0) << psum.output;
  const auto psum_json = nlohmann::json::parse(psum.output)[0];
  EXPECT_EQ(psum_json["cost"]["tiles"].get<long long>() % 256, 0) << psum.output;  // one m-block per expert
  EXPECT_NE(psum_json["problem"].get<std::string>().find("groups=256 psum expected_m=16"), std::string::npos)
      << psum.output;
  expect_usage_error("--m 64 --n 2112 --k 7168 --psum", "--psum");
  const CliResult sms = run_plan("--m 4096 --n 4096 --k 7168 --num-sms 64 --json", false);
  ASSERT_EQ(sms.status, 0) << sms.output;
  EXPECT_EQ(nlohmann::json::parse(sms.output)[0]["config"]["num_sms"].get<int>(), 64);
}

TEST(CliPlan, BadInputExitsTwoNamingTheArgument) {
  expect_usage_error("--m 64 --n 2112 --k 100", "k: expected a multiple of 8");
  expect_usage_error("--m 64 --n 2112", "--m/--n/--k");
  expect_usage_error("--m 0 --n 2112 --k 7168", "--m");
  expect_usage_error("--m 64 --n 2112 --k 7168 --hw h900", "--hw");
  expect_usage_error("--m 64 --n 2112 --k 7168 --dtype fp16", "--dtype");
  expect_usage_error("--m 64 --n 2112 --k 7168 --dtype nope", "--dtype");
  expect_usage_error("--m 64 --n 2112 --k 7168 --out-dtype fp16", "tilegemm: error: --out-dtype: ");
  expect_usage_error("--m 64 --n 2112 --k 7168 --layout xy", "--layout");
  expect_usage_error("--m 64 --n 2112 --k 7168 --gemm-type dense", "--gemm-type");
  expect_usage_error("--m 64 --n 2112 --k 7168 --num-groups 2", "--num-groups");
  expect_usage_error("--m 64 --n 2112 --k 7168 --num-sms 500", "tilegemm: error: --num-sms: ");
  expect_usage_error("--m 64 --n 2112 --k 7168 --top -1", "--top");
  expect_usage_error("--suite nope", "--suite");
  expect_usage_error("--suite deepseek --m 64", "--suite");
  expect_usage_error("--m 64 --n 2112 --k 7168 --gemm-type k_grouped_contiguous --num-groups 2", "K-grouped");
  expect_usage_error("--m 64 --n 2112 --k 7168 --bogus", "bogus");
}

// `--hw ascend-950dt` printed an sm_90 config for an Ascend part: the heuristics are SM90 only.
TEST(CliPlan, ANonNvidiaPresetIsRefusedNamingHw) {
  const CliResult r = run_plan("--m 64 --n 2112 --k 7168 --hw ascend-950dt");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tilegemm: error: --hw: expected an NVIDIA Hopper preset (h100-sxm, h800, h200, h20)", 0),
            0u)
      << r.output;
  EXPECT_NE(r.output.find("got 'ascend-950dt'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
  EXPECT_EQ(r.output.find("config"), std::string::npos) << r.output;
  EXPECT_EQ(run_plan("--suite deepseek --hw ascend-950dt").status, 2);
}

// --m is rows per group: m * groups wrapped past 2^31 into a wrong M (64 x 1e8 planned m=2105032704) or a
// negative one blamed on "m". The rows of all groups keep the ledger's size contract, naming --num-groups.
TEST(CliPlan, GroupsWhoseRowsPass2To31AreRefusedNamingNumGroups) {
  for (const char* groups : {"100000000", "40000000", "33554432"}) {
    const CliResult r =
        run_plan(std::string("--m 64 --n 7168 --k 2048 --gemm-type m_grouped_contiguous --num-groups ") + groups);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind("tilegemm: error: --num-groups: expected at most 33554431 groups of --m = 64 rows", 0), 0u)
        << r.output;
    EXPECT_NE(r.output.find(std::string("got ") + groups), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_plan("--m 64 --n 7168 --k 2048 --gemm-type m_grouped_contiguous --num-groups 8").status, 0);
}

TEST(CliPlan, PlansFp8WithOneScaleBlockOfKPerStage) {
  const CliResult r = run_plan("--m 4096 --n 7168 --k 2048 --dtype fp8");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("a=fp8 b=fp8 d=bf16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x128 stages="), std::string::npos) << "FP8 stages hold one 128-wide K block\n" << r.output;
}

TEST(CliPlan, PlansInt8WithOneOrTwo128ByteAtomsPerStage) {
  const CliResult r = run_plan("--m 4096 --n 7168 --k 16384 --dtype int8 --hw h200");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("a=int8 b=int8 d=bf16"), std::string::npos) << r.output;
  EXPECT_TRUE(r.output.find("x128 stages=") != std::string::npos || r.output.find("x256 stages=") != std::string::npos)
      << r.output;
  // int8 x int8 has a bf16 D without C only.
  const CliResult fp32 = run_plan("--m 64 --n 2112 --k 7168 --dtype int8 --out-dtype fp32");
  EXPECT_EQ(fp32.status, 2) << fp32.output;
  EXPECT_NE(fp32.output.find("--out-dtype: expected bf16 D"), std::string::npos) << fp32.output;
}

TEST(CliPlan, RaggedBf16ShowsTheSwappedConfig) {
  // 257 tokens: three 128-row blocks, the last holding one, against two token tiles of the swapped kernel.
  const CliResult text = run_plan("--m 257 --n 24576 --k 1536 --top 2");
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find(" swap_ab\n"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(" swap "), std::string::npos) << text.output;  // the ranked list marks swapped tiles
  const auto j = nlohmann::json::parse(run_plan("--m 257 --n 24576 --k 1536 --json", false).output);
  EXPECT_TRUE(j[0]["config"]["swap_ab"].get<bool>());
  EXPECT_EQ(j[0]["cost"]["tiles"].get<long long>() % (24576 / j[0]["config"]["block_m"].get<int>()), 0);
  const auto plain = nlohmann::json::parse(run_plan("--m 4096 --n 24576 --k 1536 --json", false).output);
  EXPECT_FALSE(plain[0]["config"]["swap_ab"].get<bool>());
}

TEST(CliPlan, HcPrenormShowsTheSplitAndItsModel) {
  const CliResult text = run_plan("--op hc_prenorm --m 8192 --n 24 --k 28672");
  ASSERT_EQ(text.status, 0) << text.output;
  for (const char* expected : {"tf32_hc_prenorm_gemm", "splits=1", "grid=128", "floor", "model"})
    EXPECT_NE(text.output.find(expected), std::string::npos) << expected << "\n" << text.output;
  const CliResult json = run_plan("--op hc_prenorm --m 13 --n 24 --k 7168 --json", false);
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["op"], "tf32_hc_prenorm_gemm");
  EXPECT_GT(j["num_splits"].get<int>(), 1);
  EXPECT_TRUE(j["reduce_in_kernel"].get<bool>());
  EXPECT_EQ(j["block_m"], 16);
  EXPECT_EQ(j["num_splits"].get<int>() % j["cluster"].get<int>(), 0);  // the launch's clusters divide the splits
  EXPECT_EQ(nlohmann::json::parse(
                run_plan("--op hc_prenorm --m 13 --n 24 --k 7168 --num-splits 16 --json", false).output)["num_splits"],
            16);
  expect_usage_error("--op hc_prenorm --m 13 --n 20 --k 7168", "n: expected 8, 16, 24 or 32");
  expect_usage_error("--op hc_prenorm --m 13 --n 24 --k 7168 --num-splits 0", "--num-splits");
  expect_usage_error("--op attention --m 13 --n 24 --k 7168", "--op");
}

TEST(CliPlan, WeightOnlyGemmShowsItsPathAndLedger) {
  const CliResult text = run_plan("--op wq --m 1 --n 4096 --k 4096 --weight int4 --group-size 128");
  ASSERT_EQ(text.status, 0) << text.output;
  for (const char* expected : {"wq_gemm m=1 n=4096 k=4096 int4 g128 bf16", "fused", "block_m=8", "packed floor"})
    EXPECT_NE(text.output.find(expected), std::string::npos) << expected << "\n" << text.output;
  const CliResult json = run_plan("--op wq --m 8192 --n 4096 --k 4096 --weight mxfp4 --json", false);
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["weight"], "mxfp4");
  EXPECT_EQ(j["group_size"], 32);
  EXPECT_EQ(j["path"], "dequantise+dense");
  EXPECT_EQ(j["k_groups"], 1);
  EXPECT_LT(j["dequant_us"].get<double>(), j["fused_us"].get<double>());
  expect_usage_error("--op wq --m 1 --n 4096 --k 4096 --group-size 48", "--group-size: expected 32, 64 or 128");
  expect_usage_error("--op wq --m 1 --n 4096 --k 4096 --weight int2", "--weight");
  expect_usage_error("--op wq --m 1 --n 4096 --k 4096 --weight mxfp4 --dtype fp16", "--dtype");
}

// DeepSeek-V3.2's MQA logits: the launch the heuristics pick and the ledger behind it (floors and bound).
TEST(CliPlan, MqaLogitsShowTheirConfigAndLedger) {
  const CliResult prefill = run_plan("--op mqa_logits --m 2048 --n 65536 --heads 32 --window full --hw h200");
  ASSERT_EQ(prefill.status, 0) << prefill.output;
  for (const char* expected :
       {"fp8_mqa_logits seq_len=2048 seq_len_kv=65536 h=32", "block_q=4", "floors: mma", "epilogue", "-> mma-bound"})
    EXPECT_NE(prefill.output.find(expected), std::string::npos) << expected << "\n" << prefill.output;
  const CliResult json = run_plan("--op paged_mqa_logits --batch 4096 --context 8192 --next-n 2 --json", false);
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["op"], "fp8_paged_mqa_logits");
  EXPECT_EQ(j["config"]["partitions"], 132);
  EXPECT_EQ(j["ledger"]["bound"], "dram");
  // 2 · tokens · next_n · H · D.
  EXPECT_DOUBLE_EQ(j["ledger"]["flops"].get<double>(), 2.0 * 4096 * 8192 * 2 * 64 * 128);
  expect_usage_error("--op mqa_logits --m 2048 --n 8192 --heads 48", "--heads");
  expect_usage_error("--op mqa_logits --m 2048 --n 8192 --window diagonal", "--window");
  expect_usage_error("--op mqa_logits --m 2048", "--m/--n");
  expect_usage_error("--op paged_mqa_logits --batch 8", "--context");
  expect_usage_error("--op paged_mqa_logits --batch 8 --context 64 --next-n 3", "--next-n");
  expect_usage_error("--op paged_mqa_logits --batch 8 --context 64 --logits fp16", "--logits");
}

// FP8 x FP4 (and MXFP8): the kernel's token block, stages, split and grid, and the ledger's floors.
TEST(CliPlan, Fp8Fp4ShowsItsConfigAndLedger) {
  const CliResult text = run_plan("--op fp8_fp4 --m 1 --n 2112 --k 7168");
  ASSERT_EQ(text.status, 0) << text.output;
  for (const char* expected :
       {"fp8_fp4_gemm m=1 n=2112 k=7168", "block_m=8", "splits=4", "memory floor", "-> memory-bound"})
    EXPECT_NE(text.output.find(expected), std::string::npos) << expected << "\n" << text.output;
  const CliResult json =
      run_plan("--op fp8_fp4 --m 3 --n 4096 --k 7168 --gemm-type m_grouped_masked --num-groups 32 --json", false);
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["experts"], 32);
  EXPECT_EQ(j["grid"], 64);
  EXPECT_EQ(j["num_splits"], 1);
  EXPECT_EQ(j["k_groups"], 1);  // masked experts run one set of consumer warps
  const CliResult mx = run_plan("--op fp8_fp4 --m 1 --n 2112 --k 7168 --mx");
  EXPECT_NE(mx.output.find("mxfp8_gemm"), std::string::npos) << mx.output;
  expect_usage_error("--op fp8_fp4 --m 1 --n 2112 --k 7100", "--k");
  expect_usage_error("--op fp8_fp4 --m 1 --n 2112 --k 7168 --gemm-type m_grouped_contiguous", "--gemm-type");
  expect_usage_error("--op fp8_fp4 --m 1 --n 2112 --k 7168 --out-dtype fp16", "--out-dtype");
}
