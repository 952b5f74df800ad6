#pragma once
// The C++ spellings generated kernel sources use for the shared enums.
#include <string>

#include <fmt/format.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/gemm_config.hpp"

namespace tilegemm::kernels {

inline const char* gemm_type_token(GemmType t) {
  switch (t) {
    case GemmType::kNormal:
      return "kNormal";
    case GemmType::kBatched:
      return "kBatched";
    case GemmType::kMGroupedContiguous:
      return "kMGroupedContiguous";
    case GemmType::kMGroupedMasked:
      return "kMGroupedMasked";
    case GemmType::kKGroupedContiguous:
      return "kKGroupedContiguous";
    case GemmType::kBatchReduced:
      return "kBatchReduced";
  }
  return "kNormal";
}

inline const char* bool_token(bool v) {
  return v ? "true" : "false";
}

inline const char* scheme_token(GemmScheme s) {
  switch (s) {
    case GemmScheme::kDataParallel:
      return "kDataParallel";
    case GemmScheme::kSplitK:
      return "kSplitK";
    case GemmScheme::kStreamK:
      return "kStreamK";
  }
  return "kDataParallel";
}

// Kernel-name suffix: nothing for data-parallel (names of existing kernels stay as they were).
inline std::string scheme_suffix(const GemmDesc& desc, const GemmConfig& config) {
  if (config.scheme == GemmScheme::kDataParallel) return "";
  return fmt::format("_{}{}", config.scheme == GemmScheme::kSplitK ? "splitk" : "streamk",
                     desc.deterministic ? "_det" : "");
}

}  // namespace tilegemm::kernels
