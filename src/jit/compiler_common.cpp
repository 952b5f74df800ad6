// Flags shared by NVRTC and NVCC, the compiler factory and the ptxas -v log parser.
#include <regex>

#include "jit/compiler.hpp"

namespace tilegemm::jit {

std::vector<std::string> common_flags(const Env& env) {
  std::vector<std::string> flags = {
      "-std=c++20",
      "-I" + env.device_include_dir,
      "-I" + env.cuda_include_dir,
      // <cuda/ptx> and the rest of CCCL live here in CUDA 13.
      "-I" + env.cuda_include_dir + "/cccl",
      "-DNDEBUG",
  };
  if (env.jit_with_lineinfo) flags.push_back("-lineinfo");
  if (env.jit_ptxas_verbose || env.jit_ptxas_check) flags.push_back("--ptxas-options=-v");
  return flags;
}

PtxasUsage parse_ptxas_log(const std::string& log) {
  PtxasUsage usage;
  std::smatch m;
  auto number = [&](const std::regex& re, long& out) {
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
      usage.reported = true;
      out = std::max(out, std::stol((*it)[1].str()));
    }
  };
  number(std::regex(R"((\d+) bytes spill stores)"), usage.spill_store_bytes);
  number(std::regex(R"((\d+) bytes spill loads)"), usage.spill_load_bytes);
  number(std::regex(R"((\d+) bytes stack frame)"), usage.stack_frame_bytes);
  number(std::regex(R"((\d+) bytes lmem)"), usage.lmem_bytes);
  number(std::regex(R"(Used (\d+) registers)"), usage.registers);
  usage.wgmma_serialized = log.find("wgmma.mma_async instructions are serialized") != std::string::npos;
  return usage;
}

}  // namespace tilegemm::jit
