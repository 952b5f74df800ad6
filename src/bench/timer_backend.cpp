// Names of the timer backends and the flush policy each implies (recorded in every report).
#include <fmt/format.h>

#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

std::string_view timer_backend_name(TimerBackend timer) {
  return timer == TimerBackend::kCudaGraph ? "cuda-graph" : "cuda-events";
}

TimerBackend parse_timer_backend(std::string_view name, const std::string& argument) {
  if (name == "cuda-events" || name == "events") return TimerBackend::kCudaEvents;
  if (name == "cuda-graph" || name == "graph") return TimerBackend::kCudaGraph;
  throw InvalidArgument(argument, "cuda-events (events) or cuda-graph (graph)", fmt::format("'{}'", name));
}

std::string flush_policy(TimerBackend timer, std::int64_t flush_bytes) {
  const double mib = static_cast<double>(flush_bytes) / (1 << 20);
  if (timer == TimerBackend::kCudaGraph)
    return fmt::format("{:.0f} MiB zeroed once before each graph replay (only its first call starts cold)",
                       mib);
  return fmt::format("{:.0f} MiB zeroed before each timed call", mib);
}

}  // namespace tilegemm
