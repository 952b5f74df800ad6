// The default compiler: NVRTC in-process (no temp files, no process start; ptxas runs inside NVRTC).
#include <nvrtc.h>

#include <fmt/format.h>

#include "jit/compiler.hpp"
#include "jit/process.hpp"

namespace tilegemm::jit {
namespace {

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler() {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) throw RuntimeError("NVRTC: nvrtcVersion failed");
    identity_ = fmt::format("nvrtc {}.{}", major, minor);
  }

  const std::string& identity() const override { return identity_; }

  std::vector<std::string> flags(const KernelSpec& spec, const Env& env) const override {
    std::vector<std::string> f = {std::string("--gpu-architecture=") + kTargetArch, "-default-device"};
    for (auto& c : common_flags(env)) f.push_back(std::move(c));
    f.insert(f.end(), spec.options.begin(), spec.options.end());
    return f;
  }

  CompileOutput compile(const KernelSpec& spec, const std::vector<std::string>& flags, const std::string&,
                        const std::string&, bool want_ptx) const override {
    CompileOutput out;
    nvrtcProgram program = nullptr;
    const std::string file_name = spec.name + ".cu";
    nvrtcResult rc = nvrtcCreateProgram(&program, spec.source.c_str(), file_name.c_str(), 0, nullptr, nullptr);
    if (rc != NVRTC_SUCCESS) {
      out.log = fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(rc));
      return out;
    }
    std::vector<const char*> argv;
    for (const auto& f : flags) argv.push_back(f.c_str());
    rc = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());

    std::size_t log_size = 0;
    if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      out.log.resize(log_size);
      nvrtcGetProgramLog(program, out.log.data());
      out.log.resize(log_size - 1);  // drop the terminating NUL
    }
    if (rc != NVRTC_SUCCESS) {
      out.log = fmt::format("nvrtcCompileProgram: {}\n{}", nvrtcGetErrorString(rc), out.log);
    } else {
      std::size_t cubin_size = 0;
      if (nvrtcGetCUBINSize(program, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
        out.cubin.resize(cubin_size);
        out.ok = nvrtcGetCUBIN(program, out.cubin.data()) == NVRTC_SUCCESS;
      }
      if (!out.ok) out.log += "\nnvrtcGetCUBIN: no cubin was produced (is the architecture a real sm_ one?)";
      std::size_t ptx_size = 0;
      if (want_ptx && nvrtcGetPTXSize(program, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
        out.ptx.resize(ptx_size);
        nvrtcGetPTX(program, out.ptx.data());
        out.ptx.resize(ptx_size - 1);
      }
    }
    nvrtcDestroyProgram(&program);
    return out;
  }

  std::string describe_command(const std::vector<std::string>& flags, const std::string& source_path) const override {
    std::vector<std::string> argv = {"nvrtc"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(source_path);
    return shell_quote_join(argv);
  }

 private:
  std::string identity_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler() {
  return std::make_unique<NvrtcCompiler>();
}

}  // namespace tilegemm::jit
