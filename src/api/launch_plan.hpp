#pragma once
// A GEMM call checked once and launched many times. Each entry point of tilegemm/gemm.hpp and fp8_gemm.hpp is
// a factory here that runs every check of the call (InvalidArgument naming the argument) and returns a plan,
// then the plan's run: the C++ entry points run the plan they have just made; the Python package keeps plans
// per argument signature, so a call on a signature it has seen runs a plan with no check at all.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "kernels/sm90_launch_reuse.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::api {

// The process settings a plan was checked under: what DG_* variables said (reload_env bumps the generation)
// and the deterministic switch, both read by the checks and the desc.
struct PlanSettings {
  unsigned env_generation = 0;
  bool deterministic = false;
  bool operator==(const PlanSettings&) const = default;
};
PlanSettings current_plan_settings();  // one read of env()

class LaunchPlan {
 public:
  static constexpr int kMaxTensors = 7;
  // The family's launch on `views`: the plan's tensors with this run's pointers (absent ones all zero).
  using Runner = void (*)(const LaunchPlan& plan, const TensorView* views, void* stream);
  // What a run does: nothing (an empty output), only write C or zeros into D (K = 0), or launch the kernel.
  enum class Work { kNone, kFill, kKernel };

  // `tensors` in the family's order, null for an absent optional one, with the pointers of the checked call.
  LaunchPlan(std::initializer_list<const TensorView*> tensors, int num_sms, Runner runner);

  int num_tensors() const { return num_tensors_; }
  int num_sms() const { return num_sms_; }
  bool present(int i) const { return present_[i]; }
  const PlanSettings& settings() const { return settings_; }

  // Whether a run on `pointers` (num_tensors() of them, 0 for absent tensors) under `num_sms` and the current
  // settings is a run the checks passed: the checks read the pointers only for null, the address modulo 16
  // and which tensors share one (C given as D), so those must be as in the checked call.
  bool admits(const std::uintptr_t* pointers, int num_sms) const;
  bool admits_pointers(const std::uintptr_t* pointers) const;
  // Runs on `pointers` (admits() must hold) on `stream`, the plan's device current.
  void run(const std::uintptr_t* pointers, void* stream) const;
  // Runs on the checked call's own pointers.
  void run(void* stream) const;

  // The heuristics' config for `desc` on the current device, selected on the first run that needs it.
  const GemmConfig& config() const;

  // What the family's runner reads, filled by the factory.
  GemmDesc desc;
  Work work = Work::kKernel;
  // Sets `work` for a problem with an empty output (nothing to do) or no K (only D to fill); true when the plan then
  // launches no kernel.
  bool without_kernel(bool empty_output, bool empty_k) {
    work = empty_output ? Work::kNone : empty_k ? Work::kFill : Work::kKernel;
    return work != Work::kKernel;
  }
  std::vector<int> ks;  // K-grouped: the group sizes on the host
  // The kernel and tensor maps of the previous run, for the next (BF16 and FP8 families' launchers).
  mutable kernels::Sm90LaunchReuse reuse;
  mutable kernels::Sm90Fp8LaunchReuse fp8_reuse;

 private:
  TensorView views_[kMaxTensors]{};
  bool present_[kMaxTensors]{};
  bool null_[kMaxTensors]{};
  std::uint8_t align_[kMaxTensors]{};  // address modulo 16
  std::uint64_t same_ = 0;             // bit i * kMaxTensors + j (i < j): tensors i and j share an address
  int num_tensors_ = 0;
  int num_sms_ = 0;
  PlanSettings settings_;
  Runner runner_ = nullptr;
  mutable std::once_flag config_once_;
  mutable GemmConfig config_;
};

using Plan = std::shared_ptr<const LaunchPlan>;

// The kernel a run of `plan` launches on hardware `hw` (a preset works without a GPU), for precompiling; none when
// its runs launch no kernel (an empty output, K = 0).
std::optional<jit::KernelSpec> plan_kernel_spec(const LaunchPlan& plan, const HardwareModel& hw);
// The kernels of many plans, on `jobs` threads (0 = all cores): the heuristics take milliseconds per new problem
// size, which for every M of a serving range is most of a precompile's time. Duplicates are left to jit::precompile.
std::vector<jit::KernelSpec> plan_kernel_specs(const std::vector<const LaunchPlan*>& plans, const HardwareModel& hw,
                                               int jobs);

// One factory per entry point, with its arguments (options.num_sms as num_sms) and its checks. The tensor
// order of each plan is the argument order: views a, b, d, c; FP8 a, sfa, b, sfb, d, then c or the group
// tensor.
// einsum 'bmk,bnk->mn': D[M, N] = C + Σ_b A[b] · B[b]ᵀ, a [B, M, K] and b [B, N, K] K-major (GemmType::kBatchReduced).
Plan plan_bf16_batch_reduced_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                                  int num_sms);
Plan plan_bf16_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c, int num_sms);
Plan plan_m_grouped_bf16_gemm_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                         const TensorView& grouped_layout, bool use_psum_layout, int num_sms);
Plan plan_m_grouped_bf16_gemm_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                     const TensorView& masked_m, int expected_m, int num_sms);
// Tensors a, b, d, ks_tensor, c.
Plan plan_k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                            const std::vector<int>& ks, const TensorView& ks_tensor,
                                            const TensorView* c, int num_sms);
// int8 x int8 (tilegemm/int8_gemm.hpp); tensors a, b, scale_a, scale_b, d.
Plan plan_int8_gemm(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
                    const TensorView& d, int num_sms);
// 1D2D when c is null and per_token_b is false (the recipe has no C); 1D1D when per_token_b is true.
Plan plan_fp8_gemm(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                   const TensorView& d, const TensorView* c, bool per_token_b, int num_sms);
// 1D2D on 2-D operands with D's columns remapped per head (fp8_gemm_1d2d_skip_head_mid); tensors a, sfa, b, sfb, d.
Plan plan_fp8_gemm_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                 const TensorView& d, const HeadSplits& head_splits, int num_sms);
// expected_m: with use_psum_layout, a hint of rows per group for the heuristics (DeepGEMM's
// expected_m_for_psum_layout); 0 for none.
Plan plan_m_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                        const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                        bool use_psum_layout, int num_sms, int expected_m = 0);
Plan plan_m_grouped_fp8_gemm_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                    const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                    int expected_m, int num_sms);
// Tensors a, sfa, b, sfb, d, ks_tensor, c.
Plan plan_k_grouped_fp8_gemm_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                        const TensorView& sfb, const TensorView& d, const std::vector<int>& ks,
                                        const TensorView& ks_tensor, const TensorView* c, int num_sms);

}  // namespace tilegemm::api
