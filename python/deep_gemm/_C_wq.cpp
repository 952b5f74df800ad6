// deep_gemm._C's bindings of the weight-only quantised GEMM (include/tilegemm/weight_quant.hpp), behind the public
// module deep_gemm.weight_quant (weight_quant/).
//   Packing runs on the host over contiguous CPU arrays the Python layer has made of the right dtype: each is passed
//   as (address, element count); the results are copied into CPU arrays Python allocated with the sizes wq_layout
//   returned. The C++ work runs without the GIL.
//   The GEMMs and the dequantise take the activations / output (and the grouped GEMMs' grouped_layout / masked_m)
//   as views (_view.hpp) and the packed arrays as device addresses with the weight's expert count (M-grouped: that
//   many weights one after another in each array), on the caller's stream with the tensors' device current (as
//   _C_mqa.cpp's calls).
// A weight's layout travels as a tuple: (format, act_dtype code, n, k, group_size, has_zeros) to build one, plus
// (exp_shift, n_pad, k_pad) for a packed one. tilegemm::InvalidArgument becomes ValueError, renamed by the `renames`
// the Python layer passes (the C++ API's field names, e.g. "codes", are not every Python function's argument names).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/tensor_view.hpp"
#include "tilegemm/weight_quant.hpp"

#include "_on_device.hpp"
#include "_plan.hpp"
#include "_view.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::on_device;
using deep_gemm_ext::Renames;
using deep_gemm_ext::rethrow_renamed;
using deep_gemm_ext::to_view;
using deep_gemm_ext::View;

// (format, act_dtype code, n, k, group_size, has_zeros): what make_weight_layout takes.
using LayoutArgs = std::tuple<std::string, int, int, int, int, bool>;
// LayoutArgs + (exp_shift, n_pad, k_pad): a packed weight's layout.
using PackedLayout = std::tuple<std::string, int, int, int, int, bool, int, int, int>;
// A contiguous host array: (address, element count); (0, 0) is an empty one.
using HostArray = std::pair<std::uintptr_t, std::int64_t>;
// The packed arrays on the device: data, scales, zeros, channel_scales (0 where absent).
using DevicePointers = std::tuple<std::uintptr_t, std::uintptr_t, std::uintptr_t, std::uintptr_t>;

tilegemm::DType dtype_of(int code, const char* argument) {
  if (code < 0 || code > static_cast<int>(tilegemm::DType::kInt32))
    throw tilegemm::InvalidArgument(argument, "a known dtype code", std::to_string(code));
  return static_cast<tilegemm::DType>(code);
}

tilegemm::WeightLayout make_layout(const LayoutArgs& args) {
  const auto& [format, act_dtype, n, k, group_size, has_zeros] = args;
  return tilegemm::make_weight_layout(tilegemm::parse_weight_format(format), n, k, group_size, has_zeros,
                                      dtype_of(act_dtype, "act_dtype"));
}

// The layout as the caller claims it; the library checks it against make_weight_layout's where it reads arrays.
tilegemm::WeightLayout packed_layout(const PackedLayout& packed) {
  const auto& [format, act_dtype, n, k, group_size, has_zeros, exp_shift, n_pad, k_pad] = packed;
  tilegemm::WeightLayout l;
  l.format = tilegemm::parse_weight_format(format);
  l.act_dtype = dtype_of(act_dtype, "act_dtype");
  l.n = n, l.k = k, l.group_size = group_size, l.has_zeros = has_zeros;
  l.exp_shift = exp_shift, l.n_pad = n_pad, l.k_pad = k_pad;
  return l;
}

template <typename T>
std::vector<T> host_vector(const HostArray& array, const char* argument) {
  const auto [address, count] = array;
  TILEGEMM_REQUIRE(count >= 0 && (count == 0 || address != 0), argument, "a host array (address, element count)",
                   fmt::format("({:#x}, {})", address, count));
  const T* p = reinterpret_cast<const T*>(address);
  return count == 0 ? std::vector<T>{} : std::vector<T>(p, p + count);
}

