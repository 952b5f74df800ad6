#pragma once
// A checked GEMM call as the extension keeps it (_C.Plan): the library's launch plan, the device it runs on and
// the renames its error messages need. _C.cpp makes plans; Plan.launch and the per-call fast path (_C_kept.cpp) run
// them.
#include <nanobind/nanobind.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tilegemm/errors.hpp"

#include "_device_scope.hpp"

#include "api/launch_plan.hpp"

namespace deep_gemm_ext {

// The C++ API names some arguments after its own parameters; users see DeepGEMM's names.
using Renames = std::vector<std::pair<std::string, std::string>>;

[[noreturn]] inline void rethrow_renamed(const tilegemm::InvalidArgument& e, const Renames& renames) {
  std::string message = e.what();
  for (const auto& [ours, theirs] : renames) {
    const std::string& arg = e.argument();
    if (arg == ours || arg.rfind(ours + "[", 0) == 0) {
      message = theirs + message.substr(ours.size());
      break;
    }
  }
  throw nanobind::value_error(message.c_str());
}

// Runs served by a kept plan and runs a kept plan turned down (pointers or settings not those it was checked with),
// for deep_gemm._plan_cache_info().
inline std::atomic<std::uint64_t> g_plan_hits{0}, g_plan_declines{0};

struct PyPlan {
  tilegemm::api::Plan plan;
  int device = 0;
  const Renames* renames = nullptr;

  // Runs the plan if it admits these pointers; false (nothing run) when it does not: then the call needs the
  // full checks and a new plan. `kept`: a run of a kept plan (counted in the statistics, before the run, which may
  // raise, e.g. without a GPU). The first run may compile the kernel (seconds) and lets other Python threads run
  // meanwhile; a kept plan's run is a launch of microseconds and keeps the GIL, as torch's own launches do.
  bool run(std::uintptr_t stream, int num_sms, const std::uintptr_t* pointers, bool kept) const {
    const bool admitted = plan->admits(pointers, num_sms);
    if (kept) (admitted ? g_plan_hits : g_plan_declines).fetch_add(1, std::memory_order_relaxed);
    if (!admitted) return false;
    const DeviceScope scope(device);
    try {
      if (kept) {
        plan->run(pointers, reinterpret_cast<void*>(stream));
      } else {
        nanobind::gil_scoped_release release;
        plan->run(pointers, reinterpret_cast<void*>(stream));
      }
    } catch (const tilegemm::InvalidArgument& e) {
      rethrow_renamed(e, *renames);
    }
    return true;
  }
};

}  // namespace deep_gemm_ext
