#include "tilegemm/dtype.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {
struct NamedDType {
  std::string_view name;
  DType dtype;
};
// First entry of each dtype is its canonical name.
constexpr std::array<NamedDType, 21> kDTypeNames{{
    {"fp32", DType::kFloat32},       {"float32", DType::kFloat32}, {"f32", DType::kFloat32},
    {"tf32", DType::kTFloat32},      {"bf16", DType::kBFloat16},   {"bfloat16", DType::kBFloat16},
    {"fp16", DType::kFloat16},       {"float16", DType::kFloat16}, {"f16", DType::kFloat16},
    {"fp8", DType::kFloat8E4M3},     {"e4m3", DType::kFloat8E4M3}, {"fp8e4m3", DType::kFloat8E4M3},
    {"fp8e5m2", DType::kFloat8E5M2}, {"e5m2", DType::kFloat8E5M2}, {"int8", DType::kInt8},
    {"int4", DType::kInt4},          {"fp4", DType::kFloat4E2M1},  {"e2m1", DType::kFloat4E2M1},
    {"int32", DType::kInt32},        {"i8", DType::kInt8},         {"int64", DType::kInt64},
}};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& e : kDTypeNames)
    if (e.dtype == t) return e.name;
  return "unknown";
}

DType parse_dtype(std::string_view name, const std::string& argument) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& e : kDTypeNames)
    if (e.name == lower) return e.dtype;
  throw InvalidArgument(argument, "one of fp32, tf32, bf16, fp16, fp8, fp8e5m2, int8, int4, fp4, int32, int64",
                        fmt::format("'{}'", name));
}

std::string_view major_name(Major m) {
  return m == Major::kKMajor ? "K-major" : "MN-major";
}

std::string_view gemm_type_name(GemmType t) {
  switch (t) {
    case GemmType::kNormal:
      return "normal";
    case GemmType::kBatched:
      return "batched";
    case GemmType::kMGroupedContiguous:
      return "m_grouped_contiguous";
    case GemmType::kMGroupedMasked:
      return "m_grouped_masked";
    case GemmType::kKGroupedContiguous:
      return "k_grouped_contiguous";
    case GemmType::kBatchReduced:
      return "batch_reduced";
  }
  return "unknown";
}

}  // namespace tilegemm
