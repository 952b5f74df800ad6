// Named HardwareModel presets. Sources, per preset, in the comments; FLOP/cycle/SM is derived as
// datasheet dense TFLOP/s ÷ (SMs × the clock the datasheet quotes it at), so peak_flops() reproduces the
// datasheet exactly.
#include <algorithm>
#include <functional>
#include <map>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// H100 SXM5 (NVIDIA H100 datasheet and Hopper tuning guide): 132 SMs; dense bf16 989.4 TFLOP/s, fp8/int8
// 1978.9, tf32 494.7 at 1830 MHz → 4096 / 8192 / 2048 FLOP/cycle/SM. CUDA-core fp32: 128 FFMA lanes per SM
// = 256 FLOP/cycle. 3.35 TB/s HBM3, 50 MiB L2 (what cudaDeviceProp reports). 228 KiB shared memory per SM,
// 227 KiB (232448 B) opt-in per block, 1 KiB reserved per resident block. 64K registers per SM, 255 per
// thread, allocated per warp in units of 256 (= 8 per thread). 2048 threads, 32 blocks per SM; portable
// cluster size 8. Hopper has no int4 or fp4 tensor-core path.
HardwareModel h100_sxm() {
  HardwareModel hw;
  hw.name = "h100-sxm";
  hw.num_sms = 132;
  hw.sm_clock_mhz = 1830;
  hw.flop_per_cycle_bf16 = 4096;
  hw.flop_per_cycle_fp8 = 8192;
  hw.flop_per_cycle_int8 = 8192;
  hw.flop_per_cycle_tf32 = 2048;
  hw.flop_per_cycle_fp4 = 0;
  hw.flop_per_cycle_int4 = 0;
  hw.flop_per_cycle_fp32_cuda_core = 256;
  hw.hbm_gbps = 3350;
  hw.l2_bytes = 50 * kMiB;
  hw.smem_per_sm_bytes = 228 * 1024;
  hw.smem_per_block_bytes = 227 * 1024;
  hw.smem_reserved_per_block_bytes = 1024;
  hw.regs_per_sm = 65536;
  hw.max_regs_per_thread = 255;
  hw.reg_alloc_granularity = 8;
  hw.max_threads_per_sm = 2048;
  hw.max_blocks_per_sm = 32;
  hw.max_cluster_size = 8;
  return hw;
}

// H800 SXM: the export variant of H100 SXM; same SMs, tensor cores and 3.35 TB/s HBM3 (only NVLink and
// fp64 are cut), so the ledger sees an H100.
HardwareModel h800() {
  HardwareModel hw = h100_sxm();
  hw.name = "h800";
  return hw;
}

// H200 SXM (NVIDIA H200 datasheet): the H100 SXM compute die with 141 GB HBM3e at 4.8 TB/s. L2 is 60 MiB as
// reported by cudaDeviceProp on an H200. Measured copy bandwidth there is 4272 GB/s
// (read + write); pass it with --hbm-gbps 4272 for an achievable rather than datasheet floor.
HardwareModel h200() {
  HardwareModel hw = h100_sxm();
  hw.name = "h200";
  hw.hbm_gbps = 4800;
  hw.l2_bytes = 60 * kMiB;
  return hw;
}

// H20 (NVIDIA H20 product brief as reported publicly; less certain than the others): 78 SMs, dense bf16
// ~148 TFLOP/s, fp8/int8 ~296, tf32 ~74, 4.0 TB/s HBM3 (96 GB), 60 MiB L2. Its tensor throughput per SM is
// cut, so FLOP/cycle/SM is derived from those totals at the H100 quoting clock (1830 MHz). The SM itself
// (shared memory, registers, threads) is Hopper's, hence the h100 values for those and for CUDA-core fp32.
HardwareModel h20() {
  HardwareModel hw = h100_sxm();
  hw.name = "h20";
  hw.num_sms = 78;
  const double cycles_per_s_all_sms = 78 * 1830e6;
  hw.flop_per_cycle_bf16 = 148e12 / cycles_per_s_all_sms;
  hw.flop_per_cycle_fp8 = 296e12 / cycles_per_s_all_sms;
  hw.flop_per_cycle_int8 = 296e12 / cycles_per_s_all_sms;
  hw.flop_per_cycle_tf32 = 74e12 / cycles_per_s_all_sms;
  hw.hbm_gbps = 4000;
  hw.l2_bytes = 60 * kMiB;
  return hw;
}

