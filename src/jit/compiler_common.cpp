// Flags shared by NVRTC and NVCC, the compiler factory and the ptxas -v log parser.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "jit/compiler.hpp"

namespace tilegemm::jit {
namespace {

// The largest number written as <prefix><digits><suffix> in `log` ("Used 168 registers"), kept in `out` if larger;
// whether there was one. A plain scan: <regex> alone took most of this file's compile time.
bool largest_number(const std::string& log, std::string_view prefix, std::string_view suffix, long& out) {
  bool found = false;
  for (auto at = log.find(suffix); at != std::string::npos; at = log.find(suffix, at + 1)) {
    auto begin = at;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(log[begin - 1]))) --begin;
    if (begin == at || begin < prefix.size()) continue;
    if (std::string_view(log).substr(begin - prefix.size(), prefix.size()) != prefix) continue;
    out = std::max(out, std::stol(log.substr(begin, at - begin)));
    found = true;
  }
  return found;
}

}  // namespace

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
  for (const bool found : {largest_number(log, "", " bytes spill stores", usage.spill_store_bytes),
                           largest_number(log, "", " bytes spill loads", usage.spill_load_bytes),
                           largest_number(log, "", " bytes stack frame", usage.stack_frame_bytes),
                           largest_number(log, "", " bytes lmem", usage.lmem_bytes),
                           largest_number(log, "Used ", " registers", usage.registers)})
    usage.reported = usage.reported || found;
  usage.wgmma_serialized = log.find("wgmma.mma_async instructions are serialized") != std::string::npos;
  return usage;
}

}  // namespace tilegemm::jit
