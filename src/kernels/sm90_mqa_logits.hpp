#pragma once
// Host side of the SM90 FP8 MQA-logits kernel (device/tilegemm/kernels/sm90_fp8_mqa_logits.cuh) and of the
// clean-logits kernel (device/tilegemm/kernels/sm90_clean_logits.cuh): their generated sources and launches.
#include "tilegemm/jit.hpp"
#include "tilegemm/mqa_logits.hpp"
#include "tilegemm/mqa_logits_params.hpp"

namespace tilegemm::kernels {

// The logits kernel of (H, D, compressed, bf16 logits, ring depths). DeepGEMM's test profiles it as 'mqa_logits'.
jit::KernelSpec sm90_fp8_mqa_logits_spec(int num_heads, int head_dim, bool compressed, bool bf16_logits, int q_stages,
                                         int kv_stages);
// The clean-logits kernel for fp32 or bf16 logits. DeepGEMM's test profiles it as 'clean_logits'.
jit::KernelSpec sm90_clean_logits_spec(bool bf16_logits);

// Launches `config`'s logits kernel with `params` (tensor maps and pointers filled by the caller) on `stream`.
void launch_sm90_fp8_mqa_logits(const MqaLogitsConfig& config, const MqaLogitsParams& params, void* stream);
// Launches the clean-logits kernel on `grid` CTAs (MqaLogitsConfig::clean_grid) on `stream`.
void launch_sm90_clean_logits(bool bf16_logits, int grid, const CleanLogitsParams& params, void* stream);

}  // namespace tilegemm::kernels
