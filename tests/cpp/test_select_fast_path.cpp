// ConfigSelector::select searches in one pass (select_config.cpp: cheapest_candidate) where rank_candidates sorts
// every candidate; both must pick the same config (or throw the same error) for every problem.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "scoped_env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"

using namespace tilegemm;
using test_util::ScopedEnv;

namespace {

const std::vector<std::pair<int, int>> kDeepSeekNK = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                      {7168, 16384}, {4096, 7168},  {7168, 2048}};

// Every field: to_string leaves out the scheme.
std::string fields(const GemmConfig& c) {
  return to_string(c) + " scheme=" + scheme_name(c.scheme);
}

// The row counts a serving engine asks for: every 37th in 1..4096, and the powers of two with their neighbours.
std::vector<int> serving_ms() {
  std::set<int> ms;
  for (int m = 1; m <= 4096; m += 37) ms.insert(m);
  for (int p = 1; p <= 4096; p *= 2)
    for (int m : {p - 1, p, p + 1})
      if (m >= 1 && m <= 4096) ms.insert(m);
  return {ms.begin(), ms.end()};
}

GemmDesc make_desc(GemmType type, int m, int n, int k, bool fp8, int groups = 1, DType d = DType::kBFloat16) {
  GemmDesc desc;
  desc.type = type;
  desc.m = m, desc.n = n, desc.k = k, desc.num_groups = groups;
  if (fp8) desc.a_dtype = desc.b_dtype = DType::kFloat8E4M3;
  desc.d_dtype = d;
  return desc;
}

struct Tally {
  int picked = 0, rejected = 0;
};

// The fast path's pick against rank_candidates' first, on a fresh cache; or the same error from both.
void expect_same_pick(const GemmDesc& desc, const HardwareModel& hw, int num_sms, Tally& tally) {
  SCOPED_TRACE(fmt::format("{} on {} with num_sms {}", to_string(desc), hw.name, num_sms));
  std::string ranked_error, fast_error;
  GemmConfig ranked, fast;
  try {
    ranked = rank_candidates(desc, hw, num_sms).front().config;
  } catch (const InvalidArgument& e) {
    ranked_error = e.what();
  }
  try {
    ConfigSelector selector;
    fast = selector.select(desc, hw, num_sms, false, nullptr);
  } catch (const InvalidArgument& e) {
    fast_error = e.what();
  }
  EXPECT_EQ(fast_error, ranked_error);
  if (ranked_error.empty()) EXPECT_EQ(fields(fast), fields(ranked));
  ++(ranked_error.empty() ? tally.picked : tally.rejected);
}

void sweep_deepseek(bool fp8) {
  const HardwareModel hw = hardware_preset("h200");
  Tally tally;
  for (auto [n, k] : kDeepSeekNK)
    for (int m : serving_ms()) expect_same_pick(make_desc(GemmType::kNormal, m, n, k, fp8), hw, 0, tally);
  std::printf("%s: %d problems picked alike, %d rejected alike\n", fp8 ? "fp8" : "bf16", tally.picked, tally.rejected);
  EXPECT_GT(tally.picked, 800);
  EXPECT_EQ(tally.rejected, 0);
}

}  // namespace

TEST(SelectFastPath, SameAsRankedOnTheFp8ServingSweep) {
  sweep_deepseek(/*fp8=*/true);
}

TEST(SelectFastPath, SameAsRankedOnTheBf16ServingSweep) {
  sweep_deepseek(/*fp8=*/false);
}

