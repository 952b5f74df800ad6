// The alternative compiler (DG_JIT_USE_NVRTC=0): an nvcc process per kernel, working in a private directory.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "jit/compiler.hpp"
#include "jit/process.hpp"

namespace tilegemm::jit {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "nvcc --version" run once per compiler path and process: its release line becomes part of the cache key,
// so swapping toolkits behind the same path still misses the cache.
std::string nvcc_version(const std::string& nvcc) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard lock(mutex);
  if (auto it = versions.find(nvcc); it != versions.end()) return it->second;
  const auto log = std::filesystem::temp_directory_path() /
                   fmt::format("tilegemm-nvcc-version-{}-{}.log", ::getpid(), versions.size());
  ProcessResult r = run_process({nvcc, "--version"}, log.string());
  std::error_code ec;
  std::filesystem::remove(log, ec);
  if (r.exit_code != 0)
    throw RuntimeError(fmt::format("DG_JIT_NVCC_COMPILER: expected a runnable nvcc, got '{}' ({})", nvcc,
                                   r.output.empty() ? "exit status " + std::to_string(r.exit_code) : r.output));
  std::string version;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("release") != std::string::npos || line.find("Build") != std::string::npos) version += line + ";";
  if (version.empty()) version = r.output;
  return versions[nvcc] = version;
}

class NvccCompiler final : public Compiler {
 public:
  explicit NvccCompiler(std::string nvcc) : nvcc_(std::move(nvcc)) {
    identity_ = fmt::format("nvcc {} {}", nvcc_, nvcc_version(nvcc_));
  }

  const std::string& identity() const override { return identity_; }

  std::vector<std::string> flags(const KernelSpec& spec, const Env& env) const override {
    std::vector<std::string> f = {"-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-O3"};
    for (auto& c : common_flags(env)) f.push_back(std::move(c));
    f.insert(f.end(), spec.options.begin(), spec.options.end());
    return f;
  }

  CompileOutput compile(const KernelSpec&, const std::vector<std::string>& flags, const std::string& source_path,
                        const std::string& work_dir, bool want_ptx) const override {
    namespace fs = std::filesystem;
    CompileOutput out;
    const fs::path cubin = fs::path(work_dir) / "nvcc.cubin";
    std::vector<std::string> argv = command(flags, source_path);
    argv.push_back("-o");
    argv.push_back(cubin.string());
    ProcessResult r = run_process(argv, (fs::path(work_dir) / "nvcc.log").string());
    out.log = r.output;
    if (r.exit_code != 0) {
      out.log = fmt::format("{} exited with status {}\n{}", nvcc_, r.exit_code, out.log);
      return out;
    }
    const std::string bytes = read_file(cubin);
    out.cubin.assign(bytes.begin(), bytes.end());
    out.ok = !out.cubin.empty();
    // Exit status 0 is not enough: a program that is no nvcc (/bin/true) succeeds and writes nothing.
    std::error_code ec;
    if (!out.ok)
      out.log = fmt::format("DG_JIT_NVCC_COMPILER '{}' exited with status 0 but wrote {} cubin at '{}' (-o)\n{}", nvcc_,
                            fs::exists(cubin, ec) ? "an empty" : "no", cubin.string(), out.log);
    fs::remove(cubin, ec);
    if (want_ptx && out.ok) {
      // nvcc writes PTX only in a separate -ptx pass; it is rare (DG_JIT_DUMP_PTX), so pay for it then.
      std::vector<std::string> ptx_argv = {nvcc_, "-ptx"};
      for (const auto& f : flags)
        if (f != "-cubin" && f != "--ptxas-options=-v")
          ptx_argv.push_back(f == "-gencode=arch=compute_90a,code=sm_90a" ? "-arch=sm_90a" : f);
      const fs::path ptx = fs::path(work_dir) / "nvcc.ptx";
      ptx_argv.insert(ptx_argv.end(), {source_path, "-o", ptx.string()});
      if (run_process(ptx_argv, (fs::path(work_dir) / "nvcc-ptx.log").string()).exit_code == 0)
        out.ptx = read_file(ptx);
      fs::remove(ptx, ec);
    }
    return out;
  }

  std::string describe_command(const std::vector<std::string>& flags, const std::string& source_path) const override {
    return shell_quote_join(command(flags, source_path));
  }

 private:
  std::vector<std::string> command(const std::vector<std::string>& flags, const std::string& source_path) const {
    std::vector<std::string> argv = {nvcc_};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(source_path);
    return argv;
  }

  std::string nvcc_, identity_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler();

std::unique_ptr<Compiler> make_compiler(const Env& env) {
  if (env.jit_use_nvrtc) return make_nvrtc_compiler();
  return std::make_unique<NvccCompiler>(env.jit_nvcc_compiler);
}

}  // namespace tilegemm::jit
