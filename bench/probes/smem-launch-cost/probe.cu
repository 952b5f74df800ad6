// Probe: does a kernel that asks for a GEMM's shared memory pay for it at launch, after an L2 flush?
//
// Ablations of the small-M FP8 kernel left 0.6-0.9 µs of its gap to the plain read of B unexplained, and named one
// candidate: our kernel asks for ~213 KB of dynamic shared memory and a 1 KB parameter block, the read kernel for
// neither. The benchmark's flush is a 256 MiB memset, a kernel without shared memory; if the SMs must be drained and
// their L1/shared split reconfigured before a max-shared-memory kernel starts, every small GEMM pays that after a
// kernel that left the split at its default.
//
// One read kernel (every thread streams 16-byte words of B, 132 CTAs x 384 threads: one CTA per SM, as our GEMM
// runs) is timed with shared memory and parameter size as the only differences:
//   read            : no dynamic shared memory
//   read+smem       : the same with 213 KB of dynamic shared memory (unused)
//   read+N B params : no shared memory, an N-byte __grid_constant__ parameter struct (read, or not read)
//   read+smem, warm : as read+smem, but a one-CTA-per-SM empty kernel with the same shared memory runs between the
//                     memset and the timed kernel (its split is then already set); control: the same with 0 smem
// Each again with a 4 KiB memset in place of the flush: is the cost the flush's doing?
// Two clocks per call: CUDA events around the kernel (the benchmark's default) and the kernel's own span, from the
// earliest CTA start to the latest CTA end on %globaltimer (launch cost excluded). Medians over 400 calls.
//
//   nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++20 bench/probes/smem-launch-cost/probe.cu \
//        -o .exp/smem_launch_cost
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

constexpr int kSmemBytes = 213 * 1024;
constexpr int kThreads = 384;

