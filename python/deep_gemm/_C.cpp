// deep_gemm._C: the tilegemm operations for the Python package, over plain values only. The Python layer
// reads pointers, dtypes, shapes, strides, the device index and the current stream from torch tensors, so
// this module never links libtorch and imports with any PyTorch build (or none).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tilegemm/dtype.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_fp4_gemm.hpp"
#include "tilegemm/fp8_gemm.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/hc_prenorm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/int8_gemm.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/reference.hpp"
#include "tilegemm/tensor_view.hpp"
#include "tilegemm/timer.hpp"

#include "_device_scope.hpp"
#include "_on_device.hpp"
#include "_plan.hpp"
#include "_view.hpp"

#include "api/launch_plan.hpp"
#include "layout/sf_layout_kernel.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::DeviceScope;
using deep_gemm_ext::g_plan_declines;
using deep_gemm_ext::g_plan_hits;
using deep_gemm_ext::on_device;
using deep_gemm_ext::PyPlan;
using deep_gemm_ext::Renames;
using deep_gemm_ext::require_device;
using deep_gemm_ext::rethrow_renamed;
using deep_gemm_ext::to_view;
using deep_gemm_ext::View;

void cublaslt(const std::string& layout, const View& a, const View& b, const View& d, const std::optional<View>& c,
              int device, std::uintptr_t stream) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  using Fn = void (*)(const tilegemm::TensorView&, const tilegemm::TensorView&, const tilegemm::TensorView&,
                      const tilegemm::TensorView*, void*);
  Fn fn = layout == "nt"   ? &tilegemm::cublaslt_gemm_nt
          : layout == "nn" ? &tilegemm::cublaslt_gemm_nn
          : layout == "tn" ? &tilegemm::cublaslt_gemm_tn
          : layout == "tt" ? &tilegemm::cublaslt_gemm_tt
                           : nullptr;
  if (fn == nullptr) throw nb::value_error(("layout: expected nt, nn, tn or tt, got " + layout).c_str());
  on_device(device, {}, [&] { fn(va, vb, vd, vc ? &*vc : nullptr, reinterpret_cast<void*>(stream)); });
}

// DeepSeek-V3.2's mHC pre-norm GEMM (include/tilegemm/hc_prenorm.hpp): checks, the split choice and the launch.
void tf32_hc_prenorm_gemm(const View& a, const View& b, const View& d, const View& sqr_sum,
                          std::optional<int> num_splits, int device, std::uintptr_t stream, int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d"), vs = to_view(sqr_sum, "sqr_sum");
  on_device(device, {}, [&] {
    tilegemm::tf32_hc_prenorm_gemm(va, vb, vd, vs, num_splits, {reinterpret_cast<void*>(stream), num_sms});
  });
}

// The SM90 FP8 x FP4 and MXFP8 GEMMs (include/tilegemm/fp8_fp4_gemm.hpp), behind the private deep_gemm._fp8_fp4_sm90
// until they have run on a GPU. Errors name DeepGEMM's (tensor, sf) pairs.
const Renames kFp8Fp4Renames{{"a", "a[0]"}, {"sfa", "a[1]"}, {"b", "b[0]"}, {"sfb", "b[1]"}};

// The dense ones (FP8 x FP4, MXFP8) take the same arguments.
using DenseSm90Gemm = void (*)(const tilegemm::TensorView&, const tilegemm::TensorView&, const tilegemm::TensorView&,
                               const tilegemm::TensorView&, const tilegemm::TensorView&, const tilegemm::GemmOptions&);

template <DenseSm90Gemm kGemm>
void dense_sm90(const View& a, const View& sfa, const View& b, const View& sfb, const View& d, int device,
                std::uintptr_t stream, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "sfa"), vb = to_view(b, "b"), vsb = to_view(sfb, "sfb");
  const auto vd = to_view(d, "d");
  on_device(device, kFp8Fp4Renames, [&] { kGemm(va, vsa, vb, vsb, vd, {reinterpret_cast<void*>(stream), num_sms}); });
}

