#pragma once
// What a launch plan (src/api/launch_plan.hpp) keeps of its SM90 launches from one run to the next: the
// kernel, and the parameter block whose tensor maps were encoded for the previous run's pointers. A run
// re-encodes only the maps of operands at another address (a weight operand never is), and finds no kernel by
// key.
#include <memory>
#include <mutex>
#include <vector>

#include "tilegemm/fp8_params.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

struct Sm90GemmOperands;
struct Sm90Fp8Operands;

// The address an operand's maps in the kept parameter block were encoded for. It is noted only once the encode
// succeeded: a failed encode leaves the operand marked stale, so the next run encodes it again.
struct EncodedAddress {
  const void* address = nullptr;
  bool valid = false;

  bool changed(const void* now) const { return !valid || address != now; }
  // Runs encode() when the address changed (or `force`), then notes it.
  template <class Encode>
  void update(const void* now, Encode&& encode, bool force = false) {
    if (!force && !changed(now)) return;
    valid = false;
    encode();
    address = now, valid = true;
  }
};

struct Sm90LaunchReuse {
  std::mutex mutex;  // a run holds it; a concurrent run of the same plan launches without reuse
  std::shared_ptr<const jit::CompiledKernel> kernel;
  GemmParams params{};
  EncodedAddress a, b, d;  // A with its tail map, B, D with its tail map
};

struct Sm90Fp8LaunchReuse {
  std::mutex mutex;  // as Sm90LaunchReuse's
  std::shared_ptr<const jit::CompiledKernel> kernel;
  Fp8GemmParams params{};
  EncodedAddress a, sfa, b, sfb, d;
  // K-grouped operands in DeepGEMM's layout: every launch's parameter block with its per-group maps, encoded for
  // group_pointers (a, sfa, b, sfb, d); a run at any other pointer encodes them all again.
  std::vector<Fp8GroupMapsParams<kFp8MaxGroupMaps>> group_chunks;
  const void* group_pointers[5] = {};
  bool group_chunks_valid = false;
};

// launch_sm90_bf16_gemm / launch_sm90_fp8_gemm for the runs of one plan: same desc, config, shapes and strides on
// every run, only the pointers change.
void launch_sm90_bf16_gemm_reusing(const GemmDesc& desc, const GemmConfig& config, const Sm90GemmOperands& ops,
                                   void* stream, Sm90LaunchReuse& reuse);
// K-grouped FP8 with a and b as 1-D tensors in DeepGEMM's layout (group g's K-major [rows, ks[g]] block after the
// previous groups'), read through per-group maps: one launch per desc.k_group_maps groups.
void launch_sm90_fp8_k_grouped_blocks(const GemmDesc& desc, const GemmConfig& config, const Sm90Fp8Operands& ops,
                                      const std::vector<int>& ks, void* stream, Sm90Fp8LaunchReuse& reuse);
void launch_sm90_fp8_gemm_reusing(const GemmDesc& desc, const GemmConfig& config, const Sm90Fp8Operands& ops,
                                  void* stream, Sm90Fp8LaunchReuse& reuse);

}  // namespace tilegemm::kernels
