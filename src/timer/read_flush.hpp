#pragma once
// The read-only L2 flush (FlushMode::kRead): a kernel that reads every 16 bytes of a buffer and writes nothing
// (its one store sits behind a test no data passes), so the lines it leaves in L2 are clean. Internal to
// src/bench. The same kernel times `--read-b` (a read of B alone, beside each GEMM).
#include <cstddef>

#include <cuda_runtime_api.h>

#include "tilegemm/jit.hpp"

namespace tilegemm::bench_detail {

// The kernel's source (NVRTC-compiled on first use, cached like every JIT kernel).
jit::KernelSpec read_flush_kernel_spec();

// Reads `bytes` (a multiple of 16) at `buffer` on `stream`, with kBlocksPerSm CTAs on each of `num_sms` SMs (the
// caller queries the count once, not at every flush).
void read_flush(const void* buffer, std::size_t bytes, int num_sms, cudaStream_t stream);

}  // namespace tilegemm::bench_detail
