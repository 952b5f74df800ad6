#pragma once
// Host side of the SM90 paged MQA-logits kernels (device/tilegemm/kernels/sm90_fp8_paged_mqa_logits.cuh and
// sm90_paged_mqa_logits_metadata.cuh): their generated sources and launches.
#include "tilegemm/jit.hpp"
#include "tilegemm/paged_mqa_logits.hpp"
#include "tilegemm/paged_mqa_logits_params.hpp"

namespace tilegemm::kernels {

// The logits kernel of `config` (next_n, heads, logits dtype, warpgroups and stages).
jit::KernelSpec sm90_paged_mqa_logits_spec(const PagedMqaLogitsConfig& config);
// The schedule kernel (one variant).
jit::KernelSpec sm90_paged_mqa_logits_metadata_spec();

// Launches `config`'s kernel with `params` (tensor maps and pointers filled by the caller) on `stream`.
void launch_sm90_paged_mqa_logits(const PagedMqaLogitsConfig& config, const PagedMqaLogitsParams& params, void* stream);
void launch_sm90_paged_mqa_logits_metadata(const PagedMqaMetadataParams& params, void* stream);

}  // namespace tilegemm::kernels
