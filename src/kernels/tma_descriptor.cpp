#include "kernels/tma_descriptor.hpp"

#include <cuda.h>
#include <cstring>

#include <fmt/format.h>

#include "jit/driver_api.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::kernels {

namespace {

CUtensorMapDataType tma_dtype(DType t, const char* what) {
  switch (t) {
    case DType::kBFloat16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::kFloat16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::kFloat32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kInt8:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DType::kInt32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    default:
      break;
  }
  throw InvalidArgument(what, "a dtype TMA can move (bf16, fp16, fp32, fp8, int8, int32)", std::string(dtype_name(t)));
}

CUtensorMapSwizzle tma_swizzle(int bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    default:
      return CU_TENSOR_MAP_SWIZZLE_128B;
  }
}

}  // namespace

TmaDescriptor encode_tma(const TmaView& view, const char* what) {
  static_assert(sizeof(TmaDescriptor) == sizeof(CUtensorMap), "TmaDescriptor must mirror CUtensorMap");
  const auto addr = reinterpret_cast<std::uintptr_t>(view.base);
  TILEGEMM_REQUIRE(addr % 16 == 0, what, "a 16-byte aligned base address", fmt::format("{:#x}", addr));
  for (int i = 0; i < 2; ++i)
    TILEGEMM_REQUIRE(view.byte_strides[i] % 16 == 0, what, "row strides that are multiples of 16 bytes",
                     fmt::format("a stride of {} bytes", view.byte_strides[i]));
  const cuuint64_t dims[3] = {view.dims[0], view.dims[1], view.dims[2]};
  const cuuint64_t strides[2] = {view.byte_strides[0], view.byte_strides[1]};
  const cuuint32_t box[3] = {view.box[0], view.box[1], view.box[2]};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  CUtensorMap map{};
  const jit::DriverApi& driver = jit::driver_api("encode_tma");
  const CUresult res = driver.cuTensorMapEncodeTiled(
      &map, tma_dtype(view.dtype, what), 3, view.base, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      tma_swizzle(view.swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS)
    throw RuntimeError(
        fmt::format("cuTensorMapEncodeTiled failed for {} ({}): dims [{}, {}, {}], box [{}, {}, {}], "
                    "strides [{}, {}] bytes",
                    what, jit::driver_error_text(driver, res), dims[0], dims[1], dims[2], box[0], box[1], box[2],
                    strides[0], strides[1]));
  TmaDescriptor out;
  static_assert(sizeof(out) == sizeof(map));
  std::memcpy(&out, &map, sizeof(map));
  return out;
}

}  // namespace tilegemm::kernels
