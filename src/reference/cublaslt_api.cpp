#include "reference/cublaslt_api.hpp"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {

CublasLtApi load() {
  // By soname first (the loader's path and the binary's run path), then in the toolkit the library was built with.
  const std::string soname = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
  std::string tried;
  void* handle = nullptr;
  for (const std::string& name : {soname, std::string(TILEGEMM_CUDA_LIBRARY_DIR) + "/" + soname}) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* why = dlerror();
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", name, why ? why : "not found");
  }
  if (handle == nullptr) throw RuntimeError("cuBLASLt is not available (needed by the cuBLAS(Lt) paths): " + tried);
  CublasLtApi api;
#define TILEGEMM_CUBLASLT_RESOLVE(name)                                  \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) throw RuntimeError(fmt::format("cuBLASLt ({}) has no {}", soname, #name));
  TILEGEMM_CUBLASLT_FUNCTIONS(TILEGEMM_CUBLASLT_RESOLVE)
#undef TILEGEMM_CUBLASLT_RESOLVE
  return api;  // the handle stays open for the life of the process
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load();  // a throwing first call leaves it unset: the next one tries again
  return api;
}

}  // namespace tilegemm
