// Probe: how long the first load of a kernel takes from a cold L2, by TMA against plain loads.
//
// Ablations of the FP8 small-M kernel found it about 1 µs slower than the read of B even when it only streams B
// through its TMA ring (variant F3), also with a single stage (K = 512): 2.94 µs against 1.95. The tensor map's fetch
// was ruled out (variants H1/H2). This probe times, per CTA, one 16-row x 128-byte tile of a 2112 x 7168 e4m3 B
// fetched right after a 256 MiB memset evicted the L2:
//   tma      : one elected thread, cp.async.bulk.tensor (128B swizzle) into shared memory, mbarrier wait
//   ldg      : 128 threads, one 16-byte ld.global each, then __syncthreads
//   cp.async : 128 threads, one 16-byte cp.async (LDGSTS) each, wait_all, __syncthreads
//   bulk     : one thread, 16 non-tensor cp.async.bulk copies of 128 bytes (no tensor map), mbarrier wait
// and prints the median / 10th / 90th percentile over 132 CTAs x 50 launches, in SM cycles (clock64) and in ns
// (globaltimer).
//
// Build here, carry the binary, run on the device:
//   nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++20 bench/probes/first-load-latency/probe.cu -lcuda \
//        -o .exp/first_load_latency
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    auto e = (x);                                                                   \
    if (e != 0) {                                                                   \
      std::printf("%s failed: %d at line %d\n", #x, static_cast<int>(e), __LINE__); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

constexpr int kRows = 2112, kCols = 7168, kBoxRows = 16, kBoxCols = 128;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// mode: 0 tma, 1 ldg, 2 cp.async, 3 bulk
__global__ void __launch_bounds__(128) probe(const __grid_constant__ CUtensorMap map, const uint8_t* b, int mode,
                                             long long* cycles, long long* ns, int* sink) {
  __shared__ __align__(1024) uint8_t tile[kBoxRows * kBoxCols];
  __shared__ __align__(8) unsigned long long bar;
  const int row0 = blockIdx.x * kBoxRows;
  const unsigned bar_addr = smem_u32(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const long long c0 = clock64();
  const unsigned long long t0 = globaltimer();
  if (mode == 0 || mode == 3) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(kBoxRows * kBoxCols)
                   : "memory");
      if (mode == 0) {
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
                "r"(smem_u32(tile)),
            "l"(&map), "r"(0), "r"(row0), "r"(bar_addr)
            : "memory");
      } else {
        for (int r = 0; r < kBoxRows; ++r)
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                           smem_u32(tile + r * kBoxCols)),
                       "l"(b + static_cast<size_t>(row0 + r) * kCols), "r"(kBoxCols), "r"(bar_addr)
                       : "memory");
      }
      mbar_wait(bar_addr, 0);
    }
    __syncthreads();
  } else {
    const int r = threadIdx.x / 8, c = threadIdx.x % 8;  // 16 rows x 8 units of 16 bytes
    const uint8_t* src = b + static_cast<size_t>(row0 + r) * kCols + c * 16;
    if (mode == 1) {
      int4 v;
      asm volatile("ld.global.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src));
      reinterpret_cast<int4*>(tile)[threadIdx.x] = v;
    } else {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(tile + threadIdx.x * 16)), "l"(src)
                   : "memory");
      asm volatile("cp.async.wait_all;" ::: "memory");
    }
    __syncthreads();
  }
  const unsigned long long t1 = globaltimer();
  const long long c1 = clock64();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = c1 - c0;
    ns[blockIdx.x] = static_cast<long long>(t1 - t0);
    sink[blockIdx.x] = tile[threadIdx.x * 7 % sizeof(tile)];
  }
}

int main() {
  CHECK(cuInit(0));
  const int ctas = kRows / kBoxRows;  // 132
  uint8_t* b = nullptr;
  void* flush = nullptr;
  long long *cycles = nullptr, *ns = nullptr;
  int* sink = nullptr;
  const size_t flush_bytes = 256u << 20;
  CHECK(cudaMalloc(&b, static_cast<size_t>(kRows) * kCols));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&cycles, ctas * sizeof(long long)));
  CHECK(cudaMalloc(&ns, ctas * sizeof(long long)));
  CHECK(cudaMalloc(&sink, ctas * sizeof(int)));
  CHECK(cudaMemset(b, 0x38, static_cast<size_t>(kRows) * kCols));

  CUtensorMap map;
  const cuuint64_t dims[2] = {kCols, kRows};
  const cuuint64_t strides[1] = {kCols};
  const cuuint32_t box[2] = {kBoxCols, kBoxRows};
  const cuuint32_t elem_strides[2] = {1, 1};
  CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, b, dims, strides, box, elem_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));

  const char* names[4] = {"tma", "ldg", "cp.async", "bulk"};
  std::printf("first load of a 16x128-byte tile per CTA after a 256 MiB memset, %d CTAs x 50 launches\n", ctas);
  std::printf("%-9s %10s %10s %10s %10s %10s %10s\n", "mode", "cyc p10", "cyc p50", "cyc p90", "ns p10", "ns p50",
              "ns p90");
  for (int round = 0; round < 2; ++round) {
    for (int mode = 0; mode < 4; ++mode) {
      std::vector<long long> all_c, all_n, hc(ctas), hn(ctas);
      for (int launch = 0; launch < 50; ++launch) {
        CHECK(cudaMemsetAsync(flush, launch & 0xff, flush_bytes));
        probe<<<ctas, 128>>>(map, b, mode, cycles, ns, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(hc.data(), cycles, ctas * sizeof(long long), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hn.data(), ns, ctas * sizeof(long long), cudaMemcpyDeviceToHost));
        all_c.insert(all_c.end(), hc.begin(), hc.end());
        all_n.insert(all_n.end(), hn.begin(), hn.end());
      }
      auto pct = [](std::vector<long long>& v, double p) {
        std::sort(v.begin(), v.end());
        return v[static_cast<size_t>(p * (v.size() - 1))];
      };
      std::printf("%-9s %10lld %10lld %10lld %10lld %10lld %10lld\n", names[mode], pct(all_c, 0.1), pct(all_c, 0.5),
                  pct(all_c, 0.9), pct(all_n, 0.1), pct(all_n, 0.5), pct(all_n, 0.9));
    }
  }
  return 0;
}
