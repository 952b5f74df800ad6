// Launch plans (src/api/launch_plan.hpp): a factory runs the entry point's checks and keeps what they read; a
// plan admits a later run only on pointers and settings the checks would pass the same way. No GPU needed:
// nothing here runs a kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "api/launch_plan.hpp"
#include "expect_invalid.hpp"
#include "scoped_env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"

using namespace tilegemm;
using api::LaunchPlan;

namespace {

constexpr std::uintptr_t kBase = 0x7f0000000000;  // never dereferenced
constexpr DType kBf16 = DType::kBFloat16, kFp8 = DType::kFloat8E4M3, kFp32 = DType::kFloat32;

TensorView mat(std::uintptr_t ptr, DType t, std::int64_t rows, std::int64_t cols, std::int64_t rs,
               std::int64_t cs = 1) {
  return TensorView::matrix(reinterpret_cast<void*>(ptr), t, rows, cols, rs, cs);
}

struct Dense {
  TensorView a = mat(kBase, kBf16, 256, 512, 512);
  TensorView b = mat(kBase + 0x100000, kBf16, 128, 512, 512);
  TensorView d = mat(kBase + 0x200000, kBf16, 256, 128, 128);
};

}  // namespace

TEST(PlanCache, AdmitsThePointersItWasCheckedWithAndOthersOfTheSameAlignment) {
  const Dense x;
  const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
  ASSERT_EQ(plan->num_tensors(), 4);
  const std::uintptr_t same[] = {kBase, kBase + 0x100000, kBase + 0x200000, 0};
  EXPECT_TRUE(plan->admits(same, 0));
  const std::uintptr_t moved[] = {kBase + 0x40, kBase + 0x9000, kBase + 0x123450, 0};  // all still 16-aligned
  EXPECT_TRUE(plan->admits(moved, 0));
}

TEST(PlanCache, TurnsDownWhatTheChecksReadFromPointers) {
  const Dense x;
  const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
  const std::uintptr_t misaligned[] = {kBase + 8, kBase + 0x100000, kBase + 0x200000, 0};
  EXPECT_FALSE(plan->admits(misaligned, 0));
  const std::uintptr_t null_b[] = {kBase, 0, kBase + 0x200000, 0};
  EXPECT_FALSE(plan->admits(null_b, 0));
  const std::uintptr_t c_given[] = {kBase, kBase + 0x100000, kBase + 0x200000, kBase + 0x300000};
  EXPECT_FALSE(plan->admits(c_given, 0));  // c was absent
  const std::uintptr_t same[] = {kBase, kBase + 0x100000, kBase + 0x200000, 0};
  EXPECT_FALSE(plan->admits(same, 64));  // checked for every SM, run asked for 64
}

TEST(PlanCache, CAsDIsADifferentRunFromASeparateC) {
  const Dense x;
  const TensorView c = mat(kBase + 0x300000, kBf16, 256, 128, 128);
  const auto separate = api::plan_bf16_gemm(x.a, x.b, x.d, &c, 0);
  const std::uintptr_t in_place[] = {kBase, kBase + 0x100000, kBase + 0x200000, kBase + 0x200000};
  const std::uintptr_t apart[] = {kBase, kBase + 0x100000, kBase + 0x200000, kBase + 0x500000};
  EXPECT_FALSE(separate->admits(in_place, 0));
  EXPECT_TRUE(separate->admits(apart, 0));
  const auto aliased = api::plan_bf16_gemm(x.a, x.b, x.d, &x.d, 0);
  EXPECT_TRUE(aliased->admits(in_place, 0));
  EXPECT_FALSE(aliased->admits(apart, 0));
}

