#include "kernels/sm90_launch.hpp"

#include <fmt/format.h>

#include "core/process_switches.hpp"
#include "kernels/codegen_tokens.hpp"
#include "kernels/split_workspace.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/heuristics.hpp"

namespace tilegemm::kernels {

std::string sm90_common_config_fields(const GemmDesc& desc, const GemmConfig& config) {
  return fmt::format(
      "  static constexpr int BLOCK_M = {};\n"
      "  static constexpr int BLOCK_N = {};\n"
      "  static constexpr int BLOCK_K = {};\n"
      "  static constexpr int kStages = {};\n"
      "  static constexpr int kNumMathWarpgroups = {};\n"
      "  static constexpr int kRasterGroup = {};\n"
      "  static constexpr int kClusterM = {};\n"
      "  static constexpr int kClusterN = {};\n"
      "  static constexpr tilegemm::GemmType kGemmType = tilegemm::GemmType::{};\n"
      "  static constexpr bool kPsumLayout = {};\n"
      "  static constexpr bool kDIsFloat = {};\n"
      "  static constexpr bool kAccumulate = {};\n"
      "  static constexpr tilegemm::GemmScheme kScheme = tilegemm::GemmScheme::{};\n"
      "  static constexpr bool kDeterministic = {};\n",
      config.block_m, config.block_n, config.block_k, config.stages, config.num_math_warpgroups, config.raster_group,
      config.cluster_m, config.cluster_n, gemm_type_token(desc.type), bool_token(desc.use_psum_layout),
      bool_token(desc.d_dtype == DType::kFloat32), bool_token(desc.with_c), scheme_token(config.scheme),
      bool_token(sm90_deterministic_fixup(desc, config)));
}

void launch_sm90_persistent(const GemmDesc& desc, const GemmConfig& config, const int* grouped_layout, GemmParams& gemm,
                            void* kernel_params, const jit::CompiledKernel& kernel, void* stream) {
  gemm.m = desc.m;
  gemm.n = desc.n;
  gemm.k = desc.k;
  gemm.num_groups = desc.num_groups;
  gemm.grouped_layout = grouped_layout;

  // Persistent grid: one CTA per SM, fewer when there is less work (sm90_grid_size serves both families).
  const Env& settings = env();  // read once: each read takes the environment's lock
  const int grid = sm90_grid_size(desc, config, settings.tune_ctas_per_sm);

  // Split-K / stream-K: counters and fp32 partial slots in the stream's cached, zeroed workspace.
  gemm.split_k = config.scheme == GemmScheme::kSplitK ? config.split_k : 1;
  if (config.scheme != GemmScheme::kDataParallel) {
    const SplitWorkspaceLayout ws = sm90_split_workspace(desc, config, grid);
    auto* base = static_cast<char*>(split_workspace(ws.total_bytes(), stream));
    gemm.tile_counters = reinterpret_cast<int*>(base);
    gemm.workspace = reinterpret_cast<float*>(base + ws.counter_bytes);
  }

  jit::LaunchConfig launch;
  launch.grid[0] = static_cast<unsigned>(grid);
  launch.block[0] = static_cast<unsigned>(config.num_threads());
  launch.smem_bytes = static_cast<unsigned>(config.smem_bytes);
  launch.cluster[0] = static_cast<unsigned>(config.cluster_m);
  launch.persistent = config.scheme == GemmScheme::kDataParallel;  // split-K sizes its workspace by grid
  launch.stream = stream;
  launch.pdl = pdl_enabled(settings);  // the kernels wait for their predecessor either way (griddepcontrol.wait)
  void* args[] = {kernel_params};
  // The hot path: one launch over all the work (GemmParams' default unit range), nothing allocated.
  if (settings.waves_per_launch == 0) {
    gemm.unit_begin = 0, gemm.unit_end = GemmParams{}.unit_end;  // a block kept from a chunked run held one range
    kernel.launch(launch, args);
    return;
  }
  // Long M-grouped problems go in chunks of a few waves, each launch starting its CTAs in step (the argument
  // is copied at every launch, so the range can change in between).
  for (const WorkRange& range : sm90_launch_chunks(desc, config, grid, settings.waves_per_launch)) {
    gemm.unit_begin = range.begin;
    gemm.unit_end = range.end;
    kernel.launch(launch, args);
  }
}

}  // namespace tilegemm::kernels
