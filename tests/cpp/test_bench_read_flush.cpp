// The read-only L2 flush (`tilegemm bench --flush read`): its kernel compiles for sm_90a through the JIT with no
// spills, reads the whole buffer with L2-only loads, and its one store sits behind a data test, so no line of
// the buffer is written; bad sizes are refused before any CUDA call.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"
#include "test_jit_support.hpp"
#include "timer/read_flush.hpp"

using namespace tilegemm;
using test_util::expect_invalid;

namespace {

class BenchReadFlush : public tilegemm::testing::JitEnvFixture {};

TEST_F(BenchReadFlush, KernelCompilesWithoutSpillsAndOnlyReads) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const jit::KernelSpec spec = bench_detail::read_flush_kernel_spec();
  EXPECT_NE(spec.source.find("__ldcg(data + i + u * stride)"), std::string::npos) << "loads go to L2, not L1";
  EXPECT_NE(spec.source.find("__ldcg(data + i);"), std::string::npos) << "the tail loads too";
  EXPECT_NE(spec.source.find("if (acc == 0x9E3779B9u) *never = acc;"), std::string::npos)
      << "the only store is behind a test on the data";
  std::shared_ptr<const jit::CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
  EXPECT_GT(kernel->cubin().size(), 1000u);
}

TEST_F(BenchReadFlush, SizesThatAreNotWholeVectorsAreRefused) {
  expect_invalid([] { bench_detail::read_flush(reinterpret_cast<void*>(0x1000), 1000, 132, nullptr); }, "flush bytes");
}

TEST_F(BenchReadFlush, ANonPositiveSmCountIsRefused) {
  expect_invalid([] { bench_detail::read_flush(reinterpret_cast<void*>(0x1000), 1024, 0, nullptr); }, "num_sms");
}

}  // namespace