TEST(SelectFastPath, SameAsRankedOnGroupedBatchedAndFewerSms) {
  const HardwareModel h200 = hardware_preset("h200");
  Tally tally;
  for (const bool fp8 : {true, false}) {
    for (auto [n, k] : {std::pair{4096, 7168}, {7168, 2048}, {2112, 7168}}) {
      for (int groups : {4, 8})
        for (int rows : {128, 256, 1024}) {
          GemmDesc contiguous = make_desc(GemmType::kMGroupedContiguous, groups * rows, n, k, fp8, groups);
          expect_same_pick(contiguous, h200, 0, tally);
          contiguous.use_psum_layout = true;
          expect_same_pick(contiguous, h200, 0, tally);
        }
      for (int expected_m : {0, 1, 64, 128, 200, 1024}) {
        GemmDesc masked = make_desc(GemmType::kMGroupedMasked, 4096, n, k, fp8, 16);
        masked.expected_m = expected_m;
        expect_same_pick(masked, h200, 0, tally);
      }
      for (int m : {1, 64, 300, 4096}) expect_same_pick(make_desc(GemmType::kBatched, m, n, k, fp8, 4), h200, 0, tally);
      // K-grouped weight gradients: fp32 D, K summed over the groups.
      expect_same_pick(make_desc(GemmType::kKGroupedContiguous, n, k, 8 * 512, fp8, 8, DType::kFloat32), h200, 0,
                       tally);
      for (int num_sms : {1, 66, 100, 117, 131})
        for (int m : {1, 64, 128, 1000, 4096})
          expect_same_pick(make_desc(GemmType::kNormal, m, n, k, fp8), h200, num_sms, tally);
      GemmDesc exact = make_desc(GemmType::kNormal, 64, n, k, fp8, 1, DType::kFloat32);
      exact.with_c = exact.deterministic = true;
      expect_same_pick(exact, h200, 0, tally);
    }
    // Shapes where split-K or stream-K win, deterministic or not.
    for (auto [m, n, k] : {std::tuple{64, 512, 16384}, {129, 576, 1024}, {1, 256, 7168}, {4096, 7168, 2048}})
      for (const bool deterministic : {false, true}) {
        GemmDesc desc = make_desc(GemmType::kNormal, m, n, k, fp8);
        desc.deterministic = deterministic;
        expect_same_pick(desc, h200, 0, tally);
      }
    for (const char* preset : {"h100-sxm", "h800", "h20"})
      for (int m : {1, 64, 4096})
        expect_same_pick(make_desc(GemmType::kNormal, m, 7168, 2048, fp8), hardware_preset(preset), 0, tally);
  }
  GemmDesc reduced = make_desc(GemmType::kBatchReduced, 256, 4096, 4 * 1024, false, 4);
  expect_same_pick(reduced, h200, 0, tally);
  GemmDesc mn_major = make_desc(GemmType::kNormal, 200, 4096, 7168, false);
  mn_major.major_a = mn_major.major_b = Major::kMNMajor;
  expect_same_pick(mn_major, h200, 0, tally);
  std::printf("%d problems picked alike, %d rejected alike\n", tally.picked, tally.rejected);
  EXPECT_GT(tally.picked, 300);
}

// The filter and the forced scheme reach the fast path as they reach rank_candidates, errors included.
TEST(SelectFastPath, SameAsRankedUnderTheEnvKnobs) {
  const HardwareModel hw = hardware_preset("h200");
  const std::vector<GemmDesc> descs = {
      make_desc(GemmType::kNormal, 64, 7168, 16384, true), make_desc(GemmType::kNormal, 128, 4096, 7168, false),
      make_desc(GemmType::kNormal, 4096, 2112, 7168, true), make_desc(GemmType::kNormal, 64, 512, 16384, false),
      make_desc(GemmType::kNormal, 64, 576, 64, false)};
  Tally tally;
  for (const char* filter : {"block_m=64,block_n=96", "cluster_m=2", "block_k=128", "block_k=512", "raster=3",
                             "stages=5", "split_k=2", "block_n=56", "block_n=44"}) {
    ScopedEnv env_filter("TILEGEMM_CONFIG_FILTER", filter);
    for (const GemmDesc& desc : descs) expect_same_pick(desc, hw, 0, tally);
  }
  for (const char* scheme : {"split-k:3", "split-k", "stream-k", "data-parallel"}) {
    ScopedEnv env_scheme("TILEGEMM_GEMM_SCHEME", scheme);
    for (const GemmDesc& desc : descs) expect_same_pick(desc, hw, 0, tally);
  }
  EXPECT_GT(tally.picked, 40);
  EXPECT_GT(tally.rejected, 5);  // block_n=44, a forced scheme K = 64 cannot take, ...
}

// DG_PRINT_CONFIGS explains the pick with the wave analysis and the prediction rank_candidates has for it.
TEST(SelectFastPath, PrintsTheRankedCandidatesExplanation) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = make_desc(GemmType::kNormal, 64, 512, 16384, false);
  const Candidate ranked = rank_candidates(desc, hw).front();
  ASSERT_EQ(ranked.config.scheme, GemmScheme::kSplitK);
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ConfigSelector selector;
  selector.select(desc, hw, 0, true, sink);
  std::rewind(sink);
  std::string printed(4096, '\0');
  printed.resize(std::fread(printed.data(), 1, printed.size(), sink));
  std::fclose(sink);
  EXPECT_NE(printed.find(ranked.scheme_reason), std::string::npos) << printed;
  EXPECT_NE(printed.find(fmt::format("predicted {:.1f} us ({}-bound)", ranked.cost.predicted_us, ranked.cost.bound)),
            std::string::npos)
      << printed;
}

// A coarse guard only (the old sort took ~6 ms per FP8 problem on a 2-core dev machine, the fast path ~0.12 ms).
TEST(SelectFastPath, NewFp8ProblemsAreCheap) {
  const HardwareModel hw = hardware_preset("h200");
  int count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto [n, k] : kDeepSeekNK)
    for (int m = 1; m <= 4096; m += 97) {
      ConfigSelector selector;
      selector.select(make_desc(GemmType::kNormal, m, n, k, true), hw, 0, false, nullptr);
      ++count;
    }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / count;
  std::printf("%.1f us per new FP8 problem (%d problems)\n", us, count);
  EXPECT_LT(us, 20000.0);
}
