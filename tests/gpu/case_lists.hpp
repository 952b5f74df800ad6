#pragma once
// The case lists of the dense GPU tests. "quick" (default) covers every layout, D dtype, C mode and every
// listed M, N, K at least once; TILEGEMM_GPU_TEST_LEVEL=full runs the cross products.
#include <array>
#include <vector>

#include "dense_case.hpp"

namespace gpu_test {

// DeepSeek-V3 dense GEMM shapes (M × {N,K} pairs), as in DeepGEMM's tests and anchors/h200.md.
constexpr std::array<std::int64_t, 3> kDeepSeekM = {64, 128, 4096};
constexpr std::array<std::array<std::int64_t, 2>, 6> kDeepSeekNK = {
    {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}}};

// Ragged shapes: none of these M is a multiple of 8, so MN-major A (tn, tt) must be rejected for them;
// kRaggedMnM are ragged against the tile sizes but legal for MN-major A.
constexpr std::array<std::int64_t, 5> kRaggedM = {1, 7, 65, 129, 4095};
constexpr std::array<std::int64_t, 3> kRaggedMnM = {8, 136, 4088};
constexpr std::array<std::int64_t, 5> kRaggedN = {8, 24, 576, 2112, 7168};
constexpr std::array<std::int64_t, 4> kRaggedK = {64, 136, 1000, 7168};

// The 24 (layout, D dtype, C mode) combinations, indexed 0..23.
inline DenseCase with_combo(DenseCase c, int combo) {
  c.layout = kAllLayouts[combo % 4];
  c.d_dtype = (combo / 4) % 2 ? DType::kFloat32 : DType::kBFloat16;
  c.c_mode = kAllCModes[(combo / 8) % 3];
  return c;
}

inline std::vector<DenseCase> deepseek_cases() {
  std::vector<DenseCase> cases;
  int i = 0;
  for (auto m : kDeepSeekM)
    for (auto [n, k] : kDeepSeekNK) {
      const DenseCase base{0, m, n, k};
      if (full_level()) {
        for (int combo = 0; combo < 24; ++combo) cases.push_back(with_combo(base, combo));
      } else {
        cases.push_back(with_combo(base, 0));           // nt, bf16, no C: DeepGEMM's default
        cases.push_back(with_combo(base, 1 + i % 23));  // one more combination per shape
      }
      ++i;
    }
  return cases;
}

// Decode: the same six N,K pairs at M under one 64-row tile (quick: each pair at one M, K-major A with either B,
// bf16 or fp32 D, each C mode; full: every M, layout and D dtype).
inline std::vector<DenseCase> decode_cases() {
  std::vector<DenseCase> cases;
  constexpr std::array<std::int64_t, 4> ms = {1, 8, 16, 32};
  int i = 0;
  for (auto [n, k] : kDeepSeekNK) {
    for (int j = 0; j < 4; ++j)
      if (full_level() || j == i % 4)
        cases.push_back(with_combo({0, ms[j], n, k}, full_level() ? i * 4 + j : i % 2 + 4 * (i / 2)));
    ++i;
  }
  return cases;
}

inline std::vector<DenseCase> ragged_cases() {
  std::vector<DenseCase> cases;
  int p = 0;
  for (auto m : kRaggedM)
    for (auto n : kRaggedN) {
      if (full_level()) {
        for (auto k : kRaggedK)
          for (int l = 0; l < 4; ++l) cases.push_back(with_combo({0, m, n, k}, l + 4 * (p++ % 6)));
      } else {
        DenseCase c = with_combo({0, m, n, kRaggedK[(p + p / 4) % 4]}, p % 24);
        c.d_pad = p % 5 == 2 ? 8 : 0;
        cases.push_back(c);
        ++p;
      }
    }
  int q = 0;
  for (auto m : kRaggedMnM)
    for (auto n : kRaggedN) {
      const int first_k = full_level() ? 0 : q % 4, last_k = full_level() ? 4 : q % 4 + 1;
      for (int ki = first_k; ki < last_k; ++ki) {
        DenseCase c = with_combo({0, m, n, kRaggedK[ki]}, (q % 2 ? 3 : 2) + 4 * (q % 6));
        c.d_pad = q % 3 == 1 ? 8 : 0;
        cases.push_back(c);
        ++q;
      }
    }
  return cases;
}

inline std::vector<DenseCase> batched_cases() {
  std::vector<DenseCase> cases;
  const std::int64_t shapes[][3] = {{64, 128, 64}, {129, 24, 136}, {256, 576, 1000}};
  int i = 0;
  for (std::int64_t batch : {1, 3})
    for (const auto& s : shapes)
      for (int l = 0; l < 4; ++l) cases.push_back(with_combo({batch, s[0], s[1], s[2]}, l + 4 * (i++ % 6)));
  return cases;
}

// Small cases run under compute-sanitizer (memcheck, racecheck, synccheck): one per kernel path.
inline std::vector<DenseCase> representative_cases() {
  std::vector<DenseCase> cases = {
      {0, 129, 24, 136, Layout::kNT, DType::kBFloat16, CMode::kNone},
      {0, 136, 576, 1000, Layout::kTT, DType::kFloat32, CMode::kInPlace},
      {0, 65, 2112, 64, Layout::kNN, DType::kFloat32, CMode::kSeparate, 8},
      {3, 64, 128, 64, Layout::kTN, DType::kBFloat16, CMode::kSeparate},
  };
  return cases;
}

struct CaseNamer {
  std::string operator()(const ::testing::TestParamInfo<DenseCase>& info) const { return case_name(info.param); }
};

}  // namespace gpu_test
