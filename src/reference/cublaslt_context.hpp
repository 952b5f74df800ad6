#pragma once
// What the cuBLASLt wrappers (cublaslt.cpp, cublaslt_fp8.cpp) share: the per-(device, stream) handle and
// workspace, status checks that name the calling wrapper, the per-call descriptors, and the pointer alignment
// cuBLASLt's heuristic asks for.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tilegemm::reference_detail {

constexpr std::size_t kCublasLtWorkspaceBytes = 32u << 20;

struct CublasLtContext {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;  // kCublasLtWorkspaceBytes
};

// One handle and workspace per (device, stream): a workspace shared by two streams could be used by two matmuls
// at once. Never freed: destroying them at exit could run after the CUDA runtime is torn down. `who` names the
// wrapper in error messages.
CublasLtContext& cublaslt_context(int device, void* stream, const char* who);

// RuntimeError "<who>: <what> failed: <status name> (<description>)" unless the call succeeded.
void check_cuda_status(cudaError_t status, const char* who, const char* what);
void check_cublas_status(cublasStatus_t status, const char* who, const char* what);

// The per-call descriptors, destroyed with the call; `who` names the wrapper in error messages.
class MatrixLayout {
 public:
  // A column-major rows x cols matrix with leading dimension ld; batch > 1 adds a strided batch.
  MatrixLayout(const char* who, cudaDataType type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld,
               std::int64_t batch = 1, std::int64_t batch_stride = 0);
  ~MatrixLayout();
  MatrixLayout(const MatrixLayout&) = delete;
  MatrixLayout& operator=(const MatrixLayout&) = delete;
  cublasLtMatrixLayout_t handle = nullptr;
};

class MatmulDesc {
 public:
  // fp32 compute and scale types, cuBLASLt's A and B transposed as asked.
  MatmulDesc(const char* who, cublasOperation_t trans_a, cublasOperation_t trans_b);
  ~MatmulDesc();
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
  template <class T>
  void set(cublasLtMatmulDescAttributes_t key, const T& value, const char* what) {
    set_bytes(key, &value, sizeof(value), what);
  }
  cublasLtMatmulDesc_t handle = nullptr;

 private:
  void set_bytes(cublasLtMatmulDescAttributes_t key, const void* value, std::size_t bytes, const char* what);
  const char* who_;
};

// The largest power of two (up to 256) dividing the address.
std::uint32_t pointer_alignment(const void* p);

// The algorithm cuBLASLt's heuristic picks for one problem, cached under (who, key): the query costs more than a
// small GEMM. `alignments` are those of A, B, C, D (cuBLASLt's order); the heuristic assumes 256-byte aligned
// buffers unless told otherwise, and views into larger buffers often are not. Returns false when the heuristic
// offers no algorithm, with its status in *status (success with zero results is possible too).
bool cached_heuristic_algo(const CublasLtContext& ctx, const char* who, const std::string& key,
                           cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                           cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, const std::uint32_t (&alignments)[4],
                           cublasLtMatmulAlgo_t* algo, cublasStatus_t* status);

}  // namespace tilegemm::reference_detail
