// CUDA-graph timing: the calls of one sample run back to back from a graph, so the CPU launch overhead
// and the gaps between launches are not in the numbers.
#include "timer/graph_timer.hpp"

#include <map>
#include <mutex>

#include "timer/device_buffer.hpp"

namespace tilegemm::bench_detail {

namespace {

// Ends a capture left open by an exception from `fn`, so the stream is usable afterwards.
class CaptureGuard {
 public:
  explicit CaptureGuard(cudaStream_t stream) : stream_(stream) {
    // Relaxed: the library may call CUDA APIs that are unsafe during a global capture (e.g. a first
    // cudaFuncSetAttribute); they are legal here because they do not touch the captured stream.
    cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  }
  cudaGraph_t end() {
    cudaGraph_t graph = nullptr;
    open_ = false;
    cuda_check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture (was fn capturable?)");
    return graph;
  }
  ~CaptureGuard() {
    if (!open_) return;
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // the capture error was already reported by the exception in flight
  }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;

 private:
  cudaStream_t stream_;
  bool open_ = true;
};

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

}  // namespace

cudaStream_t capture_stream(int device) {
  static std::mutex mutex;
  static std::map<int, cudaStream_t> streams;  // never destroyed: lives as long as the process
  std::lock_guard lock(mutex);
  auto it = streams.find(device);
  if (it != streams.end()) return it->second;
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  streams.emplace(device, stream);
  return stream;
}

std::vector<double> time_with_graph(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream,
                                    const GraphPlan& plan, const std::function<void()>& flush_l2) {
  Graph g;
  {
    CaptureGuard capture(stream);
    for (int i = 0; i < plan.calls_per_graph; ++i) fn(stream);
    g.graph = capture.end();
  }
  cuda_check(cudaGraphInstantiate(&g.exec, g.graph, 0), "cudaGraphInstantiate");
  // One untimed replay: uploads the graph to the device, as the first call does for the events backend.
  cuda_check(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch(upload)");

  EventPool ev(2 * static_cast<std::size_t>(plan.replays));
  for (int r = 0; r < plan.replays; ++r) {
    flush_l2();
    cuda_check(cudaEventRecord(ev[2 * r], stream), "cudaEventRecord(start)");
    cuda_check(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch");
    cuda_check(cudaEventRecord(ev[2 * r + 1], stream), "cudaEventRecord(end)");
  }
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(graph replays)");
  std::vector<double> samples_us(plan.replays);
  for (int r = 0; r < plan.replays; ++r) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]), "cudaEventElapsedTime");
    samples_us[r] = 1e3 * ms / plan.calls_per_graph;
  }
  return samples_us;
}

}  // namespace tilegemm::bench_detail