void m_grouped_fp8_fp4_gemm_nt_masked_sm90(const View& a, const View& sfa, const View& b, const View& sfb,
                                           const View& d, const View& masked_m, int expected_m, int device,
                                           std::uintptr_t stream, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "sfa"), vb = to_view(b, "b"), vsb = to_view(sfb, "sfb");
  const auto vd = to_view(d, "d"), vm = to_view(masked_m, "masked_m");
  on_device(device, kFp8Fp4Renames, [&] {
    tilegemm::m_grouped_fp8_fp4_gemm_nt_masked(va, vsa, vb, vsb, vd, vm, expected_m,
                                               {reinterpret_cast<void*>(stream), num_sms});
  });
}

// Launch plans (src/api/launch_plan.hpp, _plan.hpp): the plan_* functions check a call and return its plan without
// launching anything; Plan.launch, or _C.run_kept (_C_kept.cpp), runs it on a later call's pointers and stream. The
// Python layer keeps plans per argument signature (deep_gemm/_plans.py).

template <typename Factory>
PyPlan make_plan(int device, const Renames& renames, Factory&& factory) {
  require_device(device);
  try {
    return PyPlan{factory(), device, &renames};
  } catch (const tilegemm::InvalidArgument& e) {
    rethrow_renamed(e, renames);
  }
}

const Renames kNoRenames{};
const Renames kInt8Renames{{"d", "out"}};
const Renames kKGroupedRenames{{"ks_tensor", "grouped_layout"}, {"ks", "ks_cpu"}};
// FP8: errors the library raises about sfa/sfb name DeepGEMM's a[1]/b[1], the scales' place in the (tensor, sf) pairs.
const Renames kFp8Renames{{"sfa", "a[1]"}, {"sfb", "b[1]"}, {"ks_tensor", "grouped_layout"}, {"ks", "ks_cpu"}};

PyPlan plan_bf16_gemm(const View& a, const View& b, const View& d, const std::optional<View>& c, int device,
                      int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  return make_plan(device, kNoRenames,
                   [&] { return tilegemm::api::plan_bf16_gemm(va, vb, vd, vc ? &*vc : nullptr, num_sms); });
}

// int8 x int8 with per-token and per-channel scales (deep_gemm.int8, tilegemm's own).
PyPlan plan_int8_gemm(const View& a, const View& b, const View& scale_a, const View& scale_b, const View& d, int device,
                      int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "out");
  const auto vsa = to_view(scale_a, "scale_a"), vsb = to_view(scale_b, "scale_b");
  return make_plan(device, kInt8Renames, [&] { return tilegemm::api::plan_int8_gemm(va, vb, vsa, vsb, vd, num_sms); });
}

PyPlan plan_bf16_batch_reduced_gemm(const View& a, const View& b, const View& d, const std::optional<View>& c,
                                    int device, int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  return make_plan(device, kNoRenames, [&] {
    return tilegemm::api::plan_bf16_batch_reduced_gemm(va, vb, vd, vc ? &*vc : nullptr, num_sms);
  });
}

PyPlan plan_m_grouped_contiguous(const View& a, const View& b, const View& d, const View& grouped_layout,
                                 bool use_psum_layout, int device, int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  const auto vl = to_view(grouped_layout, "grouped_layout");
  return make_plan(device, kNoRenames, [&] {
    return tilegemm::api::plan_m_grouped_bf16_gemm_contiguous(va, vb, vd, vl, use_psum_layout, num_sms);
  });
}

PyPlan plan_m_grouped_masked(const View& a, const View& b, const View& d, const View& masked_m, int expected_m,
                             int device, int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  const auto vm = to_view(masked_m, "masked_m");
  return make_plan(device, kNoRenames,
                   [&] { return tilegemm::api::plan_m_grouped_bf16_gemm_masked(va, vb, vd, vm, expected_m, num_sms); });
}

