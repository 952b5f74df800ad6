// HardwareModel from the CUDA runtime. cudart is static and only the runtime API is used, so on a machine
// without a driver or GPU these calls return an error code instead of failing to load.
#include <string>

#include <cuda_runtime_api.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return value;
}

bool contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

// The runtime has no query for tensor-core throughput, so the per-SM FLOP/cycle (and the clock the
// datasheet quotes it at) come from the preset of the same part. Only Hopper (sm_90) is modelled.
HardwareModel base_for(const cudaDeviceProp& prop) {
  if (prop.major != 9) return HardwareModel{};
  const std::string name = prop.name;
  if (contains(name, "H200")) return hardware_preset("h200");
  if (contains(name, "H800")) return hardware_preset("h800");
  if (contains(name, "H20")) return hardware_preset("h20");
  return hardware_preset("h100-sxm");
}

}  // namespace

int cuda_device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // leave no error behind for the next runtime call
      n = 0;
    }
    return n;
  }();
  return count;
}

bool gpu_available() {
  return cuda_device_count() > 0;
}

HardwareModel hardware_from_device(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw RuntimeError(fmt::format("hardware_from_device: no CUDA GPU available ({})",
                                   err != cudaSuccess ? cudaGetErrorString(err) : "0 devices"));
  }
  TILEGEMM_REQUIRE(device >= 0 && device < count, "device", fmt::format("an index in [0, {})", count),
                   std::to_string(device));
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    throw RuntimeError(fmt::format("hardware_from_device: cudaGetDeviceProperties({}) failed", device));
  }

  HardwareModel hw = base_for(prop);
  hw.name = prop.name;
  hw.num_sms = prop.multiProcessorCount;
  if (hw.sm_clock_mhz == 0) hw.sm_clock_mhz = attribute(cudaDevAttrClockRate, device) / 1000.0;  // kHz
  // DDR: two transfers per memory clock over the whole bus. Datasheet-like (H200: ~4.9 TB/s), not measured.
  const double mem_khz = attribute(cudaDevAttrMemoryClockRate, device);
  const double bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
  if (mem_khz > 0 && bus_bits > 0) hw.hbm_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8) / 1e9;
  hw.l2_bytes = prop.l2CacheSize;
  hw.smem_per_sm_bytes = static_cast<int>(prop.sharedMemPerMultiprocessor);
  hw.smem_per_block_bytes = static_cast<int>(prop.sharedMemPerBlockOptin);
  hw.smem_reserved_per_block_bytes = static_cast<int>(prop.reservedSharedMemPerBlock);
  hw.regs_per_sm = prop.regsPerMultiprocessor;
  hw.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  hw.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  if (hw.max_regs_per_thread == 0) hw.max_regs_per_thread = 255;
  if (hw.reg_alloc_granularity == 0) hw.reg_alloc_granularity = 8;
  return hw;
}

}  // namespace tilegemm
