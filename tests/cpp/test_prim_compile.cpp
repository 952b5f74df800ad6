// Every device primitive header compiles for sm_90a through the JIT (NVRTC, the default compiler), with each
// wrapper instantiated at least once — every wgmma shape of both operand types included — so a PTX typo or a
// template error in a wrapper no kernel uses yet is caught on a machine without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_jit_support.hpp"

namespace tilegemm::jit {
namespace {

using PrimCompile = testing::JitEnvFixture;

constexpr const char* kBody = R"(
using namespace tilegemm;
using namespace tilegemm::prim;

template <int N>
__device__ void bf16_both_majors(u64 a, u64 b, float* d) {
  wgmma_bf16<N, 0, 0>(a, b, d, 1);
  wgmma_bf16<N, 1, 1>(a, b, d, 0);
}
template <int... Ns>
__device__ void every_bf16(int n, u64 a, u64 b, float* d) { ((n == Ns ? bf16_both_majors<Ns>(a, b, d) : void()), ...); }
template <int... Ns>
__device__ void every_e4m3(int n, u64 a, u64 b, float* d) { ((n == Ns ? wgmma_e4m3<Ns>(a, b, d, 1) : void()), ...); }

extern "C" __global__ void __launch_bounds__(384, 1) tilegemm_kernel(const TmaDescriptor* desc, float* out, int sel) {
  __shared__ alignas(1024) u8 smem[4096];
  __shared__ u64 barrier;
  __shared__ StageBarriers<2> stages;
  PipelineState<2> state;
  if (threadIdx.x == 0) {
    mbarrier_init(&barrier, 1);
    stages.init(4);
    fence_barrier_init();
  }
  __syncthreads();
  if (sel == 1) setmaxnreg_inc<240>();
  if (sel == 2) setmaxnreg_dec<40>();
  grid_dependency_wait();
  if (elect_one_sync()) {
    tma_prefetch_descriptor(desc);
    stages.producer_acquire(state);
    tma_load_3d(desc, &stages.inputs_arrived[state.index], smem, 0, 0, 0);
    tma_load_3d_multicast(desc, &stages.inputs_arrived[state.index], smem + 1024, 0, 0, 0, 0x3);
    mbarrier_arrive_expect_tx(&stages.inputs_arrived[state.index], 2048);
    cp_async_4(smem + 2048, out);
    cp_async_mbarrier_arrive_noinc(&stages.inputs_arrived[state.index]);
  }
  stages.consumer_wait(state);
  stages.consumer_release(state.index);
  state.advance();
  mbarrier_arrive_expect_tx(&barrier, 16);
  mbarrier_arrive(&barrier);
  mbarrier_wait(&barrier, 0);
  named_barrier_sync(1, 128);

  u32 r0, r1, r2, r3;
  ldmatrix_x4(smem + 16 * (threadIdx.x % 32), r0, r1, r2, r3);
  stmatrix_x4(smem + 16 * (threadIdx.x % 32), r0, r1, r2, r3);
  stmatrix_x2(smem + 16 * (threadIdx.x % 16), r0, r1);
  st_shared_f32x2(smem + 8 * threadIdx.x, 1.0f, 2.0f);
  fence_proxy_async_shared();
  tma_store_3d(desc, smem, 0, 0, 0);
  tma_reduce_add_3d(desc, smem, 0, 0, 0);
  tma_store_commit();
  tma_store_wait_read<0>();
  tma_store_wait<0>();

  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  const u64 desc_a = make_smem_desc(smem_addr(smem), 0, 1024, SmemSwizzle::k128B);
  u64 desc_b = advance_smem_desc(desc_a, 32);
  compute_before_next_asm(desc_b);
  wgmma_fence();
#pragma unroll
  for (int i = 0; i < 128; ++i) wgmma_fence_operand(d[i]);
  every_bf16<8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184,
             192, 200, 208, 216, 224, 232, 240, 248, 256>(sel, desc_a, desc_b, d);
  every_e4m3<8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184,
             192, 200, 208, 216, 224, 232, 240, 248, 256>(sel, desc_a, desc_b, d);
  wgmma_commit();
  wgmma_wait<0>();
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) acc += d[i];
  fence_acq_rel_gpu();
  grid_dependency_launch_dependents();
  out[threadIdx.x] = acc + pack_bf16x2(acc, 1.0f) + r0 + r1 + r2 + r3 + warp_uniform(threadIdx.x) + ceil_div(sel, 4);
}
)";

TEST_F(PrimCompile, EveryPrimitiveHeaderAndWrapperCompilesForSm90a) {
  namespace fs = std::filesystem;
  const fs::path prim = fs::path(TILEGEMM_DEVICE_INCLUDE_DIR) / "tilegemm" / "prim";
  std::vector<std::string> headers;
  for (const auto& entry : fs::directory_iterator(prim))
    if (entry.path().extension() == ".cuh") headers.push_back(entry.path().filename().string());
  std::sort(headers.begin(), headers.end());
  ASSERT_FALSE(headers.empty()) << "no headers under " << prim;
  KernelSpec spec;
  spec.name = "test_prim_compile";
  for (const auto& h : headers) spec.source += "#include <tilegemm/prim/" + h + ">\n";
  spec.source += kBody;
  try {
    auto kernel = get_kernel(spec);
    EXPECT_GT(kernel->cubin().size(), 4096u);
  } catch (const CompileError& e) {
    FAIL() << "headers: " << fmt::format("{}", fmt::join(headers, ", ")) << "\n" << e.what();
  }
}

}  // namespace
}  // namespace tilegemm::jit
