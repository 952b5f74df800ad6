// The JIT end to end on a GPU: a generated kernel compiles, loads and launches through the driver API with a
// cluster dimension (and with the programmatic-dependent-launch attribute), and returns the right values.
#include "gpu_harness.hpp"
#include "tilegemm/jit.hpp"

namespace gpu_test {
namespace {

// Each thread writes blockIdx.x·1000 + its CTA rank in the cluster·100 + the cluster size, so the host can
// check that the cluster shape really reached the hardware.
constexpr const char* kClusterKernel = R"(
extern "C" __global__ void tilegemm_kernel(int* out, int scale) {
  unsigned rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  out[blockIdx.x * blockDim.x + threadIdx.x] = scale * (int)(blockIdx.x * 1000 + rank * 100 + size);
}
)";

std::vector<int> launch_and_read(const tilegemm::jit::LaunchConfig& config, int scale) {
  tilegemm::jit::KernelSpec spec;
  spec.name = "test_cluster_ranks";
  spec.source = kClusterKernel;
  const auto kernel = tilegemm::jit::get_kernel(spec);
  const int total = static_cast<int>(config.grid[0] * config.block[0]);
  int* out = nullptr;
  cuda_check(cudaMalloc(reinterpret_cast<void**>(&out), total * sizeof(int)), "cudaMalloc");
  cuda_check(cudaMemset(out, 0xFF, total * sizeof(int)), "cudaMemset");
  void* args[] = {&out, &scale};
  kernel->launch(config, args);
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<int> host(total);
  cuda_check(cudaMemcpy(host.data(), out, total * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(out);
  return host;
}

TEST(JitLaunch, ClusterDimensionReachesTheKernel) {
  GPU_TEST_REQUIRE_SM90();
  tilegemm::jit::LaunchConfig config;
  config.grid[0] = 8;
  config.block[0] = 64;
  config.cluster[0] = 2;
  const int scale = 3;  // not 1, so a stale or default value cannot pass
  const auto got = launch_and_read(config, scale);
  for (int b = 0; b < 8; ++b)
    for (int t = 0; t < 64; ++t)
      ASSERT_EQ(got[b * 64 + t], scale * (b * 1000 + (b % 2) * 100 + 2)) << "block " << b << " thread " << t;
}

TEST(JitLaunch, PlainAndPdlLaunchesRunWithoutACluster) {
  GPU_TEST_REQUIRE_SM90();
  for (bool pdl : {false, true}) {
    tilegemm::jit::LaunchConfig config;
    config.grid[0] = 3;
    config.block[0] = 32;
    config.pdl = pdl;
    const auto got = launch_and_read(config, 5);
    for (int b = 0; b < 3; ++b) ASSERT_EQ(got[b * 32 + 7], 5 * (b * 1000 + 0 * 100 + 1)) << "pdl " << pdl;
  }
}

}  // namespace
}  // namespace gpu_test
