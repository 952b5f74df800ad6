#include "timer/cupti_api.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::bench_detail {

std::vector<std::string> cupti_library_candidates() {
  const std::string& chosen = env().cupti_library;
  if (!chosen.empty()) return {chosen};
  const std::string lib = TILEGEMM_CUDA_LIBRARY_DIR;
  const std::string toolkit = lib.substr(0, lib.find_last_of('/'));  // <toolkit>/lib64 or .../targets/<arch>/lib
  return {"libcupti.so.13",
          "libcupti.so.12",
          "libcupti.so",
          lib + "/libcupti.so",
          toolkit + "/extras/CUPTI/lib64/libcupti.so",
          "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
}

#if TILEGEMM_HAVE_CUPTI_HEADERS
namespace {

template <class Fn>
void bind(void* handle, const std::string& path, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) throw RuntimeError(fmt::format("CUPTI library {} lacks {}", path, symbol));
}

}  // namespace

CuptiApi load_cupti(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      tried += fmt::format("\n  {}: {}", path, dlerror());
      continue;
    }
    CuptiApi api;
    api.path = path;
    bind(handle, path, "cuptiActivityEnable", api.activity_enable);
    bind(handle, path, "cuptiActivityDisable", api.activity_disable);
    bind(handle, path, "cuptiActivityRegisterCallbacks", api.activity_register_callbacks);
    bind(handle, path, "cuptiActivityFlushAll", api.activity_flush_all);
    bind(handle, path, "cuptiActivityGetNextRecord", api.activity_get_next_record);
    bind(handle, path, "cuptiActivityPushExternalCorrelationId", api.push_external_correlation_id);
    bind(handle, path, "cuptiActivityPopExternalCorrelationId", api.pop_external_correlation_id);
    bind(handle, path, "cuptiGetResultString", api.get_result_string);
    return api;  // the handle stays open for the life of the process
  }
  throw RuntimeError(
      fmt::format("the kernel timer needs CUPTI (libcupti), and none loaded; set TILEGEMM_CUPTI_LIBRARY to its path. "
                  "Tried:{}",
                  tried));
}

const CuptiApi& cupti_api() {
  static const CuptiApi api =
      load_cupti(cupti_library_candidates());  // a failed load throws and is retried on the next call
  return api;
}

void cupti_check(const CuptiApi& api, CUptiResult status, const char* what) {
  if (status == CUPTI_SUCCESS) return;
  const char* message = "unknown CUPTI error";
  api.get_result_string(status, &message);
  throw RuntimeError(fmt::format("{} failed: {} ({})", what, message, static_cast<int>(status)));
}
#endif

}  // namespace tilegemm::bench_detail
