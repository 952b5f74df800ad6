// Programmatic dependent launch without a GPU: the setting (DG_ENABLE_PDL, tilegemm::set_pdl) and the kernels'
// side of the contract. A GEMM launched with PDL may start before the previous kernel ends, so every GEMM kernel
// must wait (griddepcontrol.wait) before touching a tensor; tests/gpu/test_pdl.cpp checks the results on a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/sm90_fp8_gemm.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {
namespace {

// Each ctest case runs in its own process, so set_pdl's override starts unset here.
TEST(PdlSetting, EnvironmentSetsTheDefaultAndSetPdlOverridesIt) {
  {
    const test_util::ScopedEnv off("DG_ENABLE_PDL", nullptr);
    EXPECT_FALSE(env().pdl);
    EXPECT_FALSE(is_pdl_enabled()) << "off by default, as DeepGEMM's set_pdl";
  }
  {
    const test_util::ScopedEnv on("DG_ENABLE_PDL", "1");
    EXPECT_TRUE(is_pdl_enabled());
    set_pdl(false);
    EXPECT_FALSE(is_pdl_enabled()) << "set_pdl beats the variable";
  }
  set_pdl(true);
  EXPECT_TRUE(is_pdl_enabled());
  set_pdl(false);
  EXPECT_FALSE(is_pdl_enabled());
}

TEST(PdlSetting, MalformedVariableNamesItself) {
  const test_util::ScopedEnv restore("DG_ENABLE_PDL", nullptr);
  ::setenv("DG_ENABLE_PDL", "sometimes", 1);  // not through ScopedEnv: its reload would throw here
  try {
    read_env_from_process();
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "DG_ENABLE_PDL");
  }
  ::unsetenv("DG_ENABLE_PDL");
}

class PdlCodegen : public testing::JitEnvFixture {};

std::string kernel_ptx(const jit::KernelSpec& spec) {
  return testing::read_text(std::filesystem::path(jit::get_kernel(spec)->cubin_path()).parent_path() / "kernel.ptx");
}

// The wait in every GEMM kernel family (the selector's small-M picks, which
// PDL is for, and a large M-grouped one).
TEST_F(PdlCodegen, GemmKernelsWaitForThePreviousKernel) {
  set("DG_JIT_DUMP_PTX", "1");
  const HardwareModel hw = hardware_preset("h200");
  for (const DType dtype : {DType::kBFloat16, DType::kFloat8E4M3})
    for (const GemmType type : {GemmType::kNormal, GemmType::kMGroupedMasked}) {
      GemmDesc desc;
      desc.type = type;
      desc.m = 64, desc.n = 2112, desc.k = 7168;
      desc.num_groups = type == GemmType::kNormal ? 1 : 4;
      desc.expected_m = type == GemmType::kNormal ? 0 : 64;
      desc.a_dtype = desc.b_dtype = dtype;
      const GemmConfig config = select_config(desc, hw);
      const jit::KernelSpec spec = dtype == DType::kBFloat16 ? kernels::sm90_bf16_gemm_spec(desc, config)
                                                             : kernels::sm90_fp8_gemm_spec(desc, config);
      SCOPED_TRACE(spec.name);
      const std::string ptx = kernel_ptx(spec);
      ASSERT_NE(ptx.find(".entry " + spec.entry), std::string::npos);
      const auto wait = ptx.find("griddepcontrol.wait");
      ASSERT_NE(wait, std::string::npos);
      // Nothing before the wait reads a tensor through TMA or writes one, nor copies FP8 scales (cp.async).
      EXPECT_LT(wait, ptx.find("cp.async.bulk.tensor"));
      if (dtype == DType::kFloat8E4M3) EXPECT_LT(wait, ptx.find("cp.async.ca"));
      // No early release of the next launch: measured slower (prim::pdl_prologue_done says where).
      EXPECT_EQ(ptx.find("griddepcontrol.launch_dependents"), std::string::npos);
    }
}

}  // namespace
}  // namespace tilegemm
