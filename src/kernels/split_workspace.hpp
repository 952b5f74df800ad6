#pragma once
// The device workspace of split-K / stream-K launches: one zero-initialised buffer per (device, stream),
// grown on demand and reused by every later launch on that stream, by every kernel family with its own layout
// (counters, then partial tiles). Every kernel leaves all it used, counters and partial sums alike, at zero when it
// finishes, so no memset is needed per launch and the launch path enqueues nothing but the kernel (CUDA-graph
// capture friendly once the buffer is large enough): a kernel that left partial sums behind would hand the next
// launch of another layout non-zero counters, or an atomic fix-up non-zero sums.
#include <cstddef>

namespace tilegemm::kernels {

// Throws InvalidArgument("workspace", ...) when a buffer of `capacity` bytes cannot hold `needed` bytes or
// `needed` is zero (a split launch always needs its counters).
void require_workspace_fits(std::size_t needed, std::size_t capacity);

// A zeroed device buffer of at least `bytes` for the current device and `stream`. Growing frees the old
// buffer in stream order (earlier launches on the stream finish first). Growing while `stream` is being
// captured into a CUDA graph throws RuntimeError: run the shape once before capturing.
void* split_workspace(std::size_t bytes, void* stream);

// An uninitialised device buffer of at least `bytes` for the current device and `stream`, grown and kept as the
// split workspace is (a separate buffer): the weight-only GEMM's dequantised weight slabs, the HC prenorm's partial
// tiles (each written whole before it is read).
void* stream_scratch(std::size_t bytes, void* stream);

}  // namespace tilegemm::kernels
