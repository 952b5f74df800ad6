#include "reference/cublaslt_context.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "core/relaxed_capture.hpp"
#include "reference/cublaslt_api.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::reference_detail {

void check_cuda_status(cudaError_t status, const char* who, const char* what) {
  if (status != cudaSuccess)
    throw RuntimeError(
        fmt::format("{}: {} failed: {} ({})", who, what, cudaGetErrorName(status), cudaGetErrorString(status)));
}

void check_cublas_status(cublasStatus_t status, const char* who, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(fmt::format("{}: {} failed: {} ({})", who, what, cublaslt().cublasLtGetStatusName(status),
                                   cublaslt().cublasLtGetStatusString(status)));
}

MatrixLayout::MatrixLayout(const char* who, cudaDataType type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld,
                           std::int64_t batch, std::int64_t batch_stride) {
  check_cublas_status(cublaslt().cublasLtMatrixLayoutCreate(&handle, type, rows, cols, ld), who,
                      "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch);
    check_cublas_status(
        cublaslt().cublasLtMatrixLayoutSetAttribute(handle, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
        who, "set BATCH_COUNT");
    check_cublas_status(cublaslt().cublasLtMatrixLayoutSetAttribute(handle, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                                    &batch_stride, sizeof(batch_stride)),
                        who, "set STRIDED_BATCH_OFFSET");
  }
}

MatrixLayout::~MatrixLayout() {
  cublaslt().cublasLtMatrixLayoutDestroy(handle);
}

MatmulDesc::MatmulDesc(const char* who, cublasOperation_t trans_a, cublasOperation_t trans_b) : who_(who) {
  check_cublas_status(cublaslt().cublasLtMatmulDescCreate(&handle, CUBLAS_COMPUTE_32F, CUDA_R_32F), who,
                      "cublasLtMatmulDescCreate");
  set(CUBLASLT_MATMUL_DESC_TRANSA, trans_a, "set TRANSA");
  set(CUBLASLT_MATMUL_DESC_TRANSB, trans_b, "set TRANSB");
}

MatmulDesc::~MatmulDesc() {
  cublaslt().cublasLtMatmulDescDestroy(handle);
}

void MatmulDesc::set_bytes(cublasLtMatmulDescAttributes_t key, const void* value, std::size_t bytes, const char* what) {
  check_cublas_status(cublaslt().cublasLtMatmulDescSetAttribute(handle, key, value, bytes), who_, what);
}

CublasLtContext& cublaslt_context(int device, void* stream, const char* who) {
  static std::mutex mutex;
  static std::map<std::pair<int, void*>, CublasLtContext> contexts;
  std::lock_guard lock(mutex);
  CublasLtContext& ctx = contexts[{device, stream}];
  if (!ctx.handle) {
    // Possibly while `stream` is being captured (a first call on torch's capture stream): allowed, not captured.
    check_cuda_status(with_relaxed_capture([&] { return cudaMalloc(&ctx.workspace, kCublasLtWorkspaceBytes); }), who,
                      "cudaMalloc(workspace)");
    check_cublas_status(cublaslt().cublasLtCreate(&ctx.handle), who, "cublasLtCreate");
  }
  return ctx;
}

std::uint32_t pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address == 0) return 256;
  return static_cast<std::uint32_t>(std::min<std::uintptr_t>(256, address & (~address + 1)));
}

namespace {

// RAII holder of a matmul preference: the workspace cuBLASLt may use and the operands' alignments.
struct Preference {
  cublasLtMatmulPreference_t handle = nullptr;
  Preference(const std::uint32_t (&alignments)[4], const char* who) {
    check_cublas_status(cublaslt().cublasLtMatmulPreferenceCreate(&handle), who, "cublasLtMatmulPreferenceCreate");
    const std::uint64_t workspace = kCublasLtWorkspaceBytes;
    check_cublas_status(cublaslt().cublasLtMatmulPreferenceSetAttribute(
                            handle, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
                        who, "set MAX_WORKSPACE_BYTES");
    const cublasLtMatmulPreferenceAttributes_t keys[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
      check_cublas_status(
          cublaslt().cublasLtMatmulPreferenceSetAttribute(handle, keys[i], &alignments[i], sizeof(alignments[i])), who,
          "set MIN_ALIGNMENT");
  }
  ~Preference() { cublaslt().cublasLtMatmulPreferenceDestroy(handle); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

}  // namespace

bool cached_heuristic_algo(const CublasLtContext& ctx, const char* who, const std::string& key,
                           cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                           cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, const std::uint32_t (&alignments)[4],
                           cublasLtMatmulAlgo_t* algo, cublasStatus_t* status) {
  static std::mutex mutex;
  static std::map<std::string, cublasLtMatmulAlgo_t> algos;
  const std::string full_key = std::string(who) + "|" + key;
  std::lock_guard lock(mutex);
  *status = CUBLAS_STATUS_SUCCESS;
  if (auto it = algos.find(full_key); it != algos.end()) {
    *algo = it->second;
    return true;
  }
  Preference preference(alignments, who);
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  *status =
      cublaslt().cublasLtMatmulAlgoGetHeuristic(ctx.handle, desc, a, b, c, d, preference.handle, 1, &result, &returned);
  if (*status != CUBLAS_STATUS_SUCCESS || returned == 0) return false;
  *algo = algos.emplace(full_key, result.algo).first->second;
  return true;
}

}  // namespace tilegemm::reference_detail
