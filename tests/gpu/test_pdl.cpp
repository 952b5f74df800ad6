// Programmatic dependent launch (tilegemm::set_pdl): a GEMM launched with PDL may start while the previous kernel
// in the stream still runs, so it must wait for that kernel before it reads its operands. Each test overwrites A
// with garbage, then runs a "late writer" that lets dependents launch at once (griddepcontrol.launch_dependents),
// spins for 200 µs and only then restores A, and then the GEMM with PDL on the same stream. A GEMM that read A
// before its predecessor finished would multiply the garbage; the harness checks D against the float64 reference
// of the restored A.
#include <array>
#include <functional>
#include <memory>

#include "dense_case.hpp"
#include "fp8_harness.hpp"
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/jit.hpp"

namespace gpu_test {
namespace {

constexpr const char* kLateWriter = R"(
extern "C" __global__ void tilegemm_kernel(const uint4* src, uint4* dst, long long words, long long spin_ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < (unsigned long long)spin_ns);
  const long long stride = gridDim.x * (long long)blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words; i += stride) dst[i] = src[i];
}
)";

constexpr long long kSpinNs = 200000;

// Copies `bytes` (a multiple of 16) from `src` to `dst` on `stream` after kSpinNs, having let a PDL launch that
// follows it start at once. One CTA: the GEMM's CTAs fit on every SM beside it.
void late_write(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  tilegemm::jit::KernelSpec spec;
  spec.name = "test_pdl_late_writer";
  spec.source = kLateWriter;
  const auto kernel = tilegemm::jit::get_kernel(spec);
  long long words = static_cast<long long>(bytes / 16), spin = kSpinNs;
  void* args[] = {&src, &dst, &words, &spin};
  tilegemm::jit::LaunchConfig config;
  config.grid[0] = 1;
  config.block[0] = 256;
  config.stream = stream;
  kernel->launch(config, args);
}

// PDL on for one scope, and a stream of its own (the GEMM and the writer share it).
class PdlScope {
 public:
  PdlScope() {
    tilegemm::set_pdl(true);
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~PdlScope() {
    tilegemm::set_pdl(false);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Runs the GEMM once and waits: its kernel is compiled and loaded before the timed sequence, or the writer would
// finish its spin while the host compiles (and the test could not fail).
void warm_up(const std::function<void()>& gemm, cudaStream_t stream) {
  gemm();
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// Saves `bytes` of `data`, overwrites them with `garbage`, and returns the saved copy (device memory).
std::shared_ptr<void> save_and_spoil(void* data, std::size_t bytes, int garbage) {
  void* saved = nullptr;
  cuda_check(cudaMalloc(&saved, bytes), "cudaMalloc");
  std::shared_ptr<void> owner(saved, [](void* p) { cudaFree(p); });
  cuda_check(cudaMemcpy(saved, data, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  cuda_check(cudaMemset(data, garbage, bytes), "cudaMemset");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return owner;
}

class PdlBf16 : public ::testing::TestWithParam<DenseCase> {};

TEST_P(PdlBf16, WaitsForThePreviousKernelBeforeReadingA) {
  GPU_TEST_REQUIRE_SM90();
  const DenseCase cs = GetParam();
  const PdlScope pdl;
  run_dense_case(
      "bf16_gemm after a late writer, PDL on", cs,
      [&](const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c) {
        tilegemm::GemmOptions options;
        options.stream = pdl.stream();
        warm_up([&] { tilegemm::bf16_gemm(a, b, d, c, options); }, pdl.stream());
        const std::size_t bytes = static_cast<std::size_t>(cs.m * cs.k) * 2;
        const auto saved = save_and_spoil(a.data, bytes, 0x7f);  // bf16 0x7f7f: 3.4e38
        late_write(saved.get(), a.data, bytes, pdl.stream());
        tilegemm::bf16_gemm(a, b, d, c, options);
        cuda_check(cudaStreamSynchronize(pdl.stream()), "cudaStreamSynchronize");
      },
      false, true);
}

// Small M (the decode shapes PDL is for) and a large problem on the 2-CTA cluster kernel.
INSTANTIATE_TEST_SUITE_P(Shapes, PdlBf16,
                         ::testing::Values(DenseCase{0, 64, 2112, 7168}, DenseCase{0, 4096, 4096, 2048}),
                         [](const auto& info) { return case_name(info.param); });

class PdlFp8 : public ::testing::TestWithParam<std::array<std::int64_t, 3>> {};

TEST_P(PdlFp8, WaitsForThePreviousKernelBeforeReadingA) {
  GPU_TEST_REQUIRE_SM90();
  const auto [m, n, k] = GetParam();
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(fmt::format("fp8 {}x{}x{} seed {}", m, n, k, seed));
  const QuantisedOperand a = make_quantised(0, m, k, false, seed * 8 + 0);
  const QuantisedOperand b = make_quantised(0, n, k, true, seed * 8 + 1);
  GuardedTensor d(DType::kBFloat16, 0, m, n);
  {
    const PdlScope pdl;
    tilegemm::GemmOptions options;
    options.stream = pdl.stream();
    const auto gemm = [&] {
      tilegemm::fp8_gemm_1d2d(a.data_view, a.sf_view, b.data_view, b.sf_view, d.device_view(), options);
    };
    warm_up(gemm, pdl.stream());
    const std::size_t bytes = static_cast<std::size_t>(m * k);
    const auto saved = save_and_spoil(a.data_view.data, bytes, 0x7e);  // e4m3 0x7e: 448
    late_write(saved.get(), a.data_view.data, bytes, pdl.stream());
    gemm();
    cuda_check(cudaStreamSynchronize(pdl.stream()), "cudaStreamSynchronize");
  }
  d.download();
  const auto cov = d.coverage([](std::int64_t, std::int64_t) { return true; });
  EXPECT_TRUE(cov.ok()) << cov.describe();
  Fp8Comparison cmp;
  compare_rows(a, 0, 0, m, b, 0, d, 0, 0, nullptr, 0, k, seed, cmp);
  expect_fp8_accuracy(cmp);
  report("fp8_gemm_1d2d after a late writer, PDL on", fmt::format("{}x{}x{}", m, n, k), "nt", "d=bf16", diff_text(cmp),
         !HasFailure());
}

INSTANTIATE_TEST_SUITE_P(Shapes, PdlFp8,
                         ::testing::Values(std::array<std::int64_t, 3>{64, 2112, 7168},
                                           std::array<std::int64_t, 3>{128, 7168, 2048},
                                           std::array<std::int64_t, 3>{4096, 7168, 2048}),
                         [](const auto& info) {
                           return fmt::format("m{}_n{}_k{}", info.param[0], info.param[1], info.param[2]);
                         });

}  // namespace
}  // namespace gpu_test
