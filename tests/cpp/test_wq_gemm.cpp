// The weight-only GEMM without a GPU: every kernel variant compiles for sm_90a without spills, the plan follows the
// ledger (fused at small M, dequantise + dense at large M, splits only where tiles leave SMs idle), and every bad
// argument is named before any CUDA call.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "expect_invalid.hpp"
#include "kernels/sm90_wq_gemm.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/weight_quant.hpp"

using namespace tilegemm;

namespace {

struct Packing {
  WeightFormat format;
  int group;
  bool zeros;
  DType act;
};

const Packing kPackings[] = {
    {WeightFormat::kInt4, 32, true, DType::kBFloat16},   {WeightFormat::kInt4, 64, false, DType::kBFloat16},
    {WeightFormat::kInt4, 128, true, DType::kFloat16},   {WeightFormat::kInt4, 128, false, DType::kBFloat16},
    {WeightFormat::kInt8, 0, false, DType::kBFloat16},   {WeightFormat::kInt8, 0, false, DType::kFloat16},
    {WeightFormat::kMxfp4, 32, false, DType::kBFloat16},
};

WeightLayout layout_of(const Packing& p, int n, int k) {
  return make_weight_layout(p.format, n, k, p.group, p.zeros, p.act);
}

class WqGemmCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(WqGemmCodegen, EveryPackingCompilesWithoutSpills) {
  set("DG_JIT_PTXAS_CHECK", "1");
  for (const Packing& p : kPackings) {
    const WeightLayout w = layout_of(p, 4096, 4096);
    for (int block_m : {8, 16, 64}) {
      for (int splits : {1, 2}) {
        WqGemmConfig c;
        c.block_m = block_m, c.stages = 4, c.num_splits = splits;
        const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, DType::kBFloat16, c);
        SCOPED_TRACE(spec.name);
        tilegemm::testing::expect_kernel_compiles(spec);
      }
    }
    const jit::KernelSpec dequant = kernels::sm90_wq_dequant_spec(w);
    SCOPED_TRACE(dequant.name);
    tilegemm::testing::expect_kernel_compiles(dequant);
  }
}

TEST_F(WqGemmCodegen, OutputDtypesCompile) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const WeightLayout w = layout_of(kPackings[0], 4096, 4096);
  for (DType d : {DType::kFloat16, DType::kFloat32}) {
    WqGemmConfig c;
    c.block_m = 16, c.stages = 4, c.num_splits = 1;
    const jit::KernelSpec spec = kernels::sm90_wq_gemm_spec(w, d, c);
    SCOPED_TRACE(spec.name);
    tilegemm::testing::expect_kernel_compiles(spec);
  }
}

}  // namespace
