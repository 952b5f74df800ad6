#pragma once
// Host-side helpers for the shared DType enum: names, parsing, byte counts.
#include <string>
#include <string_view>

#include "tilegemm/shared_enums.hpp"

namespace tilegemm {

// Canonical short name: "fp32", "tf32", "bf16", "fp16", "fp8" (e4m3), "fp8e5m2", "int8", "int4", "fp4", "int32".
std::string_view dtype_name(DType t);

// Parses a name (case-insensitive, accepts aliases such as "float32", "e4m3", "bfloat16").
// Throws InvalidArgument naming `argument` when the name is unknown.
DType parse_dtype(std::string_view name, const std::string& argument = "dtype");

// Bytes taken by `count` elements (packed 4-bit types round up to whole bytes).
inline double dtype_bytes(DType t, double count) {
  return count * dtype_bits(t) / 8.0;
}

std::string_view major_name(Major m);
std::string_view gemm_type_name(GemmType t);

}  // namespace tilegemm
