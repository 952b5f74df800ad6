// The FP8 MoE layer without a GPU: its four kernels compile for sm_90a without spills, the expert-sorted buffers are
// sized for the worst routing, and every bad argument is named before any kernel runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fake_views.hpp"
#include "kernels/sm90_moe.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/moe.hpp"
#include "tilegemm/moe_params.hpp"

using namespace tilegemm;
using test_util::expect_edit_rejected;
using test_util::expect_invalid;
using test_util::fake_batched;
using test_util::fake_matrix;
using test_util::fake_vector;

namespace {

class MoeCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(MoeCodegen, EveryKernelCompilesWithoutSpills) {
  set("DG_JIT_PTXAS_CHECK", "1");
  std::vector<std::string> names;
  for (auto kernel : {kernels::MoeKernel::kRoute, kernels::MoeKernel::kDispatch, kernels::MoeKernel::kSwigluQuant,
                      kernels::MoeKernel::kCombine}) {
    const jit::KernelSpec spec = kernels::sm90_moe_spec(kernel);
    SCOPED_TRACE(spec.name);
    tilegemm::testing::expect_kernel_compiles(spec, 500);
    names.push_back(spec.name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

// The rows route lays out: each expert's pairs, its segment rounded up to 128 rows.
std::int64_t laid_out_rows(const std::vector<int>& counts) {
  std::int64_t rows = 0;
  for (int c : counts) rows += (c + moe::kRowAlignment - 1) / moe::kRowAlignment * moe::kRowAlignment;
  return rows;
}

TEST(MoeBufferRows, CoversEveryRouting) {
  EXPECT_EQ(moe_buffer_rows(0, 8, 256), 0);
  EXPECT_EQ(moe_buffer_rows(1, 8, 256), 1024);            // 8 pairs, 8 experts padded to 128 rows each
  EXPECT_EQ(moe_buffer_rows(512, 8, 256), 4096 + 32512);  // every expert gets a pair
  EXPECT_EQ(moe_buffer_rows(8192, 8, 256), 65536 + 32512);
  // The worst case is reached: one pair for each of `experts` experts.
  EXPECT_EQ(laid_out_rows(std::vector<int>(32, 1)), moe_buffer_rows(4, 8, 32));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const int experts = 1 + static_cast<int>(rng() % 300), topk = 1 + static_cast<int>(rng() % 8);
    const int tokens = static_cast<int>(rng() % 2000);
    std::vector<int> counts(experts, 0);
    // Skewed routings: most pairs on a few experts, the rest spread.
    for (int i = 0; i < tokens * topk; ++i) ++counts[rng() % 4 == 0 ? rng() % experts : rng() % std::min(experts, 3)];
    ASSERT_LE(laid_out_rows(counts), moe_buffer_rows(tokens, topk, experts)) << tokens << " " << topk << " " << experts;
  }
  expect_invalid([] { moe_buffer_rows(-1, 8, 256); }, "tokens");
  expect_invalid([] { moe_buffer_rows(4, 33, 256); }, "topk");
  expect_invalid([] { moe_buffer_rows(4, 8, 1025); }, "experts");
}

// A valid layer call over fake pointers: 64 tokens, top-4 of 8 experts, H = I = 256.
struct Layer {
  static constexpr int kT = 64, kK = 4, kE = 8, kH = 256, kI = 256, kR = 1280;
  TensorView x = fake_matrix(DType::kBFloat16, kT, kH, kH);
  TensorView topk_idx = fake_matrix(DType::kInt64, kT, kK, kK);
  TensorView topk_weights = fake_matrix(DType::kFloat32, kT, kK, kK);
  Fp8MoeWeights w{fake_batched(DType::kFloat8E4M3, kE, 2 * kI, kH), fake_batched(DType::kFloat32, kE, 2 * kI / 128, 2),
                  fake_batched(DType::kFloat8E4M3, kE, kH, kI), fake_batched(DType::kFloat32, kE, 2, 2)};
  TensorView y = fake_matrix(DType::kBFloat16, kT, kH, kH);
  MoeWorkspace ws{fake_vector(DType::kInt32, kE),
                  fake_matrix(DType::kInt32, kT, kK, kK),
                  fake_matrix(DType::kFloat8E4M3, kR, kH, kH),
                  fake_matrix(DType::kFloat32, kR, kH / 128, 1, kR),
                  fake_matrix(DType::kBFloat16, kR, 2 * kI, 2 * kI),
                  fake_matrix(DType::kFloat8E4M3, kR, kI, kI),
                  fake_matrix(DType::kFloat32, kR, kI / 128, 1, kR),
                  fake_matrix(DType::kBFloat16, kR, kH, kH)};
  void call() const { fp8_moe_layer(x, topk_idx, topk_weights, w, y, ws, false); }
};

TEST(MoeLayerChecks, ValidCallPassesEveryCheck) {
  static_assert(Layer::kR == (Layer::kT * Layer::kK + Layer::kE * 127 + 127) / 128 * 128);
  test_util::expect_checks_pass([] { Layer{}.call(); });
  Layer int32_ids;
  int32_ids.topk_idx.dtype = DType::kInt32;
  test_util::expect_checks_pass([&] { int32_ids.call(); });
  Layer none;  // no tokens: nothing to do, not even a GPU needed
  none.x.shape[0] = none.topk_idx.shape[0] = none.topk_weights.shape[0] = none.y.shape[0] = 0;
  none.ws.row_of.shape[0] = 0;
  EXPECT_NO_THROW(none.call());
}

TEST(MoeLayerChecks, BadArgumentsAreNamed) {
  expect_edit_rejected<Layer>([](Layer& l) { l.x.dtype = DType::kFloat16; }, "x", "bf16");
  expect_edit_rejected<Layer>([](Layer& l) { l.x.strides[0] = 260; }, "x", "16-byte");
  expect_edit_rejected<Layer>([](Layer& l) { l.topk_idx.dtype = DType::kInt8; }, "topk_idx", "int32 or int64");
  expect_edit_rejected<Layer>([](Layer& l) { l.topk_idx.shape[0] = 63; }, "topk_idx", "one row per token");
  expect_edit_rejected<Layer>([](Layer& l) { l.topk_idx.shape[1] = 33; }, "topk_idx", "K in [1, 32]");
  expect_edit_rejected<Layer>([](Layer& l) { l.topk_weights.dtype = DType::kBFloat16; }, "topk_weights", "fp32");
  expect_edit_rejected<Layer>([](Layer& l) { l.topk_weights.strides[0] = 8; }, "topk_weights", "contiguous");
  expect_edit_rejected<Layer>([](Layer& l) { l.w.w1.shape[2] = 384; }, "w1", "H=256");
  expect_edit_rejected<Layer>([](Layer& l) { l.w.w1.shape[0] = 1025; }, "w1", "E in [1, 1024]");
  expect_edit_rejected<Layer>([](Layer& l) { l.w.w2.shape[2] = 128; }, "w2", "I=256");
  expect_edit_rejected<Layer>([](Layer& l) { l.w.w1.shape[1] = 2 * 192; }, "intermediate (half of w1's rows)", "128");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.a1.shape[0] = 1152; }, "a1", "moe_buffer_rows = 1280");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.h1.shape[1] = 256; }, "h1", "[1280, 512]");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.y2.shape[0] = 1408; }, "y2", "[1280, 256]");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.group_end.shape[0] = 7; }, "group_end", "[E=8]");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.row_of.shape[1] = 3; }, "row_of", "[64, 4]");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.sfa1.strides = {2, 1, 0, 0}; }, "sfa1", "MN-major");
  expect_edit_rejected<Layer>([](Layer& l) { l.ws.a2.dtype = DType::kInt8; }, "a2", "fp8");
  expect_edit_rejected<Layer>([](Layer& l) { l.y.shape[1] = 128; }, "y", "[64, 256]");
  expect_edit_rejected<Layer>([](Layer& l) { l.y.strides[0] = 0; }, "y", "do not overlap");
}

