// deep_gemm._C's MQA logits bindings (DeepSeek-V3.2's lightning indexer): plain values in (see _tensor.py: pointer,
// dtype code, shape, strides), tilegemm's SM90 kernels (include/tilegemm/mqa_logits.hpp, paged_mqa_logits.hpp) on
// the caller's stream with the tensors' device current. The Python layer (_mqa_logits.py) validates and allocates
// the outputs as DeepGEMM does, with the layout helpers bound here; the library re-checks every view and its
// InvalidArgument becomes ValueError, renamed to DeepGEMM's argument names where the C++ API's differ.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/mqa_logits.hpp"
#include "tilegemm/paged_mqa_logits.hpp"
#include "tilegemm/tensor_view.hpp"

#include "_on_device.hpp"
#include "_plan.hpp"
#include "_view.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::on_device;
using deep_gemm_ext::Renames;
using deep_gemm_ext::to_view;
using deep_gemm_ext::View;

// The C++ API's kv_scales is the second element of DeepGEMM's kv pair.
const Renames kPrefillRenames{{"kv_scales", "kv[1]"}};
const Renames kNoRenames{};

tilegemm::GemmOptions options_for(std::uintptr_t stream, int num_sms) {
  tilegemm::GemmOptions options;
  options.stream = reinterpret_cast<void*>(stream);
  options.num_sms = num_sms;
  return options;
}

tilegemm::DType logits_dtype_of(int code) {
  if (code < 0 || code > static_cast<int>(tilegemm::DType::kInt32))
    throw tilegemm::InvalidArgument("logits_dtype", "a known dtype code", std::to_string(code));
  return static_cast<tilegemm::DType>(code);
}

// DeepGEMM's prefill logits allocation: (rows, row stride, columns of the view).
std::tuple<std::int64_t, std::int64_t, std::int64_t> mqa_logits_layout(std::int64_t seq_len, std::int64_t seq_len_kv,
                                                                       int num_heads, int max_seqlen_k,
                                                                       int logits_dtype) {
  const tilegemm::MqaLogitsLayout layout =
      tilegemm::mqa_logits_layout(seq_len, seq_len_kv, num_heads, max_seqlen_k, logits_dtype_of(logits_dtype));
  return {layout.rows, layout.row_stride, layout.cols};
}

std::int64_t paged_mqa_logits_row_stride(std::int64_t max_context_len, int logits_dtype) {
  return tilegemm::paged_mqa_logits_row_stride(max_context_len, logits_dtype_of(logits_dtype));
}

void fp8_mqa_logits(const View& q, const View& kv, const View& kv_scales, const View& weights, const View& ks,
                    const View& ke, const View& logits, bool clean_logits, int max_seqlen_k, int device,
                    std::uintptr_t stream, int num_sms) {
  const auto vq = to_view(q, "q"), vkv = to_view(kv, "kv"), vsf = to_view(kv_scales, "kv[1]");
  const auto vw = to_view(weights, "weights"), vks = to_view(ks, "cu_seq_len_k_start");
  const auto vke = to_view(ke, "cu_seq_len_k_end"), vl = to_view(logits, "logits");
  on_device(device, kPrefillRenames, [&] {
    tilegemm::fp8_mqa_logits(vq, vkv, vsf, vw, vks, vke, vl, clean_logits, max_seqlen_k, options_for(stream, num_sms));
  });
}

void paged_mqa_logits_metadata(const View& context_lens, int block_kv, const View& schedule, int device,
                               std::uintptr_t stream) {
  const auto vc = to_view(context_lens, "context_lens"), vs = to_view(schedule, "schedule_meta");
  on_device(device, kNoRenames, [&] { tilegemm::paged_mqa_logits_metadata(vc, block_kv, vs, options_for(stream, 0)); });
}

void fp8_paged_mqa_logits(const View& q, const View& kv_cache, const View& weights, const View& context_lens,
                          const View& block_table, const View& schedule, const View& logits, bool clean_logits,
                          int device, std::uintptr_t stream) {
  const auto vq = to_view(q, "q"), vkv = to_view(kv_cache, "kv_cache"), vw = to_view(weights, "weights");
  const auto vc = to_view(context_lens, "context_lens"), vb = to_view(block_table, "block_table");
  const auto vs = to_view(schedule, "schedule_meta"), vl = to_view(logits, "logits");
  on_device(device, kNoRenames,
            [&] { tilegemm::fp8_paged_mqa_logits(vq, vkv, vw, vc, vb, vs, vl, clean_logits, options_for(stream, 0)); });
}

}  // namespace

void register_mqa_bindings(nb::module_& m) {
  m.def("mqa_logits_layout", &mqa_logits_layout, "seq_len"_a, "seq_len_kv"_a, "num_heads"_a, "max_seqlen_k"_a,
        "logits_dtype"_a,
        "DeepGEMM's prefill logits allocation: (rows, row_stride, cols); the result is [:seq_len, :cols] of it");
  m.def("paged_mqa_logits_row_stride", &paged_mqa_logits_row_stride, "max_context_len"_a, "logits_dtype"_a,
        "DeepGEMM's paged logits row stride (elements) for max_context_len columns");
  m.def("fp8_mqa_logits", &fp8_mqa_logits, "q"_a, "kv"_a, "kv_scales"_a, "weights"_a, "cu_seq_len_k_start"_a,
        "cu_seq_len_k_end"_a, "logits"_a, "clean_logits"_a, "max_seqlen_k"_a, "device"_a, "stream"_a, "num_sms"_a,
        "FP8 MQA logits into the caller's `logits` view (include/tilegemm/mqa_logits.hpp)");
  m.def("paged_mqa_logits_metadata", &paged_mqa_logits_metadata, "context_lens"_a, "block_kv"_a, "schedule"_a,
        "device"_a, "stream"_a, "The paged MQA logits schedule into the caller's int32 [partitions + 1, 2] `schedule`");
  m.def("fp8_paged_mqa_logits", &fp8_paged_mqa_logits, "q"_a, "kv_cache"_a, "weights"_a, "context_lens"_a,
        "block_table"_a, "schedule"_a, "logits"_a, "clean_logits"_a, "device"_a, "stream"_a,
        "Paged FP8 MQA logits into the caller's `logits` view; kv_cache as int8 bytes "
        "(include/tilegemm/paged_mqa_logits.hpp)");
}
