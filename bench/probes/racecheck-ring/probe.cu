// What compute-sanitizer's racecheck makes of a stage ring refilled by cp.async and released through an
// mbarrier. One producer warp copies 64 floats per stage (4-byte cp.async, or st.shared), signals the stage's
// full barrier; consumer warps read every float of it (each lane reads other lanes' copies), then release the
// stage's empty barrier. Modes (argv[1]):
//   0  cp.async; each consumer warp: __syncwarp(), then lane 0 arrives   (correct: what the FP8 kernels did)
//   1  cp.async; every consumer lane arrives                             (correct)
//   2  st.shared + mbarrier.arrive; every consumer lane arrives          (correct)
//   3  cp.async; lane 0 arrives with no __syncwarp()                     (the other lanes' reads are not
//   ordered) 4  mode 0 with one consumer warp
// Build: nvcc -arch=sm_90a -O2 -lineinfo -o ring probe.cu; run: compute-sanitizer --tool racecheck ./ring
// MODE.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
typedef uint64_t u64;
__device__ __forceinline__ uint32_t sa(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(u64* b, uint32_t n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void arrive(u64* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(b)) : "memory");
}
__device__ __forceinline__ void wait(u64* b, uint32_t par) {
  asm volatile(
      "{\n.reg .pred d;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 d, [%0], %1;\n@!d bra W_%=;\n}\n" ::"r"(sa(b)),
      "r"(par)
      : "memory");
}
__device__ __forceinline__ void cp4(void* d, const void* s) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sa(d)), "l"(s) : "memory");
}
__device__ __forceinline__ void cp_arrive(u64* b) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sa(b)) : "memory");
}

constexpr int kStages = 2, kIters = 8, kFloats = 64;
template <int kMode, int kConsumerWarps>
__global__ void ring(const float* src, float* out) {
  __shared__ float buf[kStages][kFloats];
  __shared__ u64 full[kStages], empty[kStages];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr bool kLane0 = kMode == 0 || kMode == 3;
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages; ++s) {
      bar_init(&full[s], 32);
      bar_init(&empty[s], kLane0 ? kConsumerWarps : 32 * kConsumerWarps);
    }
  __syncthreads();
  if (warp == 0) {
    for (int it = 0; it < kIters; ++it) {
      const int s = it % kStages;
      const uint32_t ph = (it / kStages) & 1;
      wait(&empty[s], ph ^ 1);
      for (int c = lane; c < kFloats; c += 32) {
        if (kMode == 2)
          buf[s][c] = src[it * kFloats + c];
        else
          cp4(&buf[s][c], &src[it * kFloats + c]);
      }
      if (kMode == 2)
        arrive(&full[s]);
      else
        cp_arrive(&full[s]);
    }
  } else {
    float acc = 0;
    for (int it = 0; it < kIters; ++it) {
      const int s = it % kStages;
      const uint32_t ph = (it / kStages) & 1;
      wait(&full[s], ph);
      for (int c = 0; c < kFloats; ++c) acc += buf[s][(c + lane) % kFloats] * (c + 1);
      if (kLane0) {
        if (kMode == 0) __syncwarp();
        if (lane == 0) arrive(&empty[s]);
      } else
        arrive(&empty[s]);
    }
    out[threadIdx.x - 32] = acc;
  }
}

template <int kMode, int kWarps>
int run(const float* dsrc, float* dout, const float* hsrc) {
  ring<kMode, kWarps><<<1, 32 * (1 + kWarps)>>>(dsrc, dout);
  float h[32 * kWarps];
  if (cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
    printf("cuda error\n");
    return 1;
  }
  int bad = 0;
  for (int t = 0; t < 32 * kWarps; ++t) {
    double ref = 0;
    int lane = t % 32;
    for (int it = 0; it < kIters; ++it)
      for (int c = 0; c < kFloats; ++c) ref += hsrc[it * kFloats + (c + lane) % kFloats] * (c + 1);
    if (fabs(ref - h[t]) > 1e-3 * fabs(ref) + 1e-3) ++bad;
  }
  printf("mode %d warps %d: %s\n", kMode, kWarps, bad ? "WRONG" : "ok");
  return bad != 0;
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  float hsrc[kIters * kFloats];
  for (int i = 0; i < kIters * kFloats; ++i) hsrc[i] = (i * 37 % 101) / 17.0f;
  float *dsrc, *dout;
  cudaMalloc(&dsrc, sizeof hsrc);
  cudaMalloc(&dout, 64 * sizeof(float));
  cudaMemcpy(dsrc, hsrc, sizeof hsrc, cudaMemcpyHostToDevice);
  switch (mode) {
    case 0:
      return run<0, 2>(dsrc, dout, hsrc);
    case 1:
      return run<1, 2>(dsrc, dout, hsrc);
    case 2:
      return run<2, 2>(dsrc, dout, hsrc);
    case 3:
      return run<3, 2>(dsrc, dout, hsrc);
    case 4:
      return run<0, 1>(dsrc, dout, hsrc);
  }
  return 2;
}