// Copies `from` into the caller's array `to`, which must have exactly its size.
template <typename T>
void copy_out(const std::vector<T>& from, const HostArray& to, const char* argument) {
  const auto [address, count] = to;
  TILEGEMM_REQUIRE(count == static_cast<std::int64_t>(from.size()) && (count == 0 || address != 0), argument,
                   fmt::format("an output array of {} elements", from.size()),
                   fmt::format("({:#x}, {})", address, count));
  if (count > 0) std::memcpy(reinterpret_cast<void*>(address), from.data(), from.size() * sizeof(T));
}

// Runs host work `fn` without the GIL; InvalidArgument becomes ValueError with the caller's argument names.
template <typename Fn>
auto on_host(const Renames& renames, Fn&& fn) {
  try {
    nb::gil_scoped_release release;
    return fn();
  } catch (const tilegemm::InvalidArgument& e) {
    rethrow_renamed(e, renames);
  }
}

// The packed weight `p` into the caller's arrays; returns the layout's exp_shift (mxfp4; 0 otherwise).
int write_packed(const tilegemm::PackedWeight& p, const HostArray& data, const HostArray& scales,
                 const HostArray& zeros, const HostArray& channel_scales) {
  copy_out(p.data, data, "out data");
  copy_out(p.scales, scales, "out scales");
  copy_out(p.zeros, zeros, "out zeros");
  copy_out(p.channel_scales, channel_scales, "out channel_scales");
  return p.layout.exp_shift;
}

// (group_size, n_pad, k_pad, groups, data bytes, scale bytes, zero bytes) of a layout (mxfp4's group_size 32).
std::tuple<int, int, int, int, std::int64_t, std::int64_t, std::int64_t> wq_layout(const LayoutArgs& args,
                                                                                   const Renames& renames) {
  return on_host(renames, [&] {
    const tilegemm::WeightLayout l = make_layout(args);
    return std::make_tuple(l.group_size, l.n_pad, l.k_pad, l.groups(), l.data_bytes(), l.scale_bytes(), l.zero_bytes());
  });
}

// pack_weight over codes (u8 [n][k]), scales (act_dtype bits, u16 [n][groups]), zeros (u8), exponents (u8) and
// channel_scales (f32 [n]), written into the packed arrays out_*. Returns exp_shift.
int wq_pack(const LayoutArgs& args, const HostArray& codes, const HostArray& scales, const HostArray& zeros,
            const HostArray& exponents, const HostArray& channel_scales, const HostArray& out_data,
            const HostArray& out_scales, const HostArray& out_zeros, const HostArray& out_channel_scales,
            const Renames& renames) {
  return on_host(renames, [&] {
    tilegemm::WeightCodes w;
    w.layout = make_layout(args);
    w.codes = host_vector<std::uint8_t>(codes, "codes");
    w.scales = host_vector<std::uint16_t>(scales, "scales");
    w.zeros = host_vector<std::uint8_t>(zeros, "zeros");
    w.exponents = host_vector<std::uint8_t>(exponents, "exponents");
    w.channel_scales = host_vector<float>(channel_scales, "channel_scales");
    return write_packed(tilegemm::pack_weight(w), out_data, out_scales, out_zeros, out_channel_scales);
  });
}

