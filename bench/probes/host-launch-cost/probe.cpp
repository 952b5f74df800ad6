// Probe: where a cached deep_gemm call's C++ side spends its host time, against what the driver itself costs.
//
// The Python fast path hands a kept plan its pointers; the plan then runs (admits, device scope, the family's
// runner, the JIT kernel's launch, cuLaunchKernelEx). This probe times, per call, medians of back-to-back calls
// in batches of 100 (synchronised between batches, outside the timing):
//   driver floors  : cuLaunchKernelEx of an empty kernel, no attribute / the PDL attribute / a 1 KB parameter
//                    block (a GEMM's tensor maps) with PDL
//   jit launch     : the same empty kernel through CompiledKernel::launch (context check, module slot, attributes)
//   pieces         : cuCtxGetCurrent, cudaGetDevice, env(), current_plan_settings(), LaunchPlan::admits
//   plans          : LaunchPlan::run of BF16 128x256x512 and FP8 1D2D 128x2112x1024 (the host suite's shapes)
//
// Built on the GPU machine against the library (after scripts/gpu-suite's build step):
//   g++ -std=c++20 -O2 -Iinclude -Isrc -Idevice -I.deps/include -I/usr/local/cuda/include \
//       bench/probes/host-launch-cost/probe.cpp build-gpu/libtilegemm_core.a -L/usr/local/cuda/lib64 \
//       -L/usr/local/cuda/lib64/stubs -lnvrtc -lcudart_static -lcuda -lrt -ldl -lpthread -o /tmp/host_launch_cost
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "api/launch_plan.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/jit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    std::exit(1);
  }
}

// Median host ns of one call of fn over `batches` x 100 back-to-back calls, the GPU drained between batches.
double median_ns(const std::function<void()>& fn, int batches = 40) {
  std::vector<double> t;
  fn();
  cudaDeviceSynchronize();
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < 100; ++i) {
      const auto t0 = Clock::now();
      fn();
      t.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    }
    cudaDeviceSynchronize();
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

void row(const char* name, double ns) {
  std::printf("| %s | %.2f |\n", name, ns / 1e3);
}

struct Params1K {
  char bytes[1024];
};

}  // namespace

int main() {
  using namespace tilegemm;
  cudaFree(nullptr);
  CUstream stream = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  jit::KernelSpec empty{"probe_empty_kernel",
                        "struct P { char bytes[1024]; };\n"
                        "extern \"C\" __global__ void tilegemm_kernel(const __grid_constant__ P p) {}\n"};
  const auto kernel = jit::get_kernel(empty);
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  check(cuModuleLoadData(&module, kernel->cubin().data()), "cuModuleLoadData");
  check(cuModuleGetFunction(&function, module, "tilegemm_kernel"), "cuModuleGetFunction");

  Params1K params{};
  void* args[] = {&params};
  auto driver_launch = [&](bool pdl) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig c{};
    c.gridDimX = 132, c.gridDimY = 1, c.gridDimZ = 1;
    c.blockDimX = 384, c.blockDimY = 1, c.blockDimZ = 1;
    c.hStream = stream;
    c.attrs = pdl ? &attr : nullptr;
    c.numAttrs = pdl ? 1 : 0;
    check(cuLaunchKernelEx(&c, function, args, nullptr), "cuLaunchKernelEx");
  };

  std::printf("| per call | µs |\n|---|---:|\n");
  row("cuLaunchKernelEx, empty kernel, 1 KB params, no attribute", median_ns([&] { driver_launch(false); }));
  row("cuLaunchKernelEx, empty kernel, 1 KB params, PDL", median_ns([&] { driver_launch(true); }));
  jit::LaunchConfig jc;
  jc.grid[0] = 132, jc.block[0] = 384, jc.stream = stream, jc.pdl = true;
  row("CompiledKernel::launch, same kernel, PDL", median_ns([&] { kernel->launch(jc, args); }));
  CUcontext ctx = nullptr;
  row("cuCtxGetCurrent", median_ns([&] { cuCtxGetCurrent(&ctx); }));
  int dev = 0;
  row("cudaGetDevice", median_ns([&] { cudaGetDevice(&dev); }));
  row("env()", median_ns([&] { (void)env().generation; }));
  row("current_plan_settings()", median_ns([&] { (void)api::current_plan_settings(); }));

  // The host suite's shapes, on real buffers (contents do not matter to host time).
  auto alloc = [](std::size_t bytes) {
    void* p = nullptr;
    cudaMalloc(&p, bytes);
    cudaMemset(p, 0x3c, bytes);
    return p;
  };
  {
    const int m = 128, n = 256, k = 512;
    void *a = alloc(m * k * 2), *b = alloc(n * k * 2), *d = alloc(m * n * 2);
    const auto va = TensorView::matrix(a, DType::kBFloat16, m, k, k);
    const auto vb = TensorView::matrix(b, DType::kBFloat16, n, k, k);
    const auto vd = TensorView::matrix(d, DType::kBFloat16, m, n, n);
    const api::Plan plan = api::plan_bf16_gemm(va, vb, vd, nullptr, 0);
    const std::uintptr_t ptrs[] = {reinterpret_cast<std::uintptr_t>(a), reinterpret_cast<std::uintptr_t>(b),
                                   reinterpret_cast<std::uintptr_t>(d), 0};
    row("LaunchPlan::admits, BF16", median_ns([&] { (void)plan->admits(ptrs, 0); }));
    row("LaunchPlan::run, BF16 128x256x512", median_ns([&] { plan->run(ptrs, stream); }));
  }
  {
    const int m = 128, n = 2112, k = 1024;
    void *a = alloc(m * k), *b = alloc(n * k), *d = alloc(m * n * 2);
    void *sfa = alloc(m * (k / 128) * 4), *sfb = alloc(((n + 127) / 128) * (k / 128) * 4);
    const auto va = TensorView::matrix(a, DType::kFloat8E4M3, m, k, k);
    const auto vsa = TensorView::matrix(sfa, DType::kFloat32, m, k / 128, k / 128);
    const auto vb = TensorView::matrix(b, DType::kFloat8E4M3, n, k, k);
    const auto vsb = TensorView::matrix(sfb, DType::kFloat32, (n + 127) / 128, k / 128, k / 128);
    const auto vd = TensorView::matrix(d, DType::kBFloat16, m, n, n);
    const api::Plan plan = api::plan_fp8_gemm(va, vsa, vb, vsb, vd, nullptr, false, 0);
    const std::uintptr_t ptrs[] = {reinterpret_cast<std::uintptr_t>(a), reinterpret_cast<std::uintptr_t>(sfa),
                                   reinterpret_cast<std::uintptr_t>(b), reinterpret_cast<std::uintptr_t>(sfb),
                                   reinterpret_cast<std::uintptr_t>(d), 0};
    row("LaunchPlan::run, FP8 1D2D 128x2112x1024", median_ns([&] { plan->run(ptrs, stream); }));
  }
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  return 0;
}
