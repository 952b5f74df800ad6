// What the selector picks for known shapes, that it picks the same thing every time, the cache in front
// of it and DG_PRINT_CONFIGS printing each new desc once.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm_params.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

GemmDesc bf16_desc(int m, int n, int k) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  return desc;
}

const std::vector<std::pair<int, int>> kDeepSeekNK = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                      {7168, 16384}, {4096, 7168},  {7168, 2048}};

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[512];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(HeuristicsSelect, SmallMPicksBlockM64AndWorkThatFillsTheSms) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [n, k] : kDeepSeekNK) {
    const GemmDesc desc = bf16_desc(64, n, k);
    const auto ranked = rank_candidates(desc, hw);
    const GemmConfig& c = ranked.front().config;
    SCOPED_TRACE(to_string(desc) + " -> " + to_string(c));
    EXPECT_EQ(c.block_m, 64);
    EXPECT_EQ(c.num_math_warpgroups, 1);
    // one wave of work units (tiles, or tiles x K slices), at least half the SMs busy: a 256-wide
    // data-parallel tile would leave most of them idle
    EXPECT_EQ(ranked.front().cost.waves, 1);
    EXPECT_GE(ranked.front().cost.work_units, hw.num_sms / 2);
  }
  // N=2112: a data-parallel tile needs to be narrow to give enough tiles (132 at block_n=16, 66 at 32);
  // split-K fills the SMs with wider tiles instead.
  const GemmConfig c = select_config(bf16_desc(64, 2112, 7168), hw);
  EXPECT_TRUE(c.block_n <= 32 || c.scheme == GemmScheme::kSplitK) << to_string(c);
}

// Narrow small-M tiles are bound by their consumer's per-stage issue time, which 128-wide stages halve
// (measured +4–14% on the H200); wider tiles and every M=4096 shape keep 64-wide stages (fewer, larger stages
// measured slower there).
TEST(HeuristicsSelect, TwoAtomStagesOnlyForIssueBoundTiles) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [m, n] : {std::pair{64, 2112}, {128, 2112}, {64, 4096}}) {
    const GemmConfig c = select_config(bf16_desc(m, n, 7168), hw);
    EXPECT_EQ(c.block_k, 128) << to_string(c);
    EXPECT_LE(c.block_n, 32) << to_string(c);
  }
  for (auto [n, k] : kDeepSeekNK) {
    const GemmConfig c = select_config(bf16_desc(4096, n, k), hw);
    EXPECT_EQ(c.block_k, 64) << to_string(c);
  }
  EXPECT_EQ(select_config(bf16_desc(128, 7168, 16384), hw).block_k, 64);
  EXPECT_EQ(select_config(bf16_desc(64, 24576, 1536), hw).block_k, 64);

  // The issue floor counts one handshake per stage: the same tile walks half as many 128-wide stages.
  const auto ranked = rank_candidates(bf16_desc(64, 2112, 7168), hw);
  double issue64 = 0, issue128 = 0;
  for (const Candidate& cand : ranked)
    if (cand.config.block_m == 64 && cand.config.block_n == 16 && cand.config.scheme == GemmScheme::kDataParallel)
      (cand.config.block_k == 64 ? issue64 : issue128) = cand.cost.tile_issue_us;
  ASSERT_GT(issue64, 0);
  ASSERT_GT(issue128, 0);
  EXPECT_LT(issue128, issue64);
  EXPECT_GT(issue128, issue64 / 2);  // the wgmmas stay: only the handshakes halve
  // Calibrated on the H200: 111 ns per 64-wide stage and 172 ns per 128-wide one for these 64x16 tiles (112 and 56
  // stages at K = 7168).
  EXPECT_NEAR(issue64 / 112, 0.111, 0.011);
  EXPECT_NEAR(issue128 / 56, 0.172, 0.017);
}

TEST(HeuristicsSelect, LargeMPicksALargeTileWithTwoMathWarpgroups) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [n, k] : kDeepSeekNK) {
    const GemmDesc desc = bf16_desc(4096, n, k);
    const GemmConfig c = select_config(desc, hw);
    SCOPED_TRACE(to_string(desc) + " -> " + to_string(c));
    EXPECT_EQ(c.num_math_warpgroups, 2);
    EXPECT_GE(c.block_m, 128);
    EXPECT_GE(c.block_m * c.block_n, 128 * 112);
    EXPECT_GE(c.stages, 3);
  }
}

TEST(HeuristicsSelect, PicksTheMostStagesThatFitForTheChosenTile) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = bf16_desc(4096, 7168, 16384);
  const GemmConfig c = select_config(desc, hw);
  GemmConfig more = c;
  more.stages = c.stages + 1;
  more.smem_bytes = 0;
  std::string why;
  // either one more stage does not fit or it is past the cap of 16
  EXPECT_TRUE(c.stages == 16 || !sm90_bf16_config_legal(desc, more, hw, &why)) << to_string(c);
}

