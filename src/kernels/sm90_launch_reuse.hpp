#pragma once
// What a launch plan (src/api/launch_plan.hpp) keeps of its SM90 launches from one run to the next: the
// kernel, and the parameter block whose tensor maps were encoded for the previous run's pointers. A run
// re-encodes only the maps of operands at another address (a weight operand never is), and finds no kernel by
// key.
#include <memory>
#include <mutex>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

struct Sm90GemmOperands;

struct Sm90LaunchReuse {
  std::mutex mutex;  // a run holds it; a concurrent run of the same plan launches without reuse
  std::shared_ptr<const jit::CompiledKernel> kernel;
  GemmParams params{};
  // The addresses params' maps were encoded for (A with its tail map, B, D with its tail map).
  const void* a = nullptr;
  const void* b = nullptr;
  const void* d = nullptr;
  bool encoded_a = false, encoded_b = false, encoded_d = false;
};

// launch_sm90_bf16_gemm for the runs of one plan: same desc, config, shapes and strides on every run, only
// the pointers change.
void launch_sm90_bf16_gemm_reusing(const GemmDesc& desc, const GemmConfig& config,
                                   const Sm90GemmOperands& ops, void* stream, Sm90LaunchReuse& reuse);

}  // namespace tilegemm::kernels
