// Probe: cycles per m64nNk16 bf16 wgmma on one SM and on all 132, issued the way the small-M K loop issues them
// (4 per K block, committed as one group), with one accumulator chain or two, waiting for every group (pending 0)
// or keeping one in flight (pending 1). Written to test whether the fixed ~145 ns per K block of narrow
// data-parallel tiles is the tensor pipe's per-instruction cost. Measured on the H200: it is not — 20 cycles per
// N=16 wgmma with a group in flight, 32 waiting for each, the same on 1 and 132 SMs, two chains no faster; N=256
// reaches the peak (128 cycles, 4096 FLOP/cycle/SM).
//
// Build here and carry the binary (no GPU needed to compile), then run it on the device:
//   nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++20 -I device bench/probes/wgmma_issue_rate.cu \
//        -o .exp/wgmma_issue_rate
#include <cuda_runtime.h>
#include <cstdio>
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/wgmma.cuh"
#include "tilegemm/prim/wgmma_ops.cuh"
using namespace tilegemm;
using namespace tilegemm::prim;

template <int N, int kChains, int kPending>
__global__ void __launch_bounds__(128) probe(int iters, long long* cycles, float* sink) {
  extern __shared__ __align__(1024) u8 smem[];
  const int words = (64 * 64 + N * 64) * 2 / 4;
  for (int i = threadIdx.x; i < words; i += 128) {
    u32 h = static_cast<u32>(i) * 2654435761u + 12345u;
    h ^= h >> 13;
    reinterpret_cast<u32*>(smem)[i] = (h & 0x007f007fu) | 0x3c003c00u;  // bf16 pairs in [1, 2)
  }
  __syncthreads();
  fence_proxy_async_shared();
  const u32 a0 = smem_addr(smem), b0 = smem_addr(smem + 64 * 64 * 2);
  float acc[kChains][N / 2];
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) acc[c][i] = 0.f;
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) wgmma_fence_operand(acc[c][i]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_bf16<N, 0, 0>(make_smem_desc(a0 + kk * 32, 0, 1024, SmemSwizzle::k128B),
                          make_smem_desc(b0 + kk * 32, 0, 1024, SmemSwizzle::k128B), acc[kk % kChains], 1u);
    wgmma_commit();
#pragma unroll
    for (int c = 0; c < kChains; ++c)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) wgmma_fence_operand(acc[c][i]);
    wgmma_wait<kPending>();
  }
  wgmma_wait<0>();
  long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += acc[c][i];
  sink[blockIdx.x * 128 + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int N, int kChains, int kPending>
void run(int ctas, long long* d_cycles, float* d_sink) {
  const int iters = 4000, smem = (64 * 64 + N * 64) * 2;
  auto k = probe<N, kChains, kPending>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  k<<<ctas, 128, smem>>>(iters, d_cycles, d_sink);  // warm-up
  k<<<ctas, 128, smem>>>(iters, d_cycles, d_sink);
  cudaError_t e = cudaDeviceSynchronize();
  long long c[132] = {};
  cudaMemcpy(c, d_cycles, ctas * sizeof(long long), cudaMemcpyDeviceToHost);
  long long mx = 0;
  for (int i = 0; i < ctas; ++i) mx = c[i] > mx ? c[i] : mx;
  std::printf("N=%3d chains=%d pending=%d ctas=%3d: %.1f cycles per wgmma (%.0f FLOP/cycle/SM) %s\n", N, kChains,
              kPending, ctas, double(mx) / (iters * 4.0), 2.0 * 64 * N * 16 * iters * 4 / double(mx),
              e == cudaSuccess ? "" : cudaGetErrorString(e));
}

int main() {
  long long* d_cycles;
  float* d_sink;
  cudaMalloc(&d_cycles, 132 * sizeof(long long));
  cudaMalloc(&d_sink, 132 * 128 * sizeof(float));
  for (int ctas : {1, 132}) {
    run<16, 1, 0>(ctas, d_cycles, d_sink);
    run<16, 2, 0>(ctas, d_cycles, d_sink);
    run<16, 1, 1>(ctas, d_cycles, d_sink);
    run<32, 1, 0>(ctas, d_cycles, d_sink);
    run<64, 1, 0>(ctas, d_cycles, d_sink);
    run<64, 2, 0>(ctas, d_cycles, d_sink);
    run<64, 1, 1>(ctas, d_cycles, d_sink);
    run<128, 1, 0>(ctas, d_cycles, d_sink);
    run<128, 1, 1>(ctas, d_cycles, d_sink);
    run<256, 1, 0>(ctas, d_cycles, d_sink);
    run<256, 1, 1>(ctas, d_cycles, d_sink);
  }
  return 0;
}