// import_gptq / import_awq (`kind`), then pack_weight into out_*. The arrays' sizes are checked here against the
// shapes the importers read: qweight [K / 8][N] (GPTQ) or [K][N / 8] (AWQ), qzeros [K / g][N / 8], scales [K / g][N].
int wq_import(const std::string& kind, const HostArray& qweight, const HostArray& qzeros, const HostArray& scales,
              int n, int k, int group_size, bool zeros_minus_one, int act_dtype, const HostArray& out_data,
              const HostArray& out_scales, const HostArray& out_zeros, const Renames& renames) {
  return on_host(renames, [&] {
    TILEGEMM_REQUIRE(kind == "gptq" || kind == "awq", "kind", "gptq or awq", kind);
    const tilegemm::DType dtype = dtype_of(act_dtype, "act_dtype");
    // The layout's checks (n, k, group_size, act_dtype) before any size is derived from them.
    tilegemm::make_weight_layout(tilegemm::WeightFormat::kInt4, n, k, group_size, true, dtype);
    TILEGEMM_REQUIRE(n % 8 == 0, "n", "a multiple of 8 (eight codes per int32 word along N)", std::to_string(n));
    const std::int64_t groups = k / group_size, words = static_cast<std::int64_t>(n) * k / 8;
    TILEGEMM_REQUIRE(qweight.second == words, "qweight", fmt::format("{} int32 words", words),
                     std::to_string(qweight.second));
    TILEGEMM_REQUIRE(qzeros.second == groups * n / 8, "qzeros", fmt::format("{} int32 words", groups * n / 8),
                     std::to_string(qzeros.second));
    TILEGEMM_REQUIRE(scales.second == groups * n, "scales", fmt::format("{} scales", groups * n),
                     std::to_string(scales.second));
    const auto qw = host_vector<std::int32_t>(qweight, "qweight");
    const auto qz = host_vector<std::int32_t>(qzeros, "qzeros");
    const auto s = host_vector<std::uint16_t>(scales, "scales");
    const tilegemm::WeightCodes w =
        kind == "gptq" ? tilegemm::import_gptq(qw.data(), qz.data(), s.data(), n, k, group_size, zeros_minus_one, dtype)
                       : tilegemm::import_awq(qw.data(), qz.data(), s.data(), n, k, group_size, dtype);
    return write_packed(tilegemm::pack_weight(w), out_data, out_scales, out_zeros, {0, 0});
  });
}

// unpack_weight of the packed host arrays, written into out_codes (u8 [n][k]), out_scales (u16 act_dtype bits
// [n][groups]), out_zeros, out_exponents (u8 [n][groups]) and out_channel_scales (f32 [n]).
void wq_unpack(const PackedLayout& layout, const HostArray& data, const HostArray& scales, const HostArray& zeros,
               const HostArray& channel_scales, const HostArray& out_codes, const HostArray& out_scales,
               const HostArray& out_zeros, const HostArray& out_exponents, const HostArray& out_channel_scales,
               const Renames& renames) {
  on_host(renames, [&] {
    tilegemm::PackedWeight p;
    p.layout = packed_layout(layout);
    p.data = host_vector<std::uint8_t>(data, "data");
    p.scales = host_vector<std::uint8_t>(scales, "scales");
    p.zeros = host_vector<std::uint8_t>(zeros, "zeros");
    p.channel_scales = host_vector<float>(channel_scales, "channel_scales");
    const tilegemm::WeightCodes w = tilegemm::unpack_weight(p);
    copy_out(w.codes, out_codes, "out codes");
    copy_out(w.scales, out_scales, "out scales");
    copy_out(w.zeros, out_zeros, "out zeros");
    copy_out(w.exponents, out_exponents, "out exponents");
    copy_out(w.channel_scales, out_channel_scales, "out channel_scales");
  });
}

// `num_experts` weights of `layout` one after another in each array (1: one weight).
tilegemm::PackedWeightView weight_view(const PackedLayout& layout, const DevicePointers& pointers, int num_experts) {
  const auto [data, scales, zeros, channel_scales] = pointers;
  tilegemm::PackedWeightView w;
  w.layout = packed_layout(layout);
  w.data = reinterpret_cast<const void*>(data);
  w.scales = reinterpret_cast<const void*>(scales);
  w.zeros = reinterpret_cast<const void*>(zeros);
  w.channel_scales = reinterpret_cast<const float*>(channel_scales);
  w.num_experts = num_experts;
  return w;
}

tilegemm::GemmOptions options_for(std::uintptr_t stream, int num_sms) {
  tilegemm::GemmOptions options;
  options.stream = reinterpret_cast<void*>(stream);
  options.num_sms = num_sms;
  return options;
}