PyPlan plan_k_grouped_tn(const View& a, const View& b, const View& d, const std::vector<int>& ks_cpu,
                         const View& grouped_layout, const std::optional<View>& c, int device, int num_sms) {
  const auto va = to_view(a, "a"), vb = to_view(b, "b"), vd = to_view(d, "d");
  const auto vl = to_view(grouped_layout, "grouped_layout");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  return make_plan(device, kKGroupedRenames, [&] {
    return tilegemm::api::plan_k_grouped_bf16_gemm_tn_contiguous(va, vb, vd, ks_cpu, vl, vc ? &*vc : nullptr, num_sms);
  });
}

PyPlan plan_fp8_gemm(const View& a, const View& sfa, const View& b, const View& sfb, const View& d,
                     const std::optional<View>& c, bool one_d_one_d, int device, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "a[1]"), vb = to_view(b, "b"), vsb = to_view(sfb, "b[1]");
  const auto vd = to_view(d, "d");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  return make_plan(device, kFp8Renames, [&] {
    return tilegemm::api::plan_fp8_gemm(va, vsa, vb, vsb, vd, vc ? &*vc : nullptr, one_d_one_d, num_sms);
  });
}

PyPlan plan_fp8_gemm_skip_head_mid(const View& a, const View& sfa, const View& b, const View& sfb, const View& d,
                                   const std::tuple<int, int, int>& head_splits, int device, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "a[1]"), vb = to_view(b, "b"), vsb = to_view(sfb, "b[1]");
  const auto vd = to_view(d, "d");
  const auto [left, mid, right] = head_splits;
  return make_plan(device, kFp8Renames, [&] {
    return tilegemm::api::plan_fp8_gemm_skip_head_mid(va, vsa, vb, vsb, vd, {left, mid, right}, num_sms);
  });
}

PyPlan plan_m_grouped_fp8_contiguous(const View& a, const View& sfa, const View& b, const View& sfb, const View& d,
                                     const View& grouped_layout, bool use_psum_layout, int expected_m, int device,
                                     int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "a[1]"), vb = to_view(b, "b"), vsb = to_view(sfb, "b[1]");
  const auto vd = to_view(d, "d"), vl = to_view(grouped_layout, "grouped_layout");
  return make_plan(device, kFp8Renames, [&] {
    return tilegemm::api::plan_m_grouped_fp8_gemm_contiguous(va, vsa, vb, vsb, vd, vl, use_psum_layout, num_sms,
                                                             expected_m);
  });
}

PyPlan plan_m_grouped_fp8_masked(const View& a, const View& sfa, const View& b, const View& sfb, const View& d,
                                 const View& masked_m, int expected_m, int device, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "a[1]"), vb = to_view(b, "b"), vsb = to_view(sfb, "b[1]");
  const auto vd = to_view(d, "d"), vm = to_view(masked_m, "masked_m");
  return make_plan(device, kFp8Renames, [&] {
    return tilegemm::api::plan_m_grouped_fp8_gemm_masked(va, vsa, vb, vsb, vd, vm, expected_m, num_sms);
  });
}

PyPlan plan_k_grouped_fp8(const View& a, const View& sfa, const View& b, const View& sfb, const View& d,
                          const std::vector<int>& ks_cpu, const View& grouped_layout, const std::optional<View>& c,
                          int device, int num_sms) {
  const auto va = to_view(a, "a"), vsa = to_view(sfa, "a[1]"), vb = to_view(b, "b"), vsb = to_view(sfb, "b[1]");
  const auto vd = to_view(d, "d"), vl = to_view(grouped_layout, "grouped_layout");
  std::optional<tilegemm::TensorView> vc;
  if (c) vc = to_view(*c, "c");
  return make_plan(device, kFp8Renames, [&] {
    return tilegemm::api::plan_k_grouped_fp8_gemm_contiguous(va, vsa, vb, vsb, vd, ks_cpu, vl, vc ? &*vc : nullptr,
                                                             num_sms);
  });
}