TEST(MoeStepChecks, BadArgumentsAreNamed) {
  const Layer l;
  const TensorView x192 = fake_matrix(DType::kBFloat16, 4, 192, 192);
  expect_invalid([&] { moe_dispatch_fp8(x192, l.ws.row_of, l.ws.a1, l.ws.sfa1, false, nullptr); },
                 "hidden (x's columns)", "multiple of 128");
  expect_invalid(
      [&] {
        moe_dispatch_fp8(l.x, l.ws.row_of, l.ws.a1, fake_matrix(DType::kFloat32, 1280, 1, 1, 1280), false, nullptr);
      },
      "sfa", "[1280, 2]");
  expect_invalid([&] { moe_route(l.topk_idx, fake_vector(DType::kInt32, 1025), l.ws.row_of, nullptr); }, "group_end",
                 "E in [1, 1024]");
  expect_invalid([&] { moe_route(l.topk_idx, fake_vector(DType::kInt32, 8, 2), l.ws.row_of, nullptr); }, "group_end",
                 "contiguous");
  expect_invalid(
      [&] {
        moe_swiglu_quant_fp8(fake_matrix(DType::kBFloat16, 1280, 511, 512), l.ws.row_of, l.ws.a2, l.ws.sfa2, false,
                             nullptr);
      },
      "h", "gate | up");
  expect_invalid(
      [&] {
        moe_swiglu_quant_fp8(fake_matrix(DType::kBFloat16, 1152, 512, 512), l.ws.row_of, l.ws.a2, l.ws.sfa2, false,
                             nullptr);
      },
      "h", "as many rows as a");
  expect_invalid([&] { moe_combine(l.ws.y2, l.ws.row_of, fake_matrix(DType::kFloat32, 64, 4, 4, 2), l.y, nullptr); },
                 "topk_weights", "contiguous");
  expect_invalid(
      [&] { moe_combine(l.ws.y2, l.ws.row_of, l.topk_weights, fake_matrix(DType::kBFloat16, 32, 256, 256), nullptr); },
      "y", "[64, 256]");
}

}  // namespace
