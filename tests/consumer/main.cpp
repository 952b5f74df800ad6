// Links the installed library and uses it without a GPU: the heuristics' config for a DeepSeek shape on the H200
// preset, and a JIT compile of a kernel including every primitive header, from the installed device headers
// (run.cmake points TILEGEMM_DEVICE_INCLUDE_DIR at them).
#include <cstdio>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"

int main() {
  tilegemm::GemmDesc desc;
  desc.m = 4096, desc.n = 7168, desc.k = 2048;
  const tilegemm::HardwareModel hw = tilegemm::hardware_preset("h200");
  const tilegemm::GemmConfig config = tilegemm::select_config(desc, hw, hw.num_sms);
  std::printf("config %dx%dx%d stages %d\n", config.block_m, config.block_n, config.block_k, config.stages);
  const auto result = tilegemm::jit::precompile({tilegemm::jit::heavy_test_kernel_spec("consumer")}, 1);
  std::printf("compiled %zu failed %zu\n", result.compiled + result.cached, result.failures.size());
  for (const auto& failure : result.failures) std::printf("%s\n", failure.c_str());
  return config.block_m > 0 && result.failures.empty() ? 0 : 1;
}
