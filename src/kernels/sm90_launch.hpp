#pragma once
// What the SM90 BF16 and FP8 kernel families share on the host: the Config fields both kernels read, and the
// persistent launch (problem sizes, split-K / stream-K workspace, grid, cluster).
#include <string>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

// The `static constexpr` lines of a generated `struct Config` that both kernels read (tile, pipeline, raster,
// cluster, scheduler, output and split scheme), one per line, indented for the struct body.
std::string sm90_common_config_fields(const GemmDesc& desc, const GemmConfig& config);

// Whether the kernel sums cut tiles in a fixed order (the desc asks for it and the scheme cuts tiles).
inline bool sm90_deterministic_fixup(const GemmDesc& desc, const GemmConfig& config) {
  return desc.deterministic && config.scheme != GemmScheme::kDataParallel;
}

// Fills gemm's sizes, grouped layout and split workspace, then launches `kernel` on the persistent grid with
// the config's cluster. `kernel_params` is the kernel's one parameter struct (which holds `gemm`).
void launch_sm90_persistent(const GemmDesc& desc, const GemmConfig& config, const int* grouped_layout, GemmParams& gemm,
                            void* kernel_params, const jit::CompiledKernel& kernel, void* stream);

}  // namespace tilegemm::kernels
