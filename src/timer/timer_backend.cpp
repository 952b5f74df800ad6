// Names of the timer backends and the flush policy each implies (recorded in every report).
#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/timer.hpp"

namespace tilegemm {

std::string_view timer_backend_name(TimerBackend timer) {
  if (timer == TimerBackend::kCudaGraph) return "cuda-graph";
  if (timer == TimerBackend::kKernel) return "cupti-kernel";
  return "cuda-events";
}

TimerBackend parse_timer_backend(std::string_view name, const std::string& argument) {
  if (name == "cuda-events" || name == "events") return TimerBackend::kCudaEvents;
  if (name == "cuda-graph" || name == "graph") return TimerBackend::kCudaGraph;
  if (name == "cupti-kernel" || name == "kernel") return TimerBackend::kKernel;
  throw InvalidArgument(argument, "cuda-events (events), cuda-graph (graph) or cupti-kernel (kernel)",
                        fmt::format("'{}'", name));
}

std::string_view flush_mode_name(FlushMode mode) {
  return mode == FlushMode::kRead ? "read" : "zero";
}

FlushMode parse_flush_mode(std::string_view name, const std::string& argument) {
  if (name == "zero") return FlushMode::kZero;
  if (name == "read") return FlushMode::kRead;
  throw InvalidArgument(argument, "zero (memset, leaves the L2 dirty) or read (read-only pass, leaves it clean)",
                        fmt::format("'{}'", name));
}

std::string flush_policy(TimerBackend timer, std::int64_t flush_bytes, FlushMode mode) {
  const double mib = static_cast<double>(flush_bytes) / (1 << 20);
  const char* how = mode == FlushMode::kRead ? "read (not written, the L2 left clean)" : "zeroed";
  if (timer == TimerBackend::kCudaGraph)
    return fmt::format("{:.0f} MiB {} once before each graph replay (only its first call starts cold)", mib, how);
  return fmt::format("{:.0f} MiB {} before each timed call", mib, how);
}

}  // namespace tilegemm
