#pragma once
// Host-side data for the harness: random bf16 operands (never zero) and a streaming calc_diff.
// Internal to src/bench; tested in tests/cpp/test_bench_host_data.cpp.
#include <cstddef>
#include <cstdint>

#include "tilegemm/dtype.hpp"

namespace tilegemm::bench_detail {

// `count` bf16 values uniform in (-1, 1), never exactly zero; deterministic for a seed whatever the
// number of threads it is spread over.
void fill_random_bf16(std::uint16_t* out, std::size_t count, std::uint64_t seed);

// DeepGEMM's calc_diff (reference.hpp's formula) over two host arrays of `dtype` (bf16 or fp32), streamed:
// the bench's outputs reach 134M elements, too many to copy into vectors of double first.
double calc_diff(const void* x, const void* y, std::size_t count, DType dtype);

}  // namespace tilegemm::bench_detail
