// deep_gemm._C's scale-factor layout bindings: plain values in (see _tensor.py: pointer, dtype code, shape,
// strides), tilegemm's JIT layout kernels (include/tilegemm/fp8_layout.hpp) out, on the caller's stream. The
// Python layer (_sf_layout.py) validates and allocates; the library re-checks every view and raises
// InvalidArgument, which nanobind turns into ValueError with the message as it is.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_layout.hpp"
#include "tilegemm/tensor_view.hpp"

#include "_on_device.hpp"
#include "_view.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::on_device;
using deep_gemm_ext::to_view;
using deep_gemm_ext::View;

void* as_stream(std::uintptr_t stream) {
  return reinterpret_cast<void*>(stream);
}

void sf_transpose(const View& sf, const View& out, int device, std::uintptr_t stream) {
  const auto vs = to_view(sf, "sf"), vo = to_view(out, "out");
  on_device(device, {}, [&] { tilegemm::get_mn_major_tma_aligned_tensor(vs, vo, as_stream(stream)); });
}

void sf_pack_ue8m0(const View& sf, const View& out, const std::optional<View>& psum_layout, int m_alignment, int device,
                   std::uintptr_t stream) {
  const auto vs = to_view(sf, "sf"), vo = to_view(out, "out");
  std::optional<tilegemm::TensorView> vp;
  if (psum_layout) vp = to_view(*psum_layout, "psum_layout");
  on_device(device, {}, [&] {
    if (vp)
      tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(vs, vo, *vp, m_alignment, as_stream(stream));
    else  // DeepGEMM packs the exponent bits as they are: no validation (it would also wait for the stream)
      tilegemm::get_mn_major_tma_aligned_packed_ue8m0_tensor(vs, vo, as_stream(stream), /*validate=*/false);
  });
}

void sf_k_grouped_pack_ue8m0(const View& sf, const View& out, const View& grouped_layout, int gran_k, int k_alignment,
                             bool use_psum_layout, int device, std::uintptr_t stream) {
  const auto vs = to_view(sf, "sf"), vo = to_view(out, "out"), vl = to_view(grouped_layout, "grouped_layout");
  on_device(device, {}, [&] {
    tilegemm::get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(vs, vo, vl, gran_k, k_alignment, use_psum_layout,
                                                                     as_stream(stream));
  });
}

}  // namespace

void register_layout_bindings(nb::module_& m) {
  m.def("sf_transpose", &sf_transpose, "sf"_a, "out"_a, "device"_a, "stream"_a,
        "fp32 scales into the MN-major TMA-aligned `out` (sf_transpose_fp32 kernel)");
  m.def("sf_pack_ue8m0", &sf_pack_ue8m0, "sf"_a, "out"_a, "psum_layout"_a.none(), "m_alignment"_a, "device"_a,
        "stream"_a, "fp32 scales packed 4 UE8M0 bytes per int32 into the MN-major TMA-aligned `out`");
  m.def("sf_k_grouped_pack_ue8m0", &sf_k_grouped_pack_ue8m0, "sf"_a, "out"_a, "grouped_layout"_a, "gran_k"_a,
        "k_alignment"_a, "use_psum_layout"_a, "device"_a, "stream"_a,
        "K-grouped fp32 scales [sf_k, mn] packed into int32 [packed_sf_k, mn]");
}
