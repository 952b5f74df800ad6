// The MQA-logits operators' ledger (tilegemm/mqa_ledger.hpp): FLOPs and bytes as the operators define them, the
// three floors and the bound, and each bad argument named.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"
#include "tilegemm/mqa_ledger.hpp"

using namespace tilegemm;

namespace {
const HardwareModel kH200 = hardware_preset("h200");
}

TEST(MqaLedger, VisiblePairsOfDeepGemmsTestWindows) {
  EXPECT_DOUBLE_EQ(mqa_visible_pairs(4, 6, true), 2 + 3 + 4 + 5);  // row i: [0, i + 6 - 4)
  EXPECT_DOUBLE_EQ(mqa_visible_pairs(4, 6, false), 24);
  EXPECT_DOUBLE_EQ(mqa_visible_pairs(8192, 8192, true), 8191.0 * 8192 / 2);
  EXPECT_DOUBLE_EQ(mqa_visible_pairs(0, 6, true), 0);
  test_util::expect_invalid([] { mqa_visible_pairs(-1, 6, true); }, "seq_len");
}

TEST(MqaLedger, PrefillCountsLogitsAsTheyAreWritten) {
  const double visible = mqa_visible_pairs(2048, 65536, false);
  const MqaLedger clean = mqa_logits_ledger(2048, 65536, 32, 128, visible, 0, true, DType::kFloat32, kH200);
  EXPECT_DOUBLE_EQ(clean.flops, 2.0 * visible * 32 * 128);
  EXPECT_DOUBLE_EQ(clean.accumulators, visible * 32);
  EXPECT_DOUBLE_EQ(clean.logit_bytes, 2048.0 * 65536 * 4);
  // q, weights and the windows' ends per row, KV values and scales once, then the logits.
  EXPECT_DOUBLE_EQ(clean.dram_bytes, 2048.0 * 32 * 132 + 8.0 * 2048 + 65536.0 * 132 + clean.logit_bytes);
  EXPECT_DOUBLE_EQ(clean.kv_stream_bytes, visible / 4 * 132);  // 4 rows a block at 32 heads
  EXPECT_EQ(clean.bound, "mma");
  EXPECT_DOUBLE_EQ(clean.floor_us(), clean.mma_floor_us);
  EXPECT_GT(clean.mma_floor_us, clean.epilogue_floor_us);
  // Without clean_logits only the windows are written; bf16 logits are half the bytes.
  const double causal = mqa_visible_pairs(2048, 65536, true);
  const MqaLedger windows = mqa_logits_ledger(2048, 65536, 32, 128, causal, 0, false, DType::kBFloat16, kH200);
  EXPECT_DOUBLE_EQ(windows.logit_bytes, causal * 2);
  // At 32-dim heads the epilogue outweighs the tensor cores.
  EXPECT_EQ(mqa_logits_ledger(2048, 65536, 64, 32, visible, 0, false, DType::kFloat32, kH200).bound, "epilogue");
}

TEST(MqaLedger, DecodeReadsEachTokenOnce) {
  const MqaLedger l = paged_mqa_logits_ledger(4096, 2, 64, 4096.0 * 8192, DType::kFloat32, kH200);
  const double tokens = 4096.0 * 8192;
  EXPECT_DOUBLE_EQ(l.flops, 2.0 * tokens * 2 * 64 * 128);
  EXPECT_DOUBLE_EQ(l.kv_stream_bytes, tokens * 132);
  EXPECT_DOUBLE_EQ(l.logit_bytes, tokens * 2 * 4);
  EXPECT_DOUBLE_EQ(l.dram_bytes, 4096.0 * 2 * 64 * 132 + l.kv_stream_bytes + l.logit_bytes);
  EXPECT_EQ(l.bound, "dram");
  EXPECT_DOUBLE_EQ(l.dram_floor_us, l.dram_bytes / kH200.hbm_bytes_per_s() * 1e6);
}

TEST(MqaLedger, BadArgumentsAreNamed) {
  test_util::expect_invalid([] { mqa_logits_ledger(8, 8, 48, 128, 8, 0, true, DType::kFloat32, kH200); }, "num_heads");
  test_util::expect_invalid([] { mqa_logits_ledger(8, 8, 64, 96, 8, 0, true, DType::kFloat32, kH200); }, "head_dim");
  test_util::expect_invalid([] { mqa_logits_ledger(8, 8, 64, 128, 65, 0, true, DType::kFloat32, kH200); }, "visible");
  test_util::expect_invalid([] { mqa_logits_ledger(8, 8, 64, 128, 8, 0, true, DType::kFloat16, kH200); },
                            "logits_dtype");
  test_util::expect_invalid([] { paged_mqa_logits_ledger(8, 3, 64, 64, DType::kFloat32, kH200); }, "next_n");
  test_util::expect_invalid([] { paged_mqa_logits_ledger(8, 1, 64, -1, DType::kFloat32, kH200); }, "sum_context");
  test_util::expect_invalid([] { paged_mqa_logits_ledger(8, 1, 64, 64, DType::kFloat32, HardwareModel{}); }, "hw");
}
