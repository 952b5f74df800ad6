#include "api/launch_plan.hpp"

#include <exception>

#include "api/device_context.hpp"
#include "core/parallel_for.hpp"
#include "core/process_switches.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/sm90_fp8_gemm.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::api {

PlanSettings current_plan_settings() {
  const Env& settings = env();  // read once: each read takes the environment's lock
  return {settings.generation, deterministic_switch().resolve(settings.deterministic)};
}

LaunchPlan::LaunchPlan(std::initializer_list<const TensorView*> tensors, int num_sms, Runner runner)
    : num_tensors_(static_cast<int>(tensors.size())),
      num_sms_(num_sms),
      settings_(current_plan_settings()),
      runner_(runner) {
  TILEGEMM_REQUIRE(num_tensors_ <= kMaxTensors, "tensors", fmt::format("at most {} tensors", kMaxTensors),
                   std::to_string(num_tensors_));
  int i = 0;
  for (const TensorView* t : tensors) {
    present_[i] = t != nullptr;
    if (t != nullptr) {
      views_[i] = *t;
      const auto address = reinterpret_cast<std::uintptr_t>(t->data);
      null_[i] = address == 0;
      align_[i] = static_cast<std::uint8_t>(address % 16);
    }
    ++i;
  }
  for (int a = 0; a < num_tensors_; ++a)
    for (int b = a + 1; b < num_tensors_; ++b)
      if (present_[a] && present_[b] && views_[a].data == views_[b].data)
        same_ |= std::uint64_t{1} << (a * kMaxTensors + b);
}

bool LaunchPlan::admits_pointers(const std::uintptr_t* pointers) const {
  std::uint64_t same = 0;
  for (int a = 0; a < num_tensors_; ++a) {
    const std::uintptr_t p = pointers[a];
    if (!present_[a]) {
      if (p != 0) return false;
      continue;
    }
    if ((p == 0) != null_[a] || p % 16 != align_[a]) return false;
    for (int b = a + 1; b < num_tensors_; ++b)
      if (present_[b] && pointers[b] == p) same |= std::uint64_t{1} << (a * kMaxTensors + b);
  }
  return same == same_;
}

bool LaunchPlan::admits(const std::uintptr_t* pointers, int num_sms) const {
  return num_sms == num_sms_ && admits_pointers(pointers) && current_plan_settings() == settings_;
}

void LaunchPlan::run(const std::uintptr_t* pointers, void* stream) const {
  TensorView views[kMaxTensors];
  for (int i = 0; i < num_tensors_; ++i) {
    views[i] = views_[i];
    views[i].data = reinterpret_cast<void*>(pointers[i]);
  }
  runner_(*this, views, stream);
}

void LaunchPlan::run(void* stream) const {
  runner_(*this, views_, stream);
}

const GemmConfig& LaunchPlan::config() const {
  // Once per plan (a failed selection, e.g. no GPU, is retried by the next run).
  std::call_once(config_once_, [this] {
    GemmOptions options;
    options.num_sms = num_sms_;
    config_ = select_config_for_current_device(desc, options);
  });
  return config_;
}

std::optional<jit::KernelSpec> plan_kernel_spec(const LaunchPlan& plan, const HardwareModel& hw) {
  if (plan.work != LaunchPlan::Work::kKernel) return std::nullopt;
  GemmOptions options;
  options.num_sms = plan.num_sms();
  const GemmConfig config = select_config_on(plan.desc, hw, options);
  return is_fp8_desc(plan.desc) ? kernels::sm90_fp8_gemm_spec(plan.desc, config)
                                : kernels::sm90_bf16_gemm_spec(plan.desc, config);
}

std::vector<jit::KernelSpec> plan_kernel_specs(const std::vector<const LaunchPlan*>& plans, const HardwareModel& hw,
                                               int jobs) {
  TILEGEMM_REQUIRE(jobs >= 0, "jobs", ">= 0 (0 = all cores)", std::to_string(jobs));
  std::vector<std::optional<jit::KernelSpec>> found(plans.size());
  std::exception_ptr failure;
  std::mutex failure_mutex;
  parallel_for(plans.size(), worker_threads(jobs, plans.size()), [&](std::size_t i) {
    try {
      found[i] = plan_kernel_spec(*plans[i], hw);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  std::vector<jit::KernelSpec> specs;
  for (auto& spec : found)
    if (spec) specs.push_back(std::move(*spec));
  return specs;
}

}  // namespace tilegemm::api
