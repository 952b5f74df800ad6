// `tilegemm --version`: the library version, the commit it was built from, and the CUDA it was built with and
// finds at run time (the driver's version, or that there is none: the ledger, plans and JIT still work).
#include <cuda_runtime_api.h>

#include <string>

#include <fmt/format.h>

#include "build_commit.hpp"
#include "command.hpp"

namespace tilegemm::cli {
namespace {

std::string cuda_version(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace

std::string version_line() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  const bool has_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
  cudaGetLastError();
  return fmt::format("tilegemm {} (commit {}; CUDA {} build, {} runtime, driver {})", TILEGEMM_VERSION,
                     TILEGEMM_BUILD_COMMIT, cuda_version(CUDART_VERSION), cuda_version(runtime),
                     has_driver ? cuda_version(driver) : std::string("none"));
}

}  // namespace tilegemm::cli
