// What the benchmark's timer allows at small M: the time of a kernel that does nothing, and of one that only reads
// a GEMM's B operand (the bytes that set the HBM floor of the M <= 128 DeepSeek shapes), measured the way
// `tilegemm bench` and triton.testing.do_bench measure a GEMM: a 256 MiB memset before each call (the L2 flush),
// CUDA events around the call, the median of many calls. If reading B alone cannot reach 70% of the ledger's floor
// under this timer, no GEMM on that shape can (issue #7's bar).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o probe probe.cu && ./probe        (prints a Markdown table)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

__global__ void empty_kernel() {}

// Streams `count` 16-byte words: each thread keeps kUnroll independent loads in flight per step, and the grid
// strides over the buffer. The sum is written only if it equals a value it never has (keeps the loads alive).
template <int kUnroll>
__global__ void __launch_bounds__(512) read_kernel(const uint4* __restrict__ data, long long count, int* sink) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldcs(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = static_cast<int>(acc);
}

template <class Launch>
double median_us(Launch launch, void* flush, size_t flush_bytes, int reps) {
  std::vector<cudaEvent_t> start(reps), stop(reps);
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventCreate(&start[r]));
    CHECK(cudaEventCreate(&stop[r]));
  }
  for (int r = 0; r < 20; ++r) launch();  // warm-up
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemsetAsync(flush, 0, flush_bytes));
    CHECK(cudaEventRecord(start[r]));
    launch();
    CHECK(cudaEventRecord(stop[r]));
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<double> us(reps);
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start[r], stop[r]));
    us[r] = ms * 1000.0;
    CHECK(cudaEventDestroy(start[r]));
    CHECK(cudaEventDestroy(stop[r]));
  }
  std::sort(us.begin(), us.end());
  return us[reps / 2];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t flush_bytes = size_t(256) << 20;
  const size_t max_bytes = size_t(7168) * 16384 * 2;  // the largest B: 64x7168x16384 bf16
  void *flush = nullptr, *data = nullptr;
  int* sink = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&data, max_bytes));
  CHECK(cudaMalloc(&sink, sizeof(int)));
  CHECK(cudaMemset(data, 0x5a, max_bytes));  // never time on zeros
  const int reps = 1000;

  std::printf("| kernel | grid | median µs (events, 256 MiB memset before each call) |\n|---|---:|---:|\n");
  for (int grid : {1, sms}) {
    const double t = median_us([&] { empty_kernel<<<grid, 384>>>(); }, flush, flush_bytes, reps);
    std::printf("| empty | %d x 384 | %.2f |\n", grid, t);
  }

  struct Shape {
    int n, k;
  };
  const Shape shapes[] = {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
  std::printf(
      "\nRead B only (N x K elements; fp8 = 1 byte, bf16 = 2), best of several grids; floor = bytes / 4814 GB/s "
      "(the ledger's); %% floor = floor / median.\n\n");
  std::printf(
      "| B (N x K) | dtype | MB | median µs | GB/s | %% floor | best grid |\n|---|---|---:|---:|---:|---:|---|\n");
  for (const Shape& s : shapes)
    for (int bytes_per : {1, 2}) {
      const size_t bytes = size_t(s.n) * s.k * bytes_per;
      const long long count = static_cast<long long>(bytes / 16);
      double best = 1e30;
      int best_blocks = 0, best_threads = 0;
      for (int blocks_per_sm : {1, 2, 4})
        for (int threads : {256, 512}) {
          const int grid = sms * blocks_per_sm;
          const double t =
              median_us([&] { read_kernel<4><<<grid, threads>>>(static_cast<const uint4*>(data), count, sink); }, flush,
                        flush_bytes, reps / 4);
          if (t < best) best = t, best_blocks = blocks_per_sm, best_threads = threads;
        }
      const double floor_us = bytes / 4814e3;
      std::printf("| %d x %d | %s | %.1f | %.2f | %.0f | %.0f%% | %d/SM x %d |\n", s.n, s.k,
                  bytes_per == 1 ? "fp8" : "bf16", bytes / 1e6, best, bytes / best / 1e3, 100.0 * floor_us / best,
                  best_blocks, best_threads);
    }
  CHECK(cudaGetLastError());
  return 0;
}