std::vector<const tilegemm::api::LaunchPlan*> to_launch_plans(const nb::list& plans) {
  std::vector<const tilegemm::api::LaunchPlan*> launch_plans;
  for (nb::handle item : plans) launch_plans.push_back(nb::cast<const PyPlan&>(item).plan.get());
  return launch_plans;
}

std::vector<std::pair<std::string, std::string>> spec_pairs(const std::vector<tilegemm::jit::KernelSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& spec : specs) pairs.emplace_back(spec.name, spec.source);
  return pairs;
}

std::vector<tilegemm::jit::KernelSpec> hc_prenorm_specs(const std::vector<int>& ms, int n, int k,
                                                        std::optional<int> num_splits, const std::string& hw_name,
                                                        int num_sms) {
  try {
    const tilegemm::HardwareModel hw = tilegemm::sm90_hardware_preset(hw_name, "hw");
    return tilegemm::hc_prenorm_kernel_specs(ms, n, k, num_splits, hw, num_sms);
  } catch (const tilegemm::InvalidArgument& e) {
    rethrow_renamed(e, kNoRenames);
  }
}

// jit::precompile of `specs` on `jobs` threads without the GIL, `progress(done, total, compiled, elapsed_s)` (None:
// silent) after each kernel. Returns (kernels, compiled, already cached, failure lines).
std::tuple<std::size_t, std::size_t, std::size_t, std::vector<std::string>> precompile_specs(
    const std::vector<tilegemm::jit::KernelSpec>& specs, int jobs, nb::object progress) {
  nb::gil_scoped_release release;
  const auto result = tilegemm::jit::precompile(specs, jobs, [&](const tilegemm::jit::PrecompileProgress& p) {
    if (progress.is_none()) return;
    nb::gil_scoped_acquire acquire;
    try {
      progress(p.done, p.total, p.compiled, p.elapsed_s);
    } catch (nb::python_error& e) {  // on a worker thread: reported, not thrown through the pool
      e.discard_as_unraisable("deep_gemm.precompile's progress callback");
    }
  });
  return std::make_tuple(result.total, result.compiled, result.cached, result.failures);
}