// Ascend 950DT as DeepGEMM-Ascend's HWDesc models it (its heuristics.hpp): 32 AI cores at
// 1650 MHz, bf16 8192 FLOP/cycle/core and every other type at 8192·16/bits (fp8/int8 16384, fp4/int4 32768,
// fp32/tf32 4096 on the Cube; "CUDA core" fp32 here means the Cube's fp32 rate), 3500 GB/s, 128 MiB L2.
// Buffers: L0C 256 KiB (DeepGEMM-Ascend's common.hpp); L1 512 KiB, L0A and L0B 64 KiB each
// (CANN's Ascend910_95 arch constants, e.g. ops-transformer gmm/common/groupedmatmul_act/utils/arch.h; the
// seeds give no L1/L0A values for the 950). Shared memory = L1; one block per core; no register file model.
HardwareModel ascend_950dt() {
  HardwareModel hw;
  hw.name = "ascend-950dt";
  hw.num_sms = 32;
  hw.sm_clock_mhz = 1650;
  const double bf16 = 8192;
  auto at_bits = [&](int bits) { return bf16 * 16 / bits; };
  hw.flop_per_cycle_bf16 = bf16;
  hw.flop_per_cycle_fp8 = at_bits(8);
  hw.flop_per_cycle_int8 = at_bits(8);
  hw.flop_per_cycle_fp4 = at_bits(4);
  hw.flop_per_cycle_int4 = at_bits(4);
  hw.flop_per_cycle_tf32 = at_bits(32);
  hw.flop_per_cycle_fp32_cuda_core = at_bits(32);
  hw.hbm_gbps = 3500;
  hw.l2_bytes = 128 * kMiB;
  hw.ascend_l1_bytes = 512 * 1024;
  hw.ascend_l0a_bytes = 64 * 1024;
  hw.ascend_l0b_bytes = 64 * 1024;
  hw.ascend_l0c_bytes = 256 * 1024;
  hw.smem_per_sm_bytes = hw.ascend_l1_bytes;
  hw.smem_per_block_bytes = hw.ascend_l1_bytes;
  hw.max_blocks_per_sm = 1;
  return hw;
}

const std::map<std::string, std::function<HardwareModel()>>& presets() {
  static const std::map<std::string, std::function<HardwareModel()>> table = {
      {"h100-sxm", h100_sxm}, {"h800", h800}, {"h200", h200}, {"h20", h20}, {"ascend-950dt", ascend_950dt},
  };
  return table;
}

}  // namespace

std::vector<std::string> hardware_preset_names() {
  // Fixed presentation order (NVIDIA first, by generation), not the map's alphabetical one.
  return {"h100-sxm", "h800", "h200", "h20", "ascend-950dt"};
}

HardwareModel hardware_preset(const std::string& name, const std::string& argument) {
  auto it = presets().find(name);
  if (it == presets().end()) {
    std::string names;
    for (const auto& n : hardware_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw InvalidArgument(argument, "a hardware preset (one of " + names + ")", "'" + name + "'");
  }
  return it->second();
}

HardwareModel sm90_hardware_preset(const std::string& name, const std::string& argument) {
  const HardwareModel hw = hardware_preset(name, argument);
  if (hw.ascend_l1_bytes == 0) return hw;  // NVIDIA presets leave the Ascend buffers at 0
  std::string hopper;
  for (const std::string& preset : hardware_preset_names())
    if (hardware_preset(preset, argument).ascend_l1_bytes == 0) hopper += (hopper.empty() ? "" : ", ") + preset;
  throw InvalidArgument(argument,
                        fmt::format("an NVIDIA Hopper preset ({}) for the SM90 heuristics and kernels", hopper),
                        fmt::format("'{}' (not NVIDIA; tilegemm ledger models it)", name));
}

}  // namespace tilegemm
