// Every JIT rung of the ladder (0-3) compiles for sm_90a through NVRTC on a machine without a GPU, and
// ptxas reports no spills, stack frame or local memory (DG_JIT_PTXAS_CHECK).
#include <gtest/gtest.h>

#include <set>

#include "expect_invalid.hpp"
#include "ladder/ladder.hpp"
#include "test_jit_support.hpp"

namespace tilegemm::jit {
namespace {

using LadderCodegen = testing::JitEnvFixture;

TEST_F(LadderCodegen, EveryJitRungCompilesWithoutSpills) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const char* functions[] = {"rung0_naive", "rung1_smem_mma", "rung2_cp_async", "rung3_swizzle_raster"};
  std::set<std::string> names;
  clear_memory_cache();  // a fresh cache directory and no memory hits: each rung really goes through ptxas
  const std::int64_t compiles_before = runtime_stats().compiles;
  for (int rung = 0; rung < ladder::kProductionRung; ++rung) {
    const KernelSpec spec = ladder::rung_kernel_spec(rung);
    SCOPED_TRACE(spec.name);
    EXPECT_TRUE(names.insert(spec.name).second) << "kernel names must be unique per rung";
    EXPECT_NE(spec.source.find(std::string("tilegemm::ladder::") + functions[rung] + "(params)"), std::string::npos);
    EXPECT_NE(spec.source.find(fmt::format("__launch_bounds__({}", ladder::rung_info(rung).threads)),
              std::string::npos);
    std::shared_ptr<const CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
  }
  EXPECT_EQ(runtime_stats().compiles - compiles_before, 4);
}

TEST_F(LadderCodegen, ProductionRungHasNoSpecOfItsOwn) {
  test_util::expect_invalid([] { ladder::rung_kernel_spec(ladder::kProductionRung); }, "rung", "bf16_gemm");
  test_util::expect_invalid([] { ladder::rung_kernel_spec(-1); }, "rung");
}

}  // namespace
}  // namespace tilegemm::jit