void register_plan_bindings(nb::module_& m) {
  nb::class_<PyPlan>(m, "Plan", "A checked GEMM call (deep_gemm/_plans.py keeps them per argument signature)")
      .def_prop_ro("num_tensors", [](const PyPlan& p) { return p.plan->num_tensors(); })
      .def_prop_ro("device", [](const PyPlan& p) { return p.device; })
      // The cached-plan path: pointers in the plan's tensor order, 0 for absent tensors and unused slots.
      .def(
          "launch",
          [](const PyPlan& p, std::uintptr_t stream, int num_sms, std::uintptr_t p0, std::uintptr_t p1,
             std::uintptr_t p2, std::uintptr_t p3, std::uintptr_t p4, std::uintptr_t p5, std::uintptr_t p6) {
            const std::uintptr_t pointers[] = {p0, p1, p2, p3, p4, p5, p6};
            return p.run(stream, num_sms, pointers, true);
          },
          "stream"_a, "num_sms"_a, "p0"_a, "p1"_a, "p2"_a, "p3"_a = 0, "p4"_a = 0, "p5"_a = 0, "p6"_a = 0)
      // The first run, right after the checks (not counted as a hit).
      .def(
          "first_launch",
          [](const PyPlan& p, std::uintptr_t stream, int num_sms, const std::vector<std::uintptr_t>& pointers) {
            TILEGEMM_REQUIRE(static_cast<int>(pointers.size()) == p.plan->num_tensors(), "pointers",
                             fmt::format("{} pointers", p.plan->num_tensors()), std::to_string(pointers.size()));
            return p.run(stream, num_sms, pointers.data(), false);
          },
          "stream"_a, "num_sms"_a, "pointers"_a)
      // `tilegemm bench`'s timer (tilegemm::bench: CUDA events around each run, an L2 flush of flush_bytes before
      // it) over this plan's runs on `pointers`: the kernel a Python call launches, with no Python between runs.
      // Returns (median µs, timed runs); python -m deep_gemm.bench holds the Python path to it.
      .def(
          "time_runs",
          [](const PyPlan& p, std::uintptr_t stream, int num_sms, const std::vector<std::uintptr_t>& pointers,
             double warmup_ms, double rep_ms, std::int64_t flush_bytes) {
            if (static_cast<int>(pointers.size()) != p.plan->num_tensors() || !p.plan->admits(pointers.data(), num_sms))
              throw nb::value_error(fmt::format("pointers: expected the {} pointers and the settings the plan was "
                                                "checked with, got {} pointers it does not admit",
                                                p.plan->num_tensors(), pointers.size())
                                        .c_str());
            tilegemm::BenchOptions options;
            options.warmup_ms = warmup_ms, options.rep_ms = rep_ms, options.flush_bytes = flush_bytes;
            options.stream = reinterpret_cast<cudaStream_t>(stream);
            const DeviceScope scope(p.device);
            nb::gil_scoped_release release;
            try {
              const tilegemm::BenchResult result =
                  tilegemm::bench([&](cudaStream_t s) { p.plan->run(pointers.data(), s); }, options);
              return std::make_tuple(result.stats.median_us, result.iterations.rep);
            } catch (const tilegemm::InvalidArgument& e) {
              nb::gil_scoped_acquire acquire;
              throw nb::value_error(e.what());
            }
          },
          "stream"_a, "num_sms"_a, "pointers"_a, "warmup_ms"_a, "rep_ms"_a, "flush_bytes"_a);
  // deep_gemm.precompile: the kernels `plans` launch on the Hopper preset `hw` and the scale-layout kernels, compiled
  // into the JIT cache on `jobs` threads (0 = all cores) with no GPU, `progress(done, total, compiled, elapsed_s)`
  // after each. Returns (kernels, compiled, already cached, failure lines).
  m.def(
      "precompile_plans",
      [](const nb::list& plans, const std::string& hw_name, int jobs, nb::object progress) {
        const tilegemm::HardwareModel hw = tilegemm::sm90_hardware_preset(hw_name, "hw");
        std::vector<const tilegemm::api::LaunchPlan*> launch_plans = to_launch_plans(plans);
        std::vector<tilegemm::jit::KernelSpec> specs;
        {
          nb::gil_scoped_release release;
          specs = tilegemm::api::plan_kernel_specs(launch_plans, hw, jobs);
        }
        // The scale-layout helpers' kernels too (get_mn_major_tma_aligned_tensor & co.: serving calls them).
        for (const auto which : tilegemm::layout::kAllSfKernels)
          specs.push_back(tilegemm::layout::sf_layout_spec(which));
        return precompile_specs(specs, jobs, progress);
      },
      "plans"_a, "hw"_a, "jobs"_a, "progress"_a.none());
  // The kernels `plans` launch on `hw`, as (name, source) pairs: what precompile_plans compiles (tests compare them).
  m.def(
      "plan_kernel_specs",
      [](const nb::list& plans, const std::string& hw_name) {
        const tilegemm::HardwareModel hw = tilegemm::sm90_hardware_preset(hw_name, "hw");
        return spec_pairs(tilegemm::api::plan_kernel_specs(to_launch_plans(plans), hw, 1));
      },
      "plans"_a, "hw"_a);
  // tf32_hc_prenorm_gemm's kernels for every M in `ms` (include/tilegemm/hc_prenorm.hpp: hc_prenorm_kernel_specs)
  // as (name, source) pairs; precompile_hc_prenorm compiles those of every (n, k) into the JIT cache like
  // precompile_plans (without the scale-layout kernels: the call uses none).
  m.def(
      "hc_prenorm_kernel_specs",
      [](const std::vector<int>& ms, int n, int k, std::optional<int> num_splits, const std::string& hw_name,
         int num_sms) { return spec_pairs(hc_prenorm_specs(ms, n, k, num_splits, hw_name, num_sms)); },
      "ms"_a, "n"_a, "k"_a, "num_splits"_a.none(), "hw"_a, "num_sms"_a);
  m.def(
      "precompile_hc_prenorm",
      [](const std::vector<int>& ms, const std::vector<int>& ns, const std::vector<int>& ks,
         std::optional<int> num_splits, const std::string& hw_name, int num_sms, int jobs, nb::object progress) {
        TILEGEMM_REQUIRE(jobs >= 0, "jobs", ">= 0 (0 = all cores)", std::to_string(jobs));
        std::vector<tilegemm::jit::KernelSpec> specs;  // duplicates across (n, k) are compiled once
        for (const int n : ns)
          for (const int k : ks)
            for (auto& spec : hc_prenorm_specs(ms, n, k, num_splits, hw_name, num_sms))
              specs.push_back(std::move(spec));
        return precompile_specs(specs, jobs, progress);
      },
      "ms"_a, "ns"_a, "ks"_a, "num_splits"_a.none(), "hw"_a, "num_sms"_a, "jobs"_a, "progress"_a.none());
  m.def("plan_bf16_gemm", &plan_bf16_gemm, "a"_a, "b"_a, "d"_a, "c"_a.none(), "device"_a, "num_sms"_a);
  m.def("plan_int8_gemm", &plan_int8_gemm, "a"_a, "b"_a, "scale_a"_a, "scale_b"_a, "d"_a, "device"_a, "num_sms"_a);
  m.def("plan_bf16_batch_reduced_gemm", &plan_bf16_batch_reduced_gemm, "a"_a, "b"_a, "d"_a, "c"_a.none(), "device"_a,
        "num_sms"_a);
  m.def("plan_m_grouped_contiguous", &plan_m_grouped_contiguous, "a"_a, "b"_a, "d"_a, "grouped_layout"_a,
        "use_psum_layout"_a, "device"_a, "num_sms"_a);
  m.def("plan_m_grouped_masked", &plan_m_grouped_masked, "a"_a, "b"_a, "d"_a, "masked_m"_a, "expected_m"_a, "device"_a,
        "num_sms"_a);
  m.def("plan_k_grouped_tn", &plan_k_grouped_tn, "a"_a, "b"_a, "d"_a, "ks_cpu"_a, "grouped_layout"_a, "c"_a.none(),
        "device"_a, "num_sms"_a);
  m.def("plan_fp8_gemm", &plan_fp8_gemm, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a, "c"_a.none(), "one_d_one_d"_a,
        "device"_a, "num_sms"_a);
  m.def("plan_fp8_gemm_skip_head_mid", &plan_fp8_gemm_skip_head_mid, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a,
        "head_splits"_a, "device"_a, "num_sms"_a);
  m.def("plan_m_grouped_fp8_contiguous", &plan_m_grouped_fp8_contiguous, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a,
        "grouped_layout"_a, "use_psum_layout"_a, "expected_m"_a, "device"_a, "num_sms"_a);
  m.def("plan_m_grouped_fp8_masked", &plan_m_grouped_fp8_masked, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a, "masked_m"_a,
        "expected_m"_a, "device"_a, "num_sms"_a);
  m.def("plan_k_grouped_fp8", &plan_k_grouped_fp8, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a, "ks_cpu"_a,
        "grouped_layout"_a, "c"_a.none(), "device"_a, "num_sms"_a);
  m.def("plan_stats", [] {
    nb::dict stats;
    stats["hits"] = g_plan_hits.load(std::memory_order_relaxed);
    stats["declined"] = g_plan_declines.load(std::memory_order_relaxed);
    return stats;
  });
}

