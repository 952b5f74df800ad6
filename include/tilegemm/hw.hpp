#pragma once
// HardwareModel: every hardware number the ledger and the heuristics use, in one struct.
// Presets come from datasheets and the seeds; from_device() reads the running GPU.
#include <string>
#include <vector>

#include "tilegemm/dtype.hpp"

namespace tilegemm {

// Lane instructions an NVIDIA SM issues per cycle: four schedulers, one warp instruction (32 lanes) each. The issue
// floors of the kernels that decode weights in registers divide by it.
constexpr double kLaneOpsPerSmCycle = 4 * 32;

struct HardwareModel {
  std::string name;         // preset name or the device's name
  int num_sms = 0;          // SMs (or AI cores for Ascend)
  double sm_clock_mhz = 0;  // clock the tensor-core peaks are quoted at
  // Dense tensor-core FLOP per cycle per SM, by operand type. 0 = not supported.
  double flop_per_cycle_bf16 = 0;  // also fp16
  double flop_per_cycle_fp8 = 0;
  double flop_per_cycle_int8 = 0;  // OP/cycle
  double flop_per_cycle_tf32 = 0;
  double flop_per_cycle_fp4 = 0;             // 0 where the tensor cores have no fp4 path
  double flop_per_cycle_int4 = 0;            // 0 where the tensor cores have no int4 path (Hopper dropped it)
  double flop_per_cycle_fp32_cuda_core = 0;  // FFMA = 2 FLOP
  double hbm_gbps = 0;                       // DRAM bandwidth, GB/s (1e9 bytes)
  double l2_bytes = 0;
  int smem_per_sm_bytes = 0;
  int smem_per_block_bytes = 0;           // opt-in maximum dynamic shared memory per block
  int smem_reserved_per_block_bytes = 0;  // taken by the system from the SM's pool for every resident block
  int regs_per_sm = 0;                    // 32-bit registers
  int max_regs_per_thread = 0;
  int reg_alloc_granularity = 0;  // registers are allocated per warp in units of this many per thread
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_cluster_size = 1;  // portable cluster size limit
  // Ascend/CATLASS buffers (0 on NVIDIA): L1, L0A, L0B, L0C capacities in bytes.
  int ascend_l1_bytes = 0, ascend_l0a_bytes = 0, ascend_l0b_bytes = 0, ascend_l0c_bytes = 0;

  // Dense peak of the tensor cores for operands of type `t`, FLOP/s. Throws InvalidArgument if unsupported.
  double peak_flops(DType t) const;
  double hbm_bytes_per_s() const { return hbm_gbps * 1e9; }
};

// Named presets: "h100-sxm", "h800", "h200", "h20", "ascend-950dt". Throws InvalidArgument naming
// `argument` for an unknown name.
HardwareModel hardware_preset(const std::string& name, const std::string& argument = "--hw");
std::vector<std::string> hardware_preset_names();
// The preset `name` for the SM90 (Hopper) heuristics and JIT kernels; InvalidArgument naming `argument` for a
// preset of other hardware (ascend-950dt), which would otherwise get an sm_90 kernel config planned for it.
HardwareModel sm90_hardware_preset(const std::string& name, const std::string& argument = "--hw");

// Applies overrides from a JSON object (keys = field names above, e.g. {"hbm_gbps": 4272}). Unknown keys,
// wrong types and malformed JSON throw InvalidArgument naming `argument`. This and hardware_to_json are in
// tilegemm_tools (the command line's --hw-json, with nlohmann/json), not in the core.
void apply_hardware_overrides_json(HardwareModel& hw, const std::string& json_text,
                                   const std::string& argument = "--hw-json");

// Fills the model from the CUDA runtime of `device`. Throws RuntimeError when no GPU is present; the
// library itself never needs a GPU to load.
HardwareModel hardware_from_device(int device = 0);
bool gpu_available();
// The CUDA devices this process sees, counted on the first call (0 without a driver or GPU): the count cannot change
// while a process runs, and the per-call paths (the scale-layout helpers, a new plan's device check) need not ask the
// runtime again each time.
int cuda_device_count();

// The model as a JSON object with the same keys apply_hardware_overrides_json accepts.
std::string hardware_to_json(const HardwareModel& hw);

}  // namespace tilegemm
