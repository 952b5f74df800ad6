// Probe: can two consumer warpgroups keep the tensor pipe busy while each one promotes? The FP8 1D2D kernel's
// consumer loop, stripped of loads and barriers: per iteration (one K block) each warpgroup runs two 64-row
// sub-blocks, each = four m64n128k32 e4m3 wgmmas into fresh registers, commit, wait, then (if kPromote) 64 FFMAs
// per thread adding them into the fp32 result. Cycles come from clock64, so the SM clock (the card sits at its
// power cap in long GEMMs) does not enter; the pipe's ideal is 64 cycles per m64n128k32 wgmma (8192 FLOP/cycle/SM).
//
// Session 10 question: the promotion-energy probe showed the 256x128 kernel 8% faster without promotion at the
// same SM clock, so the promotion costs issue/latency, not energy. Is that the structure (this probe reproduces
// it) or something else in the kernel (this probe runs at the pipe's rate)?
//
// NOTE: session 10's runs (calls 2-3) read a stale second slot for one-warpgroup runs; their 132-CTA one-warpgroup
// rows are wrong (the one-SM rows and every two-warpgroup row are right). Fixed since.
//
// Build here (no GPU needed), run on the device:
//   nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++20 -I device \
//        bench/probes/fp8-promotion-overlap/probe.cu -o .exp/fp8_promotion_overlap
#include <cuda_runtime.h>
#include <cstdio>
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/wgmma.cuh"
#include "tilegemm/prim/wgmma_ops.cuh"
using namespace tilegemm;
using namespace tilegemm::prim;

constexpr int kN = 128, kSubM = 2;
constexpr int kABytes = kSubM * 2 * 64 * 128, kBBytes = kN * 128;  // two warpgroups' rows, K = 128 bytes

// kMode: 0 no promotion (2 FFMAs keep the results live), 1 the kernel's promotion (64 FFMAs after the wait),
// 2 the same FFMAs on registers no wgmma writes (contention without dependence), 3 each sub-block as two N=64
// groups into the two halves of the registers: wait<1>, promote the first half while the second half's group
// runs, wait<0>, promote the second half.
template <int kWarpgroups, int kMode>
__global__ void __launch_bounds__(128 * kWarpgroups, 1) probe(int iters, long long* cycles, float* sink) {
  extern __shared__ __align__(1024) u8 smem[];
  for (int i = threadIdx.x; i < (kABytes + kBBytes) / 4; i += blockDim.x) {
    u32 h = static_cast<u32>(i) * 2654435761u + 12345u;
    h ^= h >> 13;
    reinterpret_cast<u32*>(smem)[i] = (h & 0x37373737u) | 0x08080808u;  // finite e4m3 of both signs
  }
  __syncthreads();
  fence_proxy_async_shared();
  const int wg = threadIdx.x / 128;
  const u32 a0 = smem_addr(smem) + wg * kSubM * 64 * 128, b0 = smem_addr(smem + kABytes);
  float acc[kSubM][kN / 2], part[kN / 2], other[kN / 2];
#pragma unroll
  for (int s = 0; s < kSubM; ++s)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) acc[s][i] = 0.f;
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) other[i] = threadIdx.x * 1e-3f + i;
  float scale = 1.0f + threadIdx.x * 1e-7f;
  auto desc = [](u32 addr) { return make_smem_desc(addr, 0, 1024, SmemSwizzle::k128B); };
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    scale *= 0.999999f;  // a scale that changes per K block, as sa * sb does
#pragma unroll
    for (int s = 0; s < kSubM; ++s) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) wgmma_fence_operand(part[i]);
      wgmma_fence();
      if constexpr (kMode == 3) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)
            wgmma_e4m3<kN / 2>(desc(a0 + s * 64 * 128 + kk * 32), desc(b0 + half * 64 * 128 + kk * 32),
                               part + half * kN / 4, kk > 0 ? 1u : 0u);
          wgmma_commit();
        }
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) wgmma_fence_operand(part[i]);
        wgmma_wait<1>();
#pragma unroll
        for (int i = 0; i < kN / 4; ++i) acc[s][i] += scale * part[i];
        wgmma_wait<0>();
#pragma unroll
        for (int i = kN / 4; i < kN / 2; ++i) acc[s][i] += scale * part[i];
        continue;
      }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma_e4m3<kN>(desc(a0 + s * 64 * 128 + kk * 32), desc(b0 + kk * 32), part, kk > 0 ? 1u : 0u);
      wgmma_commit();
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) wgmma_fence_operand(part[i]);
      wgmma_wait<0>();
      if constexpr (kMode == 1) {
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) acc[s][i] += scale * part[i];
      } else {
        acc[s][0] += part[0];  // keep the wgmma results live
        acc[s][1] += part[kN / 2 - 1];
        if constexpr (kMode == 2) {
#pragma unroll
          for (int i = 2; i < kN / 2; ++i) acc[s][i] += scale * other[i];
        }
      }
    }
  }
  const long long t1 = clock64();
  float sum = 0.f;
#pragma unroll
  for (int s = 0; s < kSubM; ++s)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) sum += acc[s][i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 2 + wg] = t1 - t0;
}

template <int kWarpgroups, int kMode>
void run(int ctas, long long* d_cycles, float* d_sink) {
  const int iters = 20000, smem = kABytes + kBBytes + 1024;
  auto k = probe<kWarpgroups, kMode>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  k<<<ctas, 128 * kWarpgroups, 200 * 1024>>>(iters / 10, d_cycles, d_sink);  // warm-up (1 CTA per SM)
  k<<<ctas, 128 * kWarpgroups, 200 * 1024>>>(iters, d_cycles, d_sink);
  const cudaError_t e = cudaDeviceSynchronize();
  long long c[2 * 132] = {};
  cudaMemcpy(c, d_cycles, 2 * ctas * sizeof(long long), cudaMemcpyDeviceToHost);
  long long mx = 0;  // the slowest warpgroup; only the slots of the warpgroups this run launched
  for (int i = 0; i < ctas; ++i)
    for (int w = 0; w < kWarpgroups; ++w) mx = c[2 * i + w] > mx ? c[2 * i + w] : mx;
  const double per_iter = double(mx) / iters, ideal = kWarpgroups * kSubM * 4 * 64.0;
  std::printf("warpgroups=%d mode=%d ctas=%3d: %7.1f cycles per K block, %6.1f per wgmma, tensor pipe %5.1f%% %s\n",
              kWarpgroups, kMode, ctas, per_iter, per_iter / (kWarpgroups * kSubM * 4), 100.0 * ideal / per_iter,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
  (void)smem;
}

int main() {
  long long* d_cycles;
  float* d_sink;
  cudaMalloc(&d_cycles, 2 * 132 * sizeof(long long));
  cudaMalloc(&d_sink, 132 * 256 * sizeof(float));
  for (int ctas : {1, 132}) {
    run<1, 0>(ctas, d_cycles, d_sink);
    run<1, 1>(ctas, d_cycles, d_sink);
    run<2, 0>(ctas, d_cycles, d_sink);
    run<2, 1>(ctas, d_cycles, d_sink);
    run<2, 2>(ctas, d_cycles, d_sink);
    run<2, 3>(ctas, d_cycles, d_sink);
  }
  return 0;
}
