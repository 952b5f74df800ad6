#pragma once
// DeepSeek-V3.2's paged FP8 MQA logits on SM90 (DeepGEMM's get_paged_mqa_logits_metadata and
// fp8_paged_mqa_logits / fp8_fp4_paged_mqa_logits with FP8 q): the lightning indexer's decode step.
//
//   logits[b·next_n + i, j] = Σ_h weights[b·next_n + i, h] · relu(scale[j] · Σ_d q[b, i, h, d] · kv[j, d])
//
// for every token j < context_lens[b, i] (fp8 products summed in fp32, as the tensor cores do), where token j of
// item b is token j % 64 of cache block block_table[b, j / 64].
//   q            fp8 e4m3 [B, next_n, H, 128], contiguous; next_n 1 or 2, H 32 or 64
//   kv_cache     the fused cache [num_blocks, 64, 1, 132] of bytes (torch.uint8; pass it as int8): each block holds
//                its 64 tokens' fp8 values [64][128], then their fp32 scales [64]; blocks stride(0) bytes apart
//                (a multiple of 16), the token rows 132 apart as the view says (stride(1) = 132)
//   weights      fp32 [B·next_n, H], contiguous
//   context_lens int32 [B, next_n], contiguous (DeepGEMM's SM90 takes only this 2-D form)
//   block_table  int32 [B, max_blocks], stride(1) = 1
//   schedule     int32 [partitions + 1, 2] from paged_mqa_logits_metadata on the same context_lens
//   logits       fp32 or bf16 [B·next_n, max_context_len], columns contiguous; DeepGEMM allocates rows
//                paged_mqa_logits_row_stride(...) apart and passes the first max_context_len columns
// Columns from context_lens[b, i] up to the end of item b's last block (64·ceil(max_i context_lens[b, i] / 64))
// are -inf; later columns are not written (DeepGEMM's SM90 kernel leaves them too: its test masks them out, and
// clean_logits, which would fill them, must be false with 2-D context_lens).
#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm {

// How one paged MQA-logits call runs. One CTA per schedule partition (one per SM); in each, one producer warp and
// `math_warpgroups` consumer warpgroups, each computing one KV block at a time from its own ring of `kv_stages`.
struct PagedMqaLogitsConfig {
  int next_n = 0, heads = 0;
  DType logits_dtype = DType::kFloat32;
  int partitions = 0;       // CTAs: the schedule's partitions
  int math_warpgroups = 0;  // KV blocks computed at once per CTA
  int kv_stages = 0;        // per warpgroup
  int q_stages = 0;         // batch items' Q tiles in flight per CTA
  int threads = 0;
  int smem_bytes = 0;
  // The model behind math_warpgroups, per KV block: one warpgroup's wgmma and epilogue cycles against one SM's
  // share of the DRAM time for the block's bytes (values, scales and logits).
  double mma_cycles = 0, epilogue_cycles = 0, dram_cycles = 0;
};

// The configuration for (next_n, heads, logits dtype) with `partitions` CTAs on `hw`: enough consumer warpgroups
// that their compute stays under half the block's DRAM time (2 to 4), as many KV stages as shared memory holds (up
// to 16 per warpgroup), 3 Q stages. Throws InvalidArgument for shapes the kernel does not take.
PagedMqaLogitsConfig select_paged_mqa_logits_config(int next_n, int heads, DType logits_dtype, int partitions,
                                                    const HardwareModel& hw);

// One line for DG_PRINT_CONFIGS.
std::string format_paged_mqa_logits_config(const PagedMqaLogitsConfig& config);

// The schedule paged_mqa_logits_metadata writes, computed on the host with the same arithmetic (for tests and
// tools): int32 [partitions + 1][2], row s = (item, block) where partition s starts. Work units are (item b, KV block
// k < ceil(max_i context_lens[b, i] / 64)) in (b, k) order; partition s takes units [start(s), start(s + 1)) with
// start(s) = s·q + min(s, r), q = total / partitions, r = total % partitions (sizes differ by at most one block).
// A start is always a real unit (k < the item's blocks); starts at the end of the work, and the last row, are
// (B, 0). context_lens is [batch][next_n], row-major.
std::vector<std::int32_t> paged_mqa_logits_schedule(const std::vector<std::int32_t>& context_lens, int batch,
                                                    int next_n, int partitions);

// get_paged_mqa_logits_metadata: writes the schedule for `context_lens` (int32 [B, next_n], contiguous) into
// `schedule` (int32 [partitions + 1, 2], contiguous; DeepGEMM's [num_sms + 1, 2]) on the device, one small kernel on
// options.stream, no host synchronisation. block_kv must be 64.
void paged_mqa_logits_metadata(const TensorView& context_lens, int block_kv, const TensorView& schedule,
                               const GemmOptions& options = {});

// DeepGEMM's logits row stride for max_context_len columns: aligned to 256 columns and to 1024 bytes.
std::int64_t paged_mqa_logits_row_stride(std::int64_t max_context_len, DType logits_dtype);

// The operation (see above). Checks every argument (InvalidArgument naming it) before any CUDA call; no work
// (B = 0 or max_context_len = 0) returns without one. clean_logits must be false.
void fp8_paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                          const TensorView& context_lens, const TensorView& block_table, const TensorView& schedule,
                          const TensorView& logits, bool clean_logits = false, const GemmOptions& options = {});

}  // namespace tilegemm
