#pragma once
// DeepSeek-V3.2's FP8 MQA logits for prefill (the lightning indexer; DeepGEMM's fp8_mqa_logits and the FP8 path of
// fp8_fp4_mqa_logits) on SM90:
//   logits[i, j] = Σ_h weights[i, h] · relu(kv_scale[j] · Σ_d q[i, h, d] · kv[j, d])   for ks[i] <= j < ke[i]
// with e4m3 products accumulated in fp32 on the tensor cores. ks = cu_seq_len_k_start, ke = cu_seq_len_k_end; each
// row's window is clamped to [0, seq_len_kv). KV scales must be >= 0 (as DeepGEMM's casts give them): the kernel
// applies them after the relu.
//
// Inputs (device memory): q e4m3 [seq_len, H, D] contiguous, H in {32, 64}, D in {32, 64, 128}; kv e4m3
// [seq_len_kv, D] contiguous; kv_scales fp32 [seq_len_kv] contiguous (q, kv and kv_scales 16-byte aligned: TMA);
// weights fp32 [seq_len, H] with H contiguous (any row stride); ks and ke int32 [seq_len] contiguous.
// Output: logits fp32 or bf16 (its dtype picks the kernel), width contiguous, any row stride >= its width:
//   max_seqlen_k = 0: [seq_len, seq_len_kv]; the window of each row is written, and with clean_logits -inf around it
//     in [0, seq_len_kv) (a second kernel, as DeepGEMM's); without, the rest of the row is left as it was.
//   max_seqlen_k > 0 (compressed): [seq_len, max_seqlen_k]; row i's column c holds token ks[i] + c for the tokens of
//     its window (those past column max_seqlen_k are dropped); the rest of the row is left as it was; clean_logits
//     must be false.
// Nothing outside the view is written. DeepGEMM allocates the logits itself: mqa_logits_layout says how (the Python
// layer allocates that way and passes the view).
#include <cstdint>
#include <string>

#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// DeepGEMM's logits allocation: a [rows, row_stride] tensor of which the result is the view [0:seq_len, 0:cols].
struct MqaLogitsLayout {
  std::int64_t rows = 0;        // seq_len rounded up to block_q = 128 / num_heads
  std::int64_t row_stride = 0;  // elements between rows: a multiple of 1024 bytes (seq_len_kv + 256 or
                                // max_seqlen_k rounded up to 256, then to 1024 bytes)
  std::int64_t cols = 0;        // the view's width: seq_len_kv, or max_seqlen_k when compressed
};

// Throws InvalidArgument for sizes fp8_mqa_logits does not take (negative sizes, H not 32/64, a dtype other than
// fp32/bf16).
MqaLogitsLayout mqa_logits_layout(std::int64_t seq_len, std::int64_t seq_len_kv, int num_heads, int max_seqlen_k,
                                  DType logits_dtype);

// How one call runs: the kernel variant, its rings and grids.
struct MqaLogitsConfig {
  int seq_len = 0, seq_len_kv = 0, num_heads = 0, head_dim = 0;
  int max_seqlen_k = 0;  // > 0: compressed logits
  DType logits_dtype = DType::kFloat32;
  bool clean_logits = false;
  int block_q = 0;   // queries per CTA block (128 / H)
  int block_kv = 0;  // KV tokens per stage
  int q_stages = 0, kv_stages = 0;
  int smem_bytes = 0;
  int grid = 0;        // persistent CTAs over the q blocks
  int clean_grid = 0;  // CTAs of the clean-logits kernel (0: not launched)
};

// The configuration on `hw` with `num_sms` SMs. Throws InvalidArgument for sizes the kernels do not take.
MqaLogitsConfig select_mqa_logits_config(int seq_len, int seq_len_kv, int num_heads, int head_dim, int max_seqlen_k,
                                         DType logits_dtype, bool clean_logits, const HardwareModel& hw, int num_sms);

// One line for DG_PRINT_CONFIGS.
std::string format_mqa_logits_config(const MqaLogitsConfig& config);

// The operation. Checks every argument (InvalidArgument naming it) before touching the GPU; an empty problem
// (seq_len, seq_len_kv or the logits' width 0) does nothing.
void fp8_mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_scales, const TensorView& weights,
                    const TensorView& cu_seq_len_k_start, const TensorView& cu_seq_len_k_end, const TensorView& logits,
                    bool clean_logits = true, int max_seqlen_k = 0, const GemmOptions& options = {});

}  // namespace tilegemm
