#pragma once
// The C++ spellings generated kernel sources use for the shared enums.
#include "tilegemm/dtype.hpp"

namespace tilegemm::kernels {

inline const char* gemm_type_token(GemmType t) {
  switch (t) {
    case GemmType::kNormal: return "kNormal";
    case GemmType::kBatched: return "kBatched";
    case GemmType::kMGroupedContiguous: return "kMGroupedContiguous";
    case GemmType::kMGroupedMasked: return "kMGroupedMasked";
    case GemmType::kKGroupedContiguous: return "kKGroupedContiguous";
  }
  return "kNormal";
}

inline const char* bool_token(bool v) { return v ? "true" : "false"; }

}  // namespace tilegemm::kernels