// The config records the D swizzle the epilogue and D's tensor map use (d_chunk_swizzle_bytes), fp32 D included
// (it used to say 0 there while the kernel swizzled).
TEST(HeuristicsSelect, RecordsTheDSwizzleTheKernelUses) {
  const HardwareModel hw = hardware_preset("h200");
  for (DType d : {DType::kBFloat16, DType::kFloat32})
    for (auto [m, n, k] : {std::tuple{64, 2112, 7168}, std::tuple{4096, 7168, 2048}, std::tuple{129, 24, 136}}) {
      GemmDesc desc = bf16_desc(m, n, k);
      desc.d_dtype = d;
      const GemmConfig c = select_config(desc, hw);
      EXPECT_EQ(c.swizzle_d_bytes, d_chunk_swizzle_bytes(d_chunk_bytes(c.block_n, dtype_bits(d) / 8))) << to_string(c);
      if (d == DType::kFloat32 && c.block_n % 32 == 0) EXPECT_EQ(c.swizzle_d_bytes, 128) << to_string(c);
    }
}

TEST(HeuristicsSelect, GroupedShapes) {
  const HardwareModel hw = hardware_preset("h200");
  GemmDesc contiguous = bf16_desc(4 * 8192, 4096, 7168);
  contiguous.type = GemmType::kMGroupedContiguous, contiguous.num_groups = 4;
  EXPECT_LE(select_config(contiguous, hw).block_m, 128);
  GemmDesc masked = bf16_desc(4096, 7168, 2048);
  masked.type = GemmType::kMGroupedMasked, masked.num_groups = 16, masked.expected_m = 48;
  const auto ranked = rank_candidates(masked, hw);
  EXPECT_EQ(ranked.front().config.block_m, 64);  // expected_m, not M_max, sets the tile
  EXPECT_EQ(ranked.front().cost.tiles % 16, 0);  // one m-block per group × n-blocks × 16 groups
  GemmDesc k_grouped = bf16_desc(4096, 4096, 4096);
  k_grouped.type = GemmType::kKGroupedContiguous, k_grouped.num_groups = 4;
  k_grouped.major_a = k_grouped.major_b = Major::kMNMajor;
  try {
    select_config(k_grouped, hw);  // bf16 D
    ADD_FAILURE() << "K-grouped with bf16 D should have no legal candidate";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fp32"), std::string::npos) << e.what();
  }
  k_grouped.d_dtype = DType::kFloat32;
  const GemmConfig kg = select_config(k_grouped, hw);
  EXPECT_EQ(kg.block_m % 64, 0);  // MN-major A needs 64-wide panels
  EXPECT_EQ(kg.block_n % 64, 0);
}

TEST(HeuristicsSelect, CostTermsAreConsistentWithTheLedger) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = bf16_desc(4096, 7168, 2048);
  const auto ranked = rank_candidates(desc, hw);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].cost.predicted_us, ranked[i].cost.predicted_us * (1 + 1e-9));
  for (const Candidate& c : ranked) {
    const auto& r = c.cost;
    const long long tiles =
        ((4096 + c.config.block_m - 1) / c.config.block_m) * ((7168 + c.config.block_n - 1) / c.config.block_n);
    ASSERT_EQ(r.tiles, tiles) << to_string(c.config);
    EXPECT_EQ(r.waves, (tiles + 131) / 132);
    EXPECT_NEAR(r.last_wave_util, (tiles - (r.waves - 1) * 132) / 132.0, 1e-12);
    // the ledger's tiled traffic b·MNK(1/bm + 1/bn), with whole tiles: A is re-read once per n-block; a 2x1
    // cluster reads each B tile once for its two m-blocks
    const double mnk = 4096.0 * 7168 * 2048;
    const double n_blocks = (7168 + c.config.block_n - 1) / c.config.block_n;
    const double m_blocks = (4096 + c.config.block_m - 1) / c.config.block_m / c.config.cluster_m;
    // (the cost model shares the B tile's bytes in proportion per tile, so clusters agree to 1%, the rest exactly)
    EXPECT_NEAR(r.l2_to_sm_bytes, 2 * (4096.0 * 2048 * n_blocks + 7168.0 * 2048 * m_blocks),
                (c.config.cluster_m > 1 ? 1e-2 : 1e-9) * r.l2_to_sm_bytes);
    EXPECT_DOUBLE_EQ(r.flops, 2 * mnk);
    EXPECT_NEAR(r.predicted_tflops, r.flops / r.predicted_us / 1e6, 1e-9 * r.predicted_tflops);
  }
}