void wq_gemm_nt(const View& a, const PackedLayout& layout, const DevicePointers& pointers, int num_experts,
                const View& d, int device, std::uintptr_t stream, int num_sms, const Renames& renames) {
  on_device(device, renames, [&] {
    const auto va = to_view(a, "a"), vd = to_view(d, "d");
    tilegemm::wq_gemm_nt(va, weight_view(layout, pointers, num_experts), vd, options_for(stream, num_sms));
  });
}

void wq_m_grouped_gemm_nt_contiguous(const View& a, const PackedLayout& layout, const DevicePointers& pointers,
                                     int num_experts, const View& d, const View& grouped_layout, int device,
                                     std::uintptr_t stream, int num_sms, const Renames& renames) {
  on_device(device, renames, [&] {
    const auto va = to_view(a, "a"), vd = to_view(d, "d"), vg = to_view(grouped_layout, "grouped_layout");
    tilegemm::wq_m_grouped_gemm_nt_contiguous(va, weight_view(layout, pointers, num_experts), vd, vg,
                                              options_for(stream, num_sms));
  });
}

void wq_m_grouped_gemm_nt_masked(const View& a, const PackedLayout& layout, const DevicePointers& pointers,
                                 int num_experts, const View& d, const View& masked_m, int expected_m, int device,
                                 std::uintptr_t stream, int num_sms, const Renames& renames) {
  on_device(device, renames, [&] {
    const auto va = to_view(a, "a"), vd = to_view(d, "d"), vm = to_view(masked_m, "masked_m");
    tilegemm::wq_m_grouped_gemm_nt_masked(va, weight_view(layout, pointers, num_experts), vd, vm, expected_m,
                                          options_for(stream, num_sms));
  });
}

void wq_dequantize(const PackedLayout& layout, const DevicePointers& pointers, int num_experts, const View& out,
                   int device, std::uintptr_t stream, const Renames& renames) {
  on_device(device, renames, [&] {
    const auto vo = to_view(out, "out");
    tilegemm::wq_dequantize(weight_view(layout, pointers, num_experts), vo, options_for(stream, 0));
  });
}

// The GEMM a plan is for: "" (wq_gemm_nt), "contiguous" or "masked" (the M-grouped GEMMs).
tilegemm::GemmType grouping_type(const std::string& grouping) {
  TILEGEMM_REQUIRE(grouping.empty() || grouping == "contiguous" || grouping == "masked", "grouping",
                   "None, 'contiguous' or 'masked'", grouping);
  return grouping.empty()           ? tilegemm::GemmType::kNormal
         : grouping == "contiguous" ? tilegemm::GemmType::kMGroupedContiguous
                                    : tilegemm::GemmType::kMGroupedMasked;
}

// The plan wq_gemm_nt (grouping "") or an M-grouped GEMM over `num_experts` weights (grouping "contiguous": m all
// experts' rows; "masked": m the expected rows per expert) would choose on the preset `hw` (None: the GPU `device`,
// RuntimeError without one), with the SM limit `num_sms` (0: every SM): (format_wq_gemm_config's line, fused).
std::pair<std::string, bool> wq_plan(int m, const LayoutArgs& args, int d_dtype, const std::optional<std::string>& hw,
                                     int device, int num_sms, const std::string& grouping, int num_experts,
                                     const Renames& renames) {
  return on_host(renames, [&] {
    const tilegemm::WeightLayout l = make_layout(args);
    const tilegemm::DType d = dtype_of(d_dtype, "out_dtype");
    TILEGEMM_REQUIRE(
        d == tilegemm::DType::kBFloat16 || d == tilegemm::DType::kFloat16 || d == tilegemm::DType::kFloat32,
        "out_dtype", "bf16, fp16 or fp32", std::string(tilegemm::dtype_name(d)));
    TILEGEMM_REQUIRE(m >= 1, "m", "a token count >= 1", std::to_string(m));
    TILEGEMM_REQUIRE(num_sms >= 0, "num_sms", "an SM limit >= 0 (0: every SM)", std::to_string(num_sms));
    const tilegemm::HardwareModel model =
        hw ? tilegemm::sm90_hardware_preset(*hw, "hw") : tilegemm::hardware_from_device(device);
    const int sms = num_sms > 0 && num_sms < model.num_sms ? num_sms : model.num_sms;
    const tilegemm::GemmType type = grouping_type(grouping);
    TILEGEMM_REQUIRE(num_experts >= 1 && (num_experts == 1 || type != tilegemm::GemmType::kNormal), "num_experts",
                     "1 for wq_gemm_nt, or an expert count >= 1 for the M-grouped GEMMs",
                     fmt::format("{} ({})", num_experts, grouping.empty() ? "wq_gemm_nt" : grouping));
    const tilegemm::WqGemmConfig config = tilegemm::select_wq_gemm_config(m, l, d, model, sms, type, num_experts);
    return std::make_pair(tilegemm::format_wq_gemm_config(m, l, config), config.fused);
  });
}

}  // namespace

