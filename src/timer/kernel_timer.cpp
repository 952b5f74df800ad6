// Kernel durations from CUPTI activity records. CUPTI hands records over in buffers, through two callbacks
// that may run on its own thread; the completed-buffer callback keeps only what the timer needs.
#include "timer/kernel_timer.hpp"

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "timer/cupti_api.hpp"
#include "timer/device_buffer.hpp"

namespace tilegemm::bench_detail {

#if TILEGEMM_HAVE_CUPTI_HEADERS
namespace {

constexpr std::size_t kActivityBufferBytes = 8 << 20;
constexpr CUpti_ExternalCorrelationKind kCallTag = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

struct KernelSpan {
  std::uint64_t start_ns = 0, end_ns = 0;
};

// What the callbacks collected since the last clear(). One timing at a time per process (timing_mutex).
struct Collected {
  std::mutex mutex;
  const CuptiApi* api = nullptr;
  std::unordered_map<std::uint32_t, std::uint64_t> call_of_correlation;  // CUDA correlation id → call tag
  std::unordered_map<std::uint32_t, std::vector<KernelSpan>> kernels_of_correlation;
  void clear() {
    std::lock_guard lock(mutex);
    call_of_correlation.clear();
    kernels_of_correlation.clear();
  }
};
Collected& collected() {
  static Collected c;
  return c;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  Collected& c = collected();
  {
    std::lock_guard lock(c.mutex);
    CUpti_Activity* record = nullptr;
    while (c.api && c.api->activity_get_next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        // start, end and correlationId sit at the same offsets in every kernel record version since CUDA 9.
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel9*>(record);
        c.kernels_of_correlation[kernel->correlationId].push_back({kernel->start, kernel->end});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* link = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (link->externalKind == kCallTag) c.call_of_correlation[link->correlationId] = link->externalId;
      }
    }
  }
  std::free(buffer);
}

// Enables the record kinds for its lifetime; the destructor also runs on an exception from fn. CUPTI links a
// tag to the CUDA calls made under it only while their API records (runtime and driver) are traced too; the
// timer reads none of those records itself.
class ActivityScope {
 public:
  explicit ActivityScope(const CuptiApi& api) : api_(api) {
    for (const CUpti_ActivityKind kind : kKinds) {
      cupti_check(api, api.activity_enable(kind), "cuptiActivityEnable");
      ++enabled_;
    }
  }
  void close() {
    for (; enabled_ > 0; --enabled_) api_.activity_disable(kKinds[enabled_ - 1]);
    api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // delivers every pending buffer now
  }
  ~ActivityScope() { close(); }
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  static constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                                  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  const CuptiApi& api_;
  int enabled_ = 0;
};

// Pops the call's correlation tag even when fn throws.
class CallTag {
 public:
  CallTag(const CuptiApi& api, std::uint64_t id) : api_(api) {
    cupti_check(api, api.push_external_correlation_id(kCallTag, id), "cuptiActivityPushExternalCorrelationId");
  }
  ~CallTag() {
    std::uint64_t id = 0;
    api_.pop_external_correlation_id(kCallTag, &id);
  }
  CallTag(const CallTag&) = delete;
  CallTag& operator=(const CallTag&) = delete;

 private:
  const CuptiApi& api_;
};

}  // namespace

std::vector<double> time_kernels(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, int calls,
                                 const std::function<void()>& flush_l2) {
  TILEGEMM_REQUIRE(calls >= 1, "calls", ">= 1", std::to_string(calls));
  const CuptiApi& api = cupti_api();
  static std::mutex timing_mutex;
  std::lock_guard timing(timing_mutex);
  Collected& c = collected();
  static std::once_flag registered;
  std::call_once(registered, [&] {
    {
      std::lock_guard lock(c.mutex);
      c.api = &api;
    }
    cupti_check(api, api.activity_register_callbacks(buffer_requested, buffer_completed),
                "cuptiActivityRegisterCallbacks");
  });
  api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // records of an earlier timing, if any
  c.clear();
  {
    ActivityScope scope(api);
    for (int i = 0; i < calls; ++i) {
      flush_l2();
      CallTag tag(api, static_cast<std::uint64_t>(i) + 1);  // 0 would be indistinguishable from "no tag"
      fn(stream);
    }
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(timed calls)");
    scope.close();
  }

  std::vector<double> samples_us(calls, 0.0);
  std::vector<int> kernels(calls, 0);
  std::size_t kernel_records = 0, tag_links = 0;  // for the error message: what CUPTI delivered at all
  {
    std::lock_guard lock(c.mutex);
    tag_links = c.call_of_correlation.size();
    for (const auto& [correlation, spans] : c.kernels_of_correlation) {
      kernel_records += spans.size();
      const auto call = c.call_of_correlation.find(correlation);
      if (call == c.call_of_correlation.end()) continue;  // a flush kernel, or another caller's work
      const std::uint64_t index = call->second - 1;
      if (index >= static_cast<std::uint64_t>(calls)) continue;
      for (const KernelSpan& span : spans) {
        samples_us[index] += 1e-3 * static_cast<double>(span.end_ns - span.start_ns);
        ++kernels[index];
      }
    }
  }
  c.clear();
  for (int i = 0; i < calls; ++i)
    if (kernels[i] == 0)
      throw RuntimeError(fmt::format(
          "the kernel timer saw no kernel for timed call {} of {}: the callable launched none, or CUPTI dropped "
          "its records (CUPTI delivered {} kernel records and {} tagged CUDA calls in all)",
          i + 1, calls, kernel_records, tag_links));
  return samples_us;
}

#else

std::vector<double> time_kernels(const std::function<void(cudaStream_t)>&, cudaStream_t, int,
                                 const std::function<void()>&) {
  throw RuntimeError("the kernel timer needs CUPTI's headers (cupti_activity.h), which this build did not find");
}

#endif

}  // namespace tilegemm::bench_detail
