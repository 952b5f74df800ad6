// deep_gemm._C's FP8 MoE layer binding (deep_gemm.moe, tilegemm's own): plain values in (see _tensor.py), the whole
// layer (include/tilegemm/moe.hpp) in one call on the caller's stream with the tensors' device current. The Python
// layer allocates the outputs and the expert-sorted buffers; the library checks every view.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

#include "tilegemm/gemm.hpp"
#include "tilegemm/moe.hpp"

#include "_on_device.hpp"
#include "_view.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::Renames;
using deep_gemm_ext::to_view;
using deep_gemm_ext::View;

// The Python API passes the weights as pairs and the output as `out`.
const Renames kRenames{{"w1_sf", "w1[1]"}, {"w2_sf", "w2[1]"}, {"w1", "w1[0]"}, {"w2", "w2[0]"}, {"y", "out"}};

// Tensors x, topk_idx, topk_weights, w1, w1_sf, w2, w2_sf, y, then the workspace's group_end, row_of, a1, sfa1,
// h1, a2, sfa2, y2 (tilegemm::MoeWorkspace's order).
void fp8_moe_layer(const std::vector<View>& tensors, bool ue8m0, int device, std::uintptr_t stream, int num_sms) {
  static constexpr const char* kNames[] = {"x",     "topk_idx", "topk_weights", "w1[0]",  "w1[1]", "w2[0]",
                                           "w2[1]", "out",      "group_end",    "row_of", "a1",    "sfa1",
                                           "h1",    "a2",       "sfa2",         "y2"};
  constexpr std::size_t kCount = sizeof(kNames) / sizeof(kNames[0]);
  if (tensors.size() != kCount)
    throw tilegemm::InvalidArgument("tensors", "16 views (x .. y2)", std::to_string(tensors.size()));
  tilegemm::TensorView v[kCount];
  for (std::size_t i = 0; i < kCount; ++i) v[i] = to_view(tensors[i], kNames[i]);
  const tilegemm::Fp8MoeWeights weights{v[3], v[4], v[5], v[6]};
  const tilegemm::MoeWorkspace ws{v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]};
  tilegemm::GemmOptions options;
  options.stream = reinterpret_cast<void*>(stream);
  options.num_sms = num_sms;
  deep_gemm_ext::on_device(device, kRenames,
                           [&] { tilegemm::fp8_moe_layer(v[0], v[1], v[2], weights, v[7], ws, ue8m0, options); });
}

}  // namespace

void register_moe_bindings(nb::module_& m) {
  m.def("fp8_moe_layer", &fp8_moe_layer, "tensors"_a, "ue8m0"_a, "device"_a, "stream"_a, "num_sms"_a);
  m.def("moe_buffer_rows", &tilegemm::moe_buffer_rows, "tokens"_a, "topk"_a, "experts"_a);
}