TEST(HeuristicsSelect, DeterministicAcrossCallsAndInstances) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {64, 128, 4096})
    for (auto [n, k] : kDeepSeekNK) {
      const GemmDesc desc = bf16_desc(m, n, k);
      const auto a = rank_candidates(desc, hw), b = rank_candidates(desc, hw);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(to_string(a[i].config), to_string(b[i].config));
      ConfigSelector s1, s2;
      EXPECT_EQ(to_string(s1.select(desc, hw, 0, false, nullptr)), to_string(s2.select(desc, hw, 0, false, nullptr)));
      EXPECT_EQ(to_string(s1.select(desc, hw, 0, false, nullptr)), to_string(a.front().config));
    }
}

TEST(HeuristicsSelect, NumSmsOverride) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = bf16_desc(4096, 4096, 7168);
  EXPECT_EQ(select_config(desc, hw).num_sms, hw.num_sms);
  const GemmConfig half = select_config(desc, hw, 66);
  EXPECT_EQ(half.num_sms, 66);
  EXPECT_EQ(rank_candidates(desc, hw, 66).front().cost.num_sms, 66);
  EXPECT_THROW(select_config(desc, hw, hw.num_sms + 1), InvalidArgument);
  EXPECT_THROW(select_config(desc, hw, -1), InvalidArgument);
}

TEST(HeuristicsSelect, InvalidDescThrowsBeforeSelecting) {
  const HardwareModel hw = hardware_preset("h200");
  try {
    select_config(bf16_desc(64, 2112, 7100 + 1), hw);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "k");
  }
}

TEST(HeuristicsCache, PrintsEachNewDescOnceAndCachesIt) {
  const HardwareModel hw = hardware_preset("h200");
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ConfigSelector selector;
  const GemmDesc a = bf16_desc(128, 4096, 7168), b = bf16_desc(128, 7168, 2048);
  const GemmConfig first = selector.select(a, hw, 0, true, sink);
  EXPECT_EQ(to_string(selector.select(a, hw, 0, true, sink)), to_string(first));
  selector.select(b, hw, 0, true, sink);
  selector.select(b, hw, 66, true, sink);  // another SM count is another key
  EXPECT_EQ(selector.size(), 3u);
  const std::string printed = read_all(sink);
  EXPECT_EQ(count_lines(printed), 3) << printed;
  EXPECT_NE(printed.find(to_string(a) + " -> " + to_string(first)), std::string::npos) << printed;
  selector.clear();
  EXPECT_EQ(selector.size(), 0u);
  std::fclose(sink);
}

TEST(HeuristicsCache, KeyCoversTheHardwareModel) {
  HardwareModel hw = hardware_preset("h200");
  ConfigSelector selector;
  const GemmDesc desc = bf16_desc(4096, 4096, 7168);
  const GemmConfig big = selector.select(desc, hw, 0, false, nullptr);
  HardwareModel small_smem = hw;
  small_smem.smem_per_block_bytes = 100 * 1024;  // same name, overridden field: a new key
  const GemmConfig small = selector.select(desc, small_smem, 0, false, nullptr);
  EXPECT_EQ(selector.size(), 2u);
  EXPECT_LE(small.smem_bytes, 100 * 1024);
  EXPECT_GT(big.smem_bytes, 100 * 1024);
}

TEST(HeuristicsCache, SilentWithoutPrint) {
  const HardwareModel hw = hardware_preset("h200");
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ConfigSelector selector;
  selector.select(bf16_desc(64, 4096, 7168), hw, 0, false, sink);
  EXPECT_EQ(read_all(sink), "");
  std::fclose(sink);
}

TEST(HeuristicsCache, ConcurrentCallersAgreeAndPrintOnce) {
  const HardwareModel hw = hardware_preset("h200");
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ConfigSelector selector;
  const GemmDesc desc = bf16_desc(4096, 2112, 7168);
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] { results[i] = to_string(selector.select(desc, hw, 0, true, sink)); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, results.front());
  EXPECT_EQ(selector.size(), 1u);
  EXPECT_EQ(count_lines(read_all(sink)), 1);
  std::fclose(sink);
}

TEST(HeuristicsCache, DgPrintConfigsPrintsToStderrOnce) {
  ::setenv("DG_PRINT_CONFIGS", "1", 1);
  reload_env();
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = bf16_desc(128, 24576 + 16, 1536);  // a shape no other test selects
  testing::internal::CaptureStderr();
  select_config(desc, hw);
  select_config(desc, hw);
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("DG_PRINT_CONFIGS");
  reload_env();
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find(to_string(desc)), std::string::npos) << err;
}
