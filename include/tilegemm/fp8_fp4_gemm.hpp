#pragma once
// FP8 x FP4 GEMM on SM90: D = A · Bᵀ with A e4m3 [M, K] and B FP4 (e2m1, two per byte) [N, K], DeepGEMM's operand
// formats for fp8_fp4_gemm_nt with recipe_a (1, 128) and recipe_b (1, 32):
//   a    e4m3 [M, K], K-major (row stride a multiple of 16 bytes)
//   sfa  fp32 [M, K / 128], any strides: A's scale per token and 128 k
//   b    int8 [N, K / 2], contiguous rows of packed codes, k 2i in the low nibble of byte i
//   sfb  fp32 [N, K / 32], contiguous rows: B's scale per row and 32 k (UE8M0 values as DeepGEMM makes them, or any)
//   d    bf16 or fp32 [M, N], contiguous rows
// K a multiple of 128. The codes are decoded in registers into e4m3 (exactly: every e2m1 value is one) and multiplied
// on the tensor cores with fp32 accumulation; each 32-k step is scaled by B's scale, each 128-k block by A's.
// SM90 has no FP4 tensor core: the kernel reads B at half a byte per weight, which is what small M is bound by.
#include <string>

#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// How a problem runs: tokens per CTA (8..64), pipeline stages, K splits summed in the kernel, the grid (x; experts on y
// when masked, 0 when dense) and its shared memory.
struct Fp8Fp4GemmConfig {
  int block_m = 0, stages = 0, num_splits = 1, grid = 0, smem_bytes = 0, experts = 0;
  int k_groups = 1;  // sets of consumer warps taking turns at the stages (fp8_fp4_params.hpp)
  bool mx = false;   // MXFP8: B e4m3, 1x32 scales on both operands
};

// The config for M x N x K on `num_sms` SMs of `hw` (shared memory per block from hw). Masked (experts > 0): M is the
// caller's expected rows per expert, and each CTA walks its expert's token blocks (no splits).
Fp8Fp4GemmConfig select_fp8_fp4_gemm_config(int m, int n, int k, const HardwareModel& hw, int num_sms, int experts = 0,
                                            bool mx = false);

// One line for DG_PRINT_CONFIGS and `tilegemm plan --op fp8_fp4`.
std::string format_fp8_fp4_gemm_config(int m, int n, int k, const Fp8Fp4GemmConfig& config);

// The ledger of an M x N x K FP8 x FP4 (or MXFP8) GEMM run in token blocks of `block_m`: its DRAM bytes and the lane
// instructions the kernel's K loop spends decoding and multiplying, one pass over B per token block. Small M is bound
// by the slower of the two (the tensor cores are not: mma.sync does the few FLOPs quickly).
struct Fp8Fp4Ledger {
  double bytes = 0;      // A and its scales, B and its scales, D: each once
  double flops = 0;      // 2·M·N·K
  double issue_ops = 0;  // lane instructions of the K loop over every token block (B's rows in whole blocks of 64)
  double memory_floor_us = 0, issue_floor_us = 0;
  const char* bound = "";  // "memory" or "issue"
};
// Lane instructions per weight of B and token block of `block_m` tokens (MXFP8's B loads and conversions count as
// FP4's decode does).
double fp8_fp4_ops_per_weight(int block_m);
// `experts` > 1: that many masked experts of m rows each, every one with its own B.
Fp8Fp4Ledger fp8_fp4_ledger(int m, int n, int k, int block_m, DType d_dtype, bool mx, const HardwareModel& hw,
                            int experts = 1);

void fp8_fp4_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                     const TensorView& d, const GemmOptions& options = {});

// MXFP8 on the same kernel (small M: it reads B at a byte per weight, like the FP8 1D2D GEMM, and is slower than that
// wgmma kernel once M makes it compute-bound): a e4m3 [M, K] with sfa fp32 [M, K / 32], b e4m3 [N, K] with sfb fp32
// [N, K / 32] (OCP MX: UE8M0 values, or any), every scale tensor with contiguous 16-byte aligned rows; d as above.
void mxfp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const GemmOptions& options = {});

// M-grouped masked over E experts (MoE decoding, DeepGEMM's m_grouped_fp8_fp4_gemm_nt_masked): a [E, M_max, K] with
// sfa [E, M_max, K / 128], b [E, N, K / 2] with sfb [E, N, K / 32], d [E, M_max, N]; masked_m int32 [E] on the device
// holds each expert's valid rows (rows past them are not written); expected_m (1..M_max) is a hint of rows per
// expert.
void m_grouped_fp8_fp4_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                      int expected_m, const GemmOptions& options = {});

}  // namespace tilegemm
