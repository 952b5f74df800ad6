#pragma once
// cuBLASLt, loaded on first use rather than linked. The library is over 500 MB; mapping it at start-up cost every
// `tilegemm` command and every `import deep_gemm` about 0.1 s, although only the cuBLAS(Lt) baselines and the
// cublaslt_gemm_* entry points call it. Call sites use cublaslt().cublasLtX(...) with cuBLASLt's own signatures.
#include <cublasLt.h>

namespace tilegemm {

// One entry point per line, by hand: clang-format reflows an X-macro list differently on every pass.
// clang-format off
#define TILEGEMM_CUBLASLT_FUNCTIONS(X) \
  X(cublasLtCreate) \
  X(cublasLtGetVersion) \
  X(cublasLtGetStatusName) \
  X(cublasLtGetStatusString) \
  X(cublasLtMatmul) \
  X(cublasLtMatmulAlgoGetHeuristic) \
  X(cublasLtMatmulDescCreate) \
  X(cublasLtMatmulDescDestroy) \
  X(cublasLtMatmulDescSetAttribute) \
  X(cublasLtMatmulPreferenceCreate) \
  X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatrixLayoutCreate) \
  X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatrixLayoutSetAttribute)
// clang-format on

struct CublasLtApi {
#define TILEGEMM_CUBLASLT_POINTER(name) decltype(&::name) name = nullptr;
  TILEGEMM_CUBLASLT_FUNCTIONS(TILEGEMM_CUBLASLT_POINTER)
#undef TILEGEMM_CUBLASLT_POINTER
};

// The entry points of the toolkit's libcublasLt.so.<major>, loaded by the first call. Throws RuntimeError naming the
// library and what the loader said when it cannot be loaded (a later call tries again).
const CublasLtApi& cublaslt();

}  // namespace tilegemm