template <int kBytes>
struct Params {  // a parameter block of kBytes (our GEMM's: ~0.5 KB BF16, ~0.8 KB FP8)
  unsigned char bytes[kBytes];
};

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Streams `count` 16-byte words, four loads in flight per thread; records this CTA's start and end time.
__device__ __forceinline__ void read_body(const uint4* __restrict__ data, long long count, int* sink,
                                          unsigned long long* span) {
  const unsigned long long t0 = globaltimer();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < count; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldcs(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = static_cast<int>(acc);
  __syncthreads();
  if (threadIdx.x == 0) {
    span[2 * blockIdx.x] = t0;
    span[2 * blockIdx.x + 1] = globaltimer();
  }
}

__global__ void __launch_bounds__(kThreads)
    read_kernel(const uint4* __restrict__ data, long long count, int* sink, unsigned long long* span) {
  read_body(data, count, sink, span);
}

template <int kBytes, bool kRead>
__global__ void __launch_bounds__(kThreads)
    read_kernel_params(const __grid_constant__ Params<kBytes> p, const uint4* __restrict__ data, long long count,
                       int* sink, unsigned long long* span) {
  if (kRead && p.bytes[threadIdx.x % kBytes] == 0xff) *sink = 1;  // reads the block; never true
  read_body(data, count, sink, span);
}

// The same block kept in global memory, the kernel given its address.
__global__ void __launch_bounds__(kThreads)
    read_kernel_global_block(const unsigned char* block, const uint4* __restrict__ data, long long count, int* sink,
                             unsigned long long* span) {
  if (block[threadIdx.x % 1024] == 0xff) *sink = 1;  // never true
  read_body(data, count, sink, span);
}

__global__ void empty_kernel() {}

struct Timing {
  double events_us, span_us;
};

template <class Launch, class Between>
Timing median(Launch launch, Between between, void* flush, size_t flush_bytes, unsigned long long* span_dev, int sms,
              int reps) {
  std::vector<cudaEvent_t> start(reps), stop(reps);
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventCreate(&start[r]));
    CHECK(cudaEventCreate(&stop[r]));
  }
  for (int r = 0; r < 20; ++r) launch();  // warm-up
  std::vector<double> ev(reps), sp(reps);
  std::vector<unsigned long long> span(2 * sms);
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemsetAsync(flush, 0, flush_bytes));
    between();
    CHECK(cudaEventRecord(start[r]));
    launch();
    CHECK(cudaEventRecord(stop[r]));
    CHECK(cudaEventSynchronize(stop[r]));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start[r], stop[r]));
    ev[r] = ms * 1000.0;
    CHECK(cudaMemcpy(span.data(), span_dev, span.size() * sizeof(span[0]), cudaMemcpyDeviceToHost));
    unsigned long long first = ~0ull, last = 0;
    for (int b = 0; b < sms; ++b) first = std::min(first, span[2 * b]), last = std::max(last, span[2 * b + 1]);
    sp[r] = (last - first) / 1000.0;
    CHECK(cudaEventDestroy(start[r]));
    CHECK(cudaEventDestroy(stop[r]));
  }
  std::sort(ev.begin(), ev.end());
  std::sort(sp.begin(), sp.end());
  return {ev[reps / 2], sp[reps / 2]};
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaFuncSetAttribute(read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const size_t flush_bytes = size_t(256) << 20;
  const size_t max_bytes = size_t(7168) * 16384;
  void *flush = nullptr, *data = nullptr;
  int* sink = nullptr;
  unsigned long long* span = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&data, max_bytes));
  CHECK(cudaMalloc(&sink, sizeof(int)));
  CHECK(cudaMalloc(&span, 2 * sms * sizeof(unsigned long long)));
  CHECK(cudaMemset(data, 0x5a, max_bytes));  // never time on zeros
  unsigned char* global_block = nullptr;
  CHECK(cudaMalloc(&global_block, 1024));
  CHECK(cudaMemset(global_block, 0, 1024));
  const int reps = 400;
  const auto* words = static_cast<const uint4*>(data);

  std::printf(
      "| before each call | B bytes (fp8 N x K) | variant | events µs | span µs | events - span µs |\n"
      "|---|---|---|---:|---:|---:|\n");
  struct Shape {
    int n, k;
  };
  for (const size_t before_bytes : {flush_bytes, size_t(4096)})
    for (const Shape s : {Shape{2112, 7168}, Shape{2112, 512}}) {
      const long long count = static_cast<long long>(s.n) * s.k / 16;
      const char* before = before_bytes == flush_bytes ? "256 MiB memset (L2 flush)" : "4 KiB memset (no flush)";
      auto row = [&](const char* name, Timing t) {
        std::printf("| %s | %d x %d | %s | %.2f | %.2f | %.2f |\n", before, s.n, s.k, name, t.events_us, t.span_us,
                    t.events_us - t.span_us);
      };
      auto nothing = [] {};
      auto read_with = [&](int smem) {
        return [&, smem] { read_kernel<<<sms, kThreads, smem>>>(words, count, sink, span); };
      };
      row("read", median(read_with(0), nothing, flush, before_bytes, span, sms, reps));
      row("read+smem", median(read_with(kSmemBytes), nothing, flush, before_bytes, span, sms, reps));
      auto params_row = [&]<int kBytes, bool kRead>() {
        char name[64];
        std::snprintf(name, sizeof(name), "read+%d B params%s", kBytes, kRead ? "" : " (unread)");
        const Params<kBytes> p{};
        row(name, median([&] { read_kernel_params<kBytes, kRead><<<sms, kThreads>>>(p, words, count, sink, span); },
                         nothing, flush, before_bytes, span, sms, reps));
      };
      params_row.template operator()<32, true>();
      params_row.template operator()<64, true>();
      params_row.template operator()<96, true>();
      params_row.template operator()<128, true>();
      params_row.template operator()<192, true>();
      params_row.template operator()<256, true>();
      params_row.template operator()<1024, true>();
      params_row.template operator()<1024, false>();
      row("read+1024 B block in global memory (pointer param)",
          median([&] { read_kernel_global_block<<<sms, kThreads>>>(global_block, words, count, sink, span); }, nothing,
                 flush, before_bytes, span, sms, reps));
      if (before_bytes == flush_bytes)
        row("read+smem, warm (empty smem kernel between)",
            median(
                read_with(kSmemBytes), [&] { empty_kernel<<<sms, kThreads, kSmemBytes>>>(); }, flush, before_bytes,
                span, sms, reps));
    }
  CHECK(cudaGetLastError());
  return 0;
}