void register_wq_bindings(nb::module_& m) {
  m.def("wq_layout", &wq_layout, "layout"_a, "renames"_a,
        "(group_size, n_pad, k_pad, groups, data bytes, scale bytes, zero bytes) of a weight layout");
  m.def("wq_pack", &wq_pack, "layout"_a, "codes"_a, "scales"_a, "zeros"_a, "exponents"_a, "channel_scales"_a,
        "out_data"_a, "out_scales"_a, "out_zeros"_a, "out_channel_scales"_a, "renames"_a,
        "pack_weight over host arrays (address, count) into the caller's host arrays; returns exp_shift");
  m.def("wq_import", &wq_import, "kind"_a, "qweight"_a, "qzeros"_a, "scales"_a, "n"_a, "k"_a, "group_size"_a,
        "zeros_minus_one"_a, "act_dtype"_a, "out_data"_a, "out_scales"_a, "out_zeros"_a, "renames"_a,
        "import_gptq / import_awq, then pack_weight into the caller's host arrays; returns exp_shift (0)");
  m.def("wq_unpack", &wq_unpack, "layout"_a, "data"_a, "scales"_a, "zeros"_a, "channel_scales"_a, "out_codes"_a,
        "out_scales"_a, "out_zeros"_a, "out_exponents"_a, "out_channel_scales"_a, "renames"_a,
        "unpack_weight of packed host arrays into the caller's host arrays");
  m.def("wq_gemm_nt", &wq_gemm_nt, "a"_a, "layout"_a, "pointers"_a, "num_experts"_a, "d"_a, "device"_a, "stream"_a,
        "num_sms"_a, "renames"_a, "D = A·dequant(W)ᵀ into the caller's `d` view (include/tilegemm/weight_quant.hpp)");
  m.def("wq_m_grouped_gemm_nt_contiguous", &wq_m_grouped_gemm_nt_contiguous, "a"_a, "layout"_a, "pointers"_a,
        "num_experts"_a, "d"_a, "grouped_layout"_a, "device"_a, "stream"_a, "num_sms"_a, "renames"_a,
        "D = A·dequant(W[grouped_layout[row]])ᵀ row by row over the experts' weights");
  m.def("wq_m_grouped_gemm_nt_masked", &wq_m_grouped_gemm_nt_masked, "a"_a, "layout"_a, "pointers"_a, "num_experts"_a,
        "d"_a, "masked_m"_a, "expected_m"_a, "device"_a, "stream"_a, "num_sms"_a, "renames"_a,
        "D[e, :masked_m[e]] = A[e, :masked_m[e]]·dequant(W[e])ᵀ for every expert e");
  m.def("wq_dequantize", &wq_dequantize, "layout"_a, "pointers"_a, "num_experts"_a, "out"_a, "device"_a, "stream"_a,
        "renames"_a, "dequant(W) [N, K] into the caller's `out` view");
  m.def("wq_plan", &wq_plan, "m"_a, "layout"_a, "d_dtype"_a, "hw"_a.none(), "device"_a, "num_sms"_a, "grouping"_a,
        "num_experts"_a, "renames"_a,
        "(config line, fused) of the plan of wq_gemm_nt (grouping '') or an M-grouped GEMM ('contiguous', "
        "'masked') for m rows on the preset `hw` or the GPU `device`");
}
