#pragma once
// The few CUPTI activity functions the kernel timer needs, loaded with dlopen on first use: the library then
// builds, loads and runs without CUPTI, and only `--timer kernel` asks for it. Internal to src/bench.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define TILEGEMM_HAVE_CUPTI_HEADERS 1
#else
#define TILEGEMM_HAVE_CUPTI_HEADERS 0
#endif

namespace tilegemm::bench_detail {

// Where the loader looks, in order: $TILEGEMM_CUPTI_LIBRARY alone when set; else the dynamic loader's search
// path, then the toolkit the library was built against (lib64/ and extras/CUPTI/lib64/).
std::vector<std::string> cupti_library_candidates();

#if TILEGEMM_HAVE_CUPTI_HEADERS
struct CuptiApi {
  std::string path;  // the file that was loaded
  CUptiResult (*activity_enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*activity_flush_all)(uint32_t) = nullptr;
  CUptiResult (*activity_get_next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*push_external_correlation_id)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult (*pop_external_correlation_id)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
  CUptiResult (*get_result_string)(CUptiResult, const char**) = nullptr;
};

// Loads the first of `candidates` that dlopen accepts. Throws RuntimeError naming TILEGEMM_CUPTI_LIBRARY and
// every path tried (with dlopen's reason) when none loads, or naming a missing symbol.
CuptiApi load_cupti(const std::vector<std::string>& candidates);
// load_cupti(cupti_library_candidates()), once per process (a failed load is retried on the next call).
const CuptiApi& cupti_api();

// Throws RuntimeError "<what> failed: <CUPTI's message>" unless `status` is CUPTI_SUCCESS.
void cupti_check(const CuptiApi& api, CUptiResult status, const char* what);
#endif

}  // namespace tilegemm::bench_detail
