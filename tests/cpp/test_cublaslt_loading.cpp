// cuBLASLt is loaded on first use, never linked: a `tilegemm` command or `import deep_gemm` that does not call it
// does not map its 500 MB (about 0.1 s per process start).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "reference/cublaslt_api.hpp"

TEST(CublasLtLoading, IsNotLinkedIntoTheBinary) {
  // Linked (directly or through the library), its symbols would be in the global scope; loaded on demand with
  // RTLD_LOCAL they never are, whatever ran before in this process.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cublasLtCreate"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cublasLtGetVersion"), nullptr);
}

TEST(CublasLtLoading, LoadsOnFirstUseWithoutAGpu) {
  const tilegemm::CublasLtApi& api = tilegemm::cublaslt();
  ASSERT_NE(api.cublasLtGetVersion, nullptr);
  EXPECT_GE(api.cublasLtGetVersion(), 120000u);  // the toolkit's own library (CUDA 12 or later)
  EXPECT_EQ(&tilegemm::cublaslt(), &api);        // loaded once
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cublasLtCreate"), nullptr);
}
