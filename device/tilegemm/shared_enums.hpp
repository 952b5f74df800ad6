#pragma once
// Enums shared by host code (heuristics, codegen, validation) and device code (kernels, schedulers).
// NOTE: no includes here: NVRTC compiles this file without a C++ standard library.

namespace tilegemm {

// Element types. Values are stable: they appear in generated source and in cache keys.
enum class DType : int {
  kFloat32 = 0,
  kTFloat32 = 1,
  kBFloat16 = 2,
  kFloat16 = 3,
  kFloat8E4M3 = 4,
  kFloat8E5M2 = 5,
  kInt8 = 6,
  kInt4 = 7,        // packed two per byte
  kFloat4E2M1 = 8,  // packed two per byte
  kInt32 = 9,
  kInt64 = 10,  // index tensors only (MoE top-k ids)
};

// Storage bits of one element (tf32 is stored as 32-bit float).
constexpr int dtype_bits(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kTFloat32:
    case DType::kInt32:
      return 32;
    case DType::kBFloat16:
    case DType::kFloat16:
      return 16;
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kInt8:
      return 8;
    case DType::kInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kInt64:
      return 64;
  }
  return 0;
}

// Which dimension is contiguous in memory. For A [M,K]: kKMajor means row-major (K contiguous);
// for B stored as [N,K]: kKMajor means each column of the math B is contiguous.
enum class Major : int { kKMajor = 0, kMNMajor = 1 };

// How an FP8 GEMM kernel reads a per-token scale tensor [G][rows][K blocks] (fp8_params.hpp):
//   kMnMajor: rows contiguous, 16-byte aligned K-block columns (get_mn_major_tma_aligned_tensor): one TMA box of a
//             tile's rows per K block.
//   kRowMajor: K blocks contiguous, 16-byte aligned rows ([rows, K/128] as per_token_cast_to_fp8 returns it for K a
//             multiple of 512): one TMA box of four K blocks of a tile's rows per stage, stored [row][4].
//   kStrided: any other strides: the producer's scale warp copies element by element (cp.async; slower on long K).
enum class ScaleLayout : int { kMnMajor = 0, kStrided = 1, kRowMajor = 2 };

// How the problem's tiles are enumerated by the persistent scheduler.
enum class GemmType : int {
  kNormal = 0,              // one [M,N,K] problem
  kBatched = 1,             // [B,M,K] x [B,N,K]
  kMGroupedContiguous = 2,  // rows of A concatenated by group, per-row group index (-1 = padding)
  kMGroupedMasked = 3,      // [G, M_max, K] with masked_m[g] valid rows
  kKGroupedContiguous = 4,  // K concatenated by group, D[g] accumulated in fp32
  kBatchReduced = 5,        // [B,M,K] x [B,N,K] summed over the batch too into one D[M,N] (einsum bmk,bnk->mn): the
                            // reduction runs through every batch's K blocks in turn
};

// M-grouped contiguous layouts: every group starts at a multiple of this many rows (DeepGEMM's
// get_mk_alignment_for_contiguous_layout()); the scheduler, the validation and the heuristics rely on it.
constexpr int kContiguousGroupRowAlignment = 128;

}  // namespace tilegemm
