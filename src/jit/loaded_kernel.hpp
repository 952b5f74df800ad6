#pragma once
// The CompiledKernel the runtime hands out: the cubin in memory, and one loaded module per CUDA context
// (one per device with the runtime's primary contexts), loaded at the first launch in that context.
#include <memory>
#include <string>
#include <vector>

#include "tilegemm/jit.hpp"

namespace tilegemm::jit {

std::shared_ptr<const CompiledKernel> make_loaded_kernel(std::string name, std::string entry, std::vector<char> cubin,
                                                         std::string cubin_path);

// Rejects impossible launch configurations with InvalidArgument before any driver call.
void validate_launch_config(const LaunchConfig& config);

}  // namespace tilegemm::jit
