#pragma once
// get_kernel with the answer to "where did it come from?", for precompile's progress and the benchmark.
#include <memory>

#include "tilegemm/jit.hpp"

namespace tilegemm::jit {

enum class KernelSource { kMemory, kDisk, kCompiled };

struct KernelLookup {
  std::shared_ptr<const CompiledKernel> kernel;
  KernelSource source = KernelSource::kMemory;
};

KernelLookup lookup_kernel(const KernelSpec& spec);

}  // namespace tilegemm::jit