nb::dict dtype_codes() {
  nb::dict codes;
  for (int i = 0; i <= static_cast<int>(tilegemm::DType::kInt64); ++i)
    codes[std::string(tilegemm::dtype_name(static_cast<tilegemm::DType>(i))).c_str()] = i;
  return codes;
}

}  // namespace

// Scale-factor layout kernels (get_mn_major_tma_aligned_*, packed UE8M0): _C_layout.cpp.
void register_layout_bindings(nb::module_& m);
// The GEMM functions' per-call fast path over kept plans, and the settings it reads: _C_kept.cpp.
void register_kept_bindings(nb::module_& m);
// DeepSeek-V3.2's MQA logits (prefill and paged decode) and their layout helpers: _C_mqa.cpp.
void register_mqa_bindings(nb::module_& m);
// The weight-only quantised GEMM (int4 / int8 / MXFP4 weights) behind deep_gemm.weight_quant: _C_wq.cpp.
void register_wq_bindings(nb::module_& m);
// The FP8 MoE layer on one GPU behind deep_gemm.moe: _C_moe.cpp.
void register_moe_bindings(nb::module_& m);

NB_MODULE(_C, m) {
  m.doc() = "tilegemm operations behind the deep_gemm package (plain values in, no libtorch)";
  // Kept plans live to the end of the process: once the GEMMs are torch.library ops, torch's registry holds the
  // package's functions (and through them the plan table) past the interpreter's teardown, which nanobind would
  // report as leaks at every exit.
  nb::set_leak_warnings(false);
  register_layout_bindings(m);
  register_plan_bindings(m);
  register_kept_bindings(m);
  register_mqa_bindings(m);
  register_wq_bindings(m);
  register_moe_bindings(m);
  m.def("cublaslt", &cublaslt, "layout"_a, "a"_a, "b"_a, "d"_a, "c"_a.none(), "device"_a, "stream"_a);
  m.def("fp8_fp4_gemm_nt_sm90", &dense_sm90<tilegemm::fp8_fp4_gemm_nt>, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a,
        "device"_a, "stream"_a, "num_sms"_a);
  m.def("m_grouped_fp8_fp4_gemm_nt_masked_sm90", &m_grouped_fp8_fp4_gemm_nt_masked_sm90, "a"_a, "sfa"_a, "b"_a, "sfb"_a,
        "d"_a, "masked_m"_a, "expected_m"_a, "device"_a, "stream"_a, "num_sms"_a);
  m.def("mxfp8_gemm_nt_sm90", &dense_sm90<tilegemm::mxfp8_gemm_nt>, "a"_a, "sfa"_a, "b"_a, "sfb"_a, "d"_a, "device"_a,
        "stream"_a, "num_sms"_a);
  m.def("tf32_hc_prenorm_gemm", &tf32_hc_prenorm_gemm, "a"_a, "b"_a, "d"_a, "sqr_sum"_a, "num_splits"_a.none(),
        "device"_a, "stream"_a, "num_sms"_a);
  m.def("dtype_codes", &dtype_codes, "dtype name -> code of tilegemm's DType enum");
  m.def("mk_alignment", &tilegemm::get_mk_alignment_for_contiguous_layout);
  m.def("gpu_available", &tilegemm::gpu_available);
  m.def(
      "device_num_sms", [](int device) { return tilegemm::hardware_from_device(device).num_sms; }, "device"_a);
  m.def("reload_env", &tilegemm::reload_env);
  m.def("set_pdl", &tilegemm::set_pdl, "enabled"_a);
  m.def("pdl_enabled", &tilegemm::is_pdl_enabled);
  m.attr("tilegemm_version") = TILEGEMM_PACKAGE_VERSION;
}