TEST(PlanCache, TurnsDownRunsAfterASettingChanged) {
  const Dense x;
  const std::uintptr_t same[] = {kBase, kBase + 0x100000, kBase + 0x200000, 0};
  {
    const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
    ASSERT_TRUE(plan->admits(same, 0));
    reload_env();  // the DG_* settings may have changed
    EXPECT_FALSE(plan->admits(same, 0));
  }
  // set_deterministic cannot be undone (the switch then ignores DG_DETERMINISTIC for good): in a child
  // process.
  EXPECT_EXIT(
      {
        const bool was = is_deterministic();
        const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
        set_deterministic(!was);
        const bool turned_down = !plan->admits(same, 0);
        set_deterministic(was);
        std::exit(plan->desc.deterministic == was && turned_down && plan->admits(same, 0) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  {
    const test_util::ScopedEnv scheme("TILEGEMM_GEMM_SCHEME", "stream-k");
    const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
    EXPECT_TRUE(plan->admits(same, 0));
  }  // the scope's end reloads the environment again
}

TEST(PlanCache, FactoriesRunTheEntryPointsChecks) {
  const Dense x;
  test_util::expect_invalid([&] { api::plan_bf16_gemm(mat(kBase, kFp32, 256, 512, 512), x.b, x.d, nullptr, 0); }, "a");
  test_util::expect_invalid([&] { api::plan_bf16_gemm(x.a, x.b, mat(kBase, kBf16, 256, 128, 1, 256), nullptr, 0); },
                            "d");
  // FP8: row-major per-token scales are accepted; a scale pointer that is not 4-byte aligned is not.
  const TensorView a = mat(kBase, kFp8, 256, 512, 512), b = mat(kBase + 0x100000, kFp8, 256, 512, 512);
  const TensorView sfa = mat(kBase + 0x200000, kFp32, 256, 4, 4), sfb = mat(kBase + 0x300000, kFp32, 2, 4, 4);
  const TensorView d = mat(kBase + 0x400000, kBf16, 256, 256, 256);
  const auto plan = api::plan_fp8_gemm(a, sfa, b, sfb, d, nullptr, false, 0);
  EXPECT_EQ(plan->num_tensors(), 6);
  test_util::expect_invalid(
      [&] { api::plan_fp8_gemm(a, mat(kBase + 0x200002, kFp32, 256, 4, 4), b, sfb, d, nullptr, false, 0); }, "sfa");
  test_util::expect_invalid([&] { api::plan_fp8_gemm(a, sfa, b, sfb, d, &d, false, 0); },
                            "c");  // 1D2D has no C
  // A scale pointer 4 bytes off its planned alignment is a different run (the checks must see it).
  const std::uintptr_t moved_sfa[] = {kBase, kBase + 0x200004, kBase + 0x100000, kBase + 0x300000, kBase + 0x400000, 0};
  EXPECT_FALSE(plan->admits(moved_sfa, 0));
}

TEST(PlanCache, BatchReducedPlansCheckEinsumsOperands) {
  // einsum 'bmk,bnk->mn': a [s, m, k], b [s, n, k] K-major bf16; d [m, n]; K walked through the batches.
  auto bat = [](std::uintptr_t p, DType t, std::int64_t s, std::int64_t rows, std::int64_t cols) {
    return TensorView::batched(reinterpret_cast<void*>(p), t, s, rows, cols, rows * cols, cols);
  };
  const TensorView a = bat(kBase, kBf16, 129, 128, 128), b = bat(kBase + 0x1000000, kBf16, 129, 384, 128);
  const TensorView d = mat(kBase + 0x2000000, kFp32, 128, 384, 384);
  const auto plan = api::plan_bf16_batch_reduced_gemm(a, b, d, &d, 0);
  EXPECT_EQ(plan->desc.type, GemmType::kBatchReduced);
  EXPECT_EQ(plan->desc.k, 129 * 128);
  EXPECT_EQ(plan->desc.num_groups, 129);
  EXPECT_TRUE(plan->desc.with_c);
  test_util::expect_invalid([&] { api::plan_bf16_batch_reduced_gemm(a, bat(kBase, kBf16, 128, 384, 128), d, &d, 0); },
                            "b");  // batches
  test_util::expect_invalid(
      [&] { api::plan_bf16_batch_reduced_gemm(a, b, mat(kBase, kFp32, 128, 256, 256), nullptr, 0); }, "d");
  test_util::expect_invalid(
      [&] {
        api::plan_bf16_batch_reduced_gemm(bat(kBase, kBf16, 4, 128, 96), bat(kBase, kBf16, 4, 384, 96), d, &d, 0);
      },
      "k");  // whole 64-wide K blocks per batch
  test_util::expect_invalid([&] { api::plan_bf16_batch_reduced_gemm(mat(kBase, kBf16, 128, 128, 128), b, d, &d, 0); },
                            "a");  // 2-D a
  // No batch (or no K): d = c, or zeros, without a kernel.
  const auto empty =
      api::plan_bf16_batch_reduced_gemm(bat(kBase, kBf16, 0, 128, 128), bat(kBase, kBf16, 0, 384, 128), d, nullptr, 0);
  EXPECT_EQ(empty->work, LaunchPlan::Work::kFill);
}

TEST(PlanCache, EmptyOutputsRunWithoutTheDevice) {
  // M = 0: the plan does nothing at all, so its run needs neither a GPU nor a config.
  const TensorView a = mat(kBase, kBf16, 0, 512, 512), b = mat(kBase, kBf16, 128, 512, 512);
  const TensorView d = mat(kBase, kBf16, 0, 128, 128);
  const auto plan = api::plan_bf16_gemm(a, b, d, nullptr, 0);
  EXPECT_EQ(plan->work, LaunchPlan::Work::kNone);
  const std::uintptr_t pointers[] = {kBase, kBase, kBase, 0};
  EXPECT_NO_THROW(plan->run(pointers, nullptr));
}

TEST(PlanCache, KZeroOnlyFillsAndTheKernelCaseKeepsItsDesc) {
  const TensorView a = mat(kBase, kBf16, 256, 0, 1), b = mat(kBase, kBf16, 128, 0, 1);
  const TensorView d = mat(kBase, kBf16, 256, 128, 128);
  EXPECT_EQ(api::plan_bf16_gemm(a, b, d, nullptr, 0)->work, LaunchPlan::Work::kFill);
  const Dense x;
  const auto plan = api::plan_bf16_gemm(x.a, x.b, x.d, nullptr, 0);
  EXPECT_EQ(plan->work, LaunchPlan::Work::kKernel);
  EXPECT_EQ(plan->desc.m, 256);
  EXPECT_EQ(plan->desc.n, 128);
  EXPECT_EQ(plan->desc.k, 512);
}
