// Environment capture for reports: GPU, clocks (nvidia-smi), versions, commit, date. Every field that an
// outside tool provides degrades to "unknown"/unavailable instead of failing the run.
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "bench/bench.hpp"
#include "bench/shell.hpp"
#include "reference/cublaslt_api.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

using bench_detail::run_shell;
using bench_detail::shell_quote;

namespace {
std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

// "1980 MHz" / "120.50 W" / "35" → the leading number; false for "[N/A]" and other text.
bool leading_number(const std::string& field, double& value) {
  const std::string t = trim(field);
  if (t.empty()) return false;
  char* end = nullptr;
  value = std::strtod(t.c_str(), &end);
  return end != t.c_str();
}
}  // namespace

GpuClocks parse_nvidia_smi_clocks(const std::string& line) {
  std::string first = line.substr(0, line.find('\n'));
  std::vector<std::string> fields;
  std::stringstream ss(first);
  for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
  GpuClocks c;
  if (fields.size() != 5) return c;
  double* targets[5] = {&c.sm_mhz, &c.mem_mhz, &c.max_sm_mhz, &c.power_w, &c.temperature_c};
  for (int i = 0; i < 5; ++i)
    if (!leading_number(fields[i], *targets[i])) return GpuClocks{};
  c.available = true;
  return c;
}

GpuClocks query_gpu_clocks(const std::string& pci_bus_id) {
  std::string command =
      "nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu "
      "--format=csv,noheader,nounits";
  if (!pci_bus_id.empty()) command += " --id=" + shell_quote(pci_bus_id);
  const auto out = run_shell(command);
  return out ? parse_nvidia_smi_clocks(*out) : GpuClocks{};
}

std::string git_commit_of(const std::string& source_dir) {
  const std::string git = "git -C " + shell_quote(source_dir);
  const auto head = run_shell(git + " rev-parse --short HEAD");
  if (!head || trim(*head).empty()) return "unknown";
  // Tracked changes only: untracked scratch files do not change what was built.
  const auto status = run_shell(git + " status --porcelain --untracked-files=no");
  const bool dirty = !status || !trim(*status).empty();
  return trim(*head) + (dirty ? "-dirty" : "");
}

std::string report_commit(const std::string& source_dir) {
  const char* from_env = std::getenv("TILEGEMM_COMMIT");
  if (from_env && *from_env) return trim(from_env);
  return git_commit_of(source_dir);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string baseline_identity(std::int64_t cublaslt_version) {
  // What src/reference/cublaslt.cpp issues: the same for every shape, so it is said once per report.
  return fmt::format(
      "cuBLASLt {}.{}.{}: cublasLtMatmul, FP32 compute (CUBLAS_COMPUTE_32F), first heuristic algorithm, "
      "32 MiB workspace",
      cublaslt_version / 10000, (cublaslt_version / 100) % 100, cublaslt_version % 100);
}

std::string fp8_baseline_identity(std::int64_t cublaslt_version) {
  // What src/reference/cublaslt_fp8.cpp issues for fp8 rows.
  return fmt::format(
      "cuBLASLt {}.{}.{}: cublasLtMatmul e4m3 x e4m3 -> bf16 (TN), FP32 compute, default accumulation, 1x128 "
      "(VEC128_32F) A / 128x128 (BLK128x128_32F) B scales; extra column: per-tensor (SCALAR_32F) scales; first "
      "heuristic algorithm, 32 MiB workspace",
      cublaslt_version / 10000, (cublaslt_version / 100) % 100, cublaslt_version % 100);
}

BenchEnvironment capture_environment(int device, const BenchOptions& timing, int num_sms) {
  if (!gpu_available()) throw RuntimeError("no CUDA GPU found: tilegemm bench needs an NVIDIA GPU");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    throw RuntimeError(fmt::format("cudaGetDeviceProperties({}) failed", device));
  BenchEnvironment e;
  e.gpu_name = prop.name;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) e.pci_bus_id = bus;
  e.sm_count = prop.multiProcessorCount;
  e.num_sms = num_sms;
  e.l2_bytes = prop.l2CacheSize;
  e.clocks_before = query_gpu_clocks(e.pci_bus_id);
  cudaDriverGetVersion(&e.driver_version);
  cudaRuntimeGetVersion(&e.runtime_version);
  e.cublaslt_version = static_cast<std::int64_t>(cublaslt().cublasLtGetVersion());
  e.tilegemm_version = TILEGEMM_VERSION;
  e.commit = report_commit(TILEGEMM_SOURCE_DIR);
  e.timer = std::string(timer_backend_name(timing.timer));
  e.flush_bytes = timing.flush_bytes > 0 ? timing.flush_bytes : default_flush_bytes(prop.l2CacheSize);
  e.flush_policy = flush_policy(timing.timer, e.flush_bytes, timing.flush);
  e.flush = std::string(flush_mode_name(timing.flush));
  e.baseline = baseline_identity(e.cublaslt_version);
  e.warmup_ms = timing.warmup_ms;
  e.rep_ms = timing.rep_ms;
  e.date_utc = utc_now_iso8601();
  const HardwareModel hw = hardware_from_device(device);
  e.peak_tflops = hw.peak_flops(DType::kBFloat16) * 1e-12;
  e.hbm_gbps = hw.hbm_gbps;
  e.copy_gbps = measure_copy_gbps(device);
  return e;
}

}  // namespace tilegemm
