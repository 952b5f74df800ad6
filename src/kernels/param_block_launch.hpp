#pragma once
// The launch every kernel with one __grid_constant__ parameter block makes: grid.x CTAs (in clusters of `cluster`
// along x), a thread count, dynamic shared memory, the caller's stream and PDL as configured (set_pdl).
#include "tilegemm/gemm.hpp"  // is_pdl_enabled
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

template <class Params>
void launch_param_block(const jit::CompiledKernel& kernel, unsigned grid, unsigned threads, unsigned smem_bytes,
                        void* stream, const Params& params, unsigned cluster = 1) {
  jit::LaunchConfig launch;
  launch.grid[0] = grid;
  launch.cluster[0] = cluster;
  launch.block[0] = threads;
  launch.smem_bytes = smem_bytes;
  launch.stream = stream;
  launch.pdl = is_pdl_enabled();
  Params copy = params;  // the launch takes non-const argument pointers
  void* args[] = {&copy};
  kernel.launch(launch, args);
}

}  // namespace tilegemm::kernels
