// Split-K / stream-K on the CPU: which scheme the selector picks and why, the legality rules, the workspace
// layout and its validation, the env / API switches, and that every kernel variant compiles through NVRTC
// for sm_90a with no spills or local memory (DG_JIT_PTXAS_CHECK).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "expect_invalid.hpp"
#include "kernels/sm90_bf16_gemm.hpp"
#include "kernels/split_workspace.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/ledger.hpp"

using namespace tilegemm;

namespace {

GemmDesc desc_of(int m, int n, int k) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k;
  return d;
}

const std::vector<std::pair<int, int>> kDeepSeekNK = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                      {7168, 16384}, {4096, 7168},  {7168, 2048}};

using test_util::ScopedEnv;

GemmConfig split_config(GemmScheme scheme, int split, int bm = 64, int bn = 128, int wgs = 1) {
  GemmConfig c;
  c.block_m = bm, c.block_n = bn, c.num_math_warpgroups = wgs, c.stages = 4;
  c.num_sms = 132;
  c.scheme = scheme;
  c.split_k = split;
  return c;
}

}  // namespace

// ---------------------------------------------------------------- selection

// Measured on the H200: where the narrowest data-parallel tiles fill the SMs — every DeepSeek shape — they beat
// split-K; K is cut only when they cannot.
TEST(SplitKSelect, SplitKOnlyWhereDataParallelTilesCannotFillTheSms) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {64, 128})
    for (auto [n, k] : kDeepSeekNK) {
      const GemmConfig c = select_config(desc_of(m, n, k), hw);
      EXPECT_EQ(c.scheme, GemmScheme::kDataParallel) << m << "x" << n << "x" << k << ": " << to_string(c);
    }
  // 64 x 512: at most 32 tiles of 64x16 on 132 SMs.
  for (auto [m, n, k] : {std::tuple{64, 512, 16384}, std::tuple{1, 576, 7168}, std::tuple{128, 256, 7168}}) {
    const auto ranked = rank_candidates(desc_of(m, n, k), hw);
    const Candidate& best = ranked.front();
    std::printf("[split-K select] %dx%dx%d -> %s split_k=%d | %s | %.1f us\n", m, n, k, to_string(best.config).c_str(),
                best.config.split_k, best.scheme_reason.c_str(), best.cost.predicted_us);
    EXPECT_EQ(best.config.scheme, GemmScheme::kSplitK) << m << "x" << n << "x" << k;
    EXPECT_NE(best.scheme_reason.find("split-K"), std::string::npos) << best.scheme_reason;
    EXPECT_LE(best.cost.work_units, hw.num_sms) << "split-K fills one wave";
    EXPECT_GE(best.cost.unit_k_blocks, kMinKItersPerSplit) << "the ledger's minimum K per slice";
  }
}

TEST(SplitKSelect, LargeMShapesStayDataParallel) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [n, k] : kDeepSeekNK) {
    const GemmConfig c = select_config(desc_of(4096, n, k), hw);
    EXPECT_EQ(c.scheme, GemmScheme::kDataParallel) << n << "x" << k << ": " << to_string(c);
    EXPECT_EQ(c.split_k, 1);
  }
}

TEST(SplitKSelect, SplitCandidatesCarryTheLedgerReasonAndReductionCost) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = desc_of(64, 512, 16384);
  int split = 0, stream = 0;
  for (const Candidate& c : enumerate_candidates(desc, hw)) {
    if (c.config.scheme == GemmScheme::kDataParallel) {
      EXPECT_TRUE(c.scheme_reason.empty());
      continue;
    }
    split += c.config.scheme == GemmScheme::kSplitK;
    stream += c.config.scheme == GemmScheme::kStreamK;
    EXPECT_FALSE(c.scheme_reason.empty());
    if (!c.legal) continue;
    EXPECT_GT(c.cost.reduction_us, 0);
    EXPECT_GT(c.cost.workspace_bytes, 0);
    if (c.config.scheme == GemmScheme::kSplitK) EXPECT_EQ(c.cost.work_units, c.cost.tiles * c.config.split_k);
  }
  EXPECT_GT(split, 0);
  (void)stream;
}

TEST(SplitKSelect, DeterministicModeCostsMoreAndIsAnotherCacheKey) {
  const HardwareModel hw = hardware_preset("h200");
  GemmDesc desc = desc_of(64, 512, 16384);
  GemmConfig c = split_config(GemmScheme::kSplitK, 8, 64, 128);
  c.smem_bytes = sm90_bf16_smem_bytes(desc, c);
  const CostBreakdown atomics = estimate_sm90_cost(desc, c, hw);
  desc.deterministic = true;
  const CostBreakdown ordered = estimate_sm90_cost(desc, c, hw);
  EXPECT_GT(ordered.reduction_us, atomics.reduction_us) << "the fix-up reads every slice back";
  EXPECT_GT(ordered.workspace_bytes, atomics.workspace_bytes);

  ConfigSelector selector;
  std::FILE* sink = std::tmpfile();
  selector.select(desc_of(64, 512, 16384), hw, 0, true, sink);
  selector.select(desc, hw, 0, true, sink);
  EXPECT_EQ(selector.size(), 2u);
  std::rewind(sink);
  std::string printed(4096, '\0');
  printed.resize(std::fread(printed.data(), 1, printed.size(), sink));
  std::fclose(sink);
  // DG_PRINT_CONFIGS says which scheme and why, e.g. "split-K 8: 17 tiles fill 13% of 132 SMs, ...".
  EXPECT_NE(printed.find("split-K"), std::string::npos) << printed;
  EXPECT_NE(printed.find("fill"), std::string::npos) << printed;
  EXPECT_NE(printed.find("deterministic fix-up"), std::string::npos) << printed;
  EXPECT_NE(printed.find("fp32 atomics in L2"), std::string::npos) << printed;
}

TEST(SplitKSelect, EnvKnobForcesTheScheme) {
  const HardwareModel hw = hardware_preset("h200");
  {
    ScopedEnv force("TILEGEMM_GEMM_SCHEME", "split-k:3");
    EXPECT_EQ(env().force_scheme, static_cast<int>(GemmScheme::kSplitK));
    const GemmConfig c = select_config(desc_of(129, 576, 1000), hw);
    EXPECT_EQ(c.scheme, GemmScheme::kSplitK);
    EXPECT_EQ(c.split_k, 3);
    // K = 64 is one K block: nothing to split, and the forced scheme has no legal candidate.
    test_util::expect_invalid([&] { select_config(desc_of(64, 576, 64), hw); }, "desc");
  }
  {
    ScopedEnv force("TILEGEMM_GEMM_SCHEME", "stream-k");
    const GemmConfig c = select_config(desc_of(4096, 7168, 2048), hw);
    EXPECT_EQ(c.scheme, GemmScheme::kStreamK);
    EXPECT_EQ(c.split_k, 1);
    EXPECT_EQ(select_config(desc_of(1, 8, 64), hw).scheme, GemmScheme::kStreamK);
  }
  {
    ScopedEnv force("TILEGEMM_GEMM_SCHEME", "data-parallel");
    EXPECT_EQ(select_config(desc_of(64, 512, 16384), hw).scheme, GemmScheme::kDataParallel);
  }
  // Not forced: back to the heuristics' choice (the knob is part of the cache key).
  EXPECT_EQ(select_config(desc_of(64, 512, 16384), hw).scheme, GemmScheme::kSplitK);
}

TEST(SplitKSelect, MalformedEnvValuesNameTheVariable) {
  for (const char* bad : {"split-k:1", "split-k:", "split-k:x", "split-k:999", "streamk", "dp"}) {
    ::setenv("TILEGEMM_GEMM_SCHEME", bad, 1);
    test_util::expect_invalid([] { reload_env(); }, "TILEGEMM_GEMM_SCHEME");
  }
  ::unsetenv("TILEGEMM_GEMM_SCHEME");
  ::setenv("DG_DETERMINISTIC", "maybe", 1);
  test_util::expect_invalid([] { reload_env(); }, "DG_DETERMINISTIC");
  ::unsetenv("DG_DETERMINISTIC");
  reload_env();
}

TEST(SplitKSelect, DeterministicSwitchFollowsEnvUntilSet) {
  {
    ScopedEnv on("DG_DETERMINISTIC", "1");
    EXPECT_TRUE(is_deterministic());
    set_deterministic(false);
    EXPECT_FALSE(is_deterministic());
    set_deterministic(true);
    EXPECT_TRUE(is_deterministic());
  }
  set_deterministic(false);
  EXPECT_FALSE(is_deterministic());
}

// ---------------------------------------------------------------- legality and workspace

TEST(SplitKLegality, RulesNameTheNumbers) {
  const HardwareModel hw = hardware_preset("h200");
  std::string why;
  const GemmDesc desc = desc_of(64, 2112, 1000);  // 16 K blocks
  EXPECT_TRUE(sm90_bf16_config_legal(desc, split_config(GemmScheme::kSplitK, 16), hw, &why)) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, split_config(GemmScheme::kSplitK, 17), hw, &why));
  EXPECT_NE(why.find("17 > 16 K blocks"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, split_config(GemmScheme::kSplitK, 1), hw, &why));
  EXPECT_NE(why.find("[2, 256]"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, split_config(GemmScheme::kDataParallel, 4), hw, &why));
  EXPECT_NE(why.find("data-parallel"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, split_config(GemmScheme::kStreamK, 2), hw, &why));

  GemmDesc grouped = desc_of(4096, 2112, 1024);
  grouped.type = GemmType::kMGroupedContiguous;
  grouped.num_groups = 4;
  EXPECT_FALSE(sm90_bf16_config_legal(grouped, split_config(GemmScheme::kStreamK, 1), hw, &why));
  EXPECT_NE(why.find("dense and batched"), std::string::npos) << why;

  GemmConfig cluster = split_config(GemmScheme::kSplitK, 4, 128, 128, 2);
  cluster.cluster_m = 2, cluster.multicast = MulticastSide::kB;
  EXPECT_FALSE(sm90_bf16_config_legal(desc_of(256, 2112, 7168), cluster, hw, &why));
}

TEST(SplitKWorkspace, LayoutPerSchemeAndMode) {
  GemmDesc desc = desc_of(129, 576, 1000);  // 3 x 5 = 15 tiles of 64x128
  GemmConfig split = split_config(GemmScheme::kSplitK, 4);
  const std::size_t slot = 64 * 128 * 4;
  SplitWorkspaceLayout w = sm90_split_workspace(desc, split, 60);
  EXPECT_EQ(w.tiles, 15);
  EXPECT_EQ(w.counter_bytes, 256u);  // 15 counters, padded so the slots stay aligned
  EXPECT_EQ(w.slots, 15);            // atomics: one reduced slot per tile
  EXPECT_EQ(w.total_bytes(), 256u + 15 * slot);
  desc.deterministic = true;
  w = sm90_split_workspace(desc, split, 60);
  EXPECT_EQ(w.slots, 60);  // one per (tile, slice)
  const GemmConfig stream = split_config(GemmScheme::kStreamK, 1, 128, 128, 2);
  w = sm90_split_workspace(desc, stream, 132);
  EXPECT_EQ(w.tiles, 2 * 5);
  EXPECT_EQ(w.slots, 2 * 132);  // two cut tiles per CTA at most
  EXPECT_EQ(w.counter_bytes, 256u);
  EXPECT_EQ(w.slot_bytes, 128u * 128 * 4);
  EXPECT_EQ(sm90_split_workspace(desc, split_config(GemmScheme::kDataParallel, 1), 132).total_bytes(), 0u);
  // Two or more waves of tiles: only the tiles after the whole-tile waves can be cut.
  const GemmDesc large = desc_of(4096, 7168, 7168);  // 32 x 56 = 1792 tiles of 128x128: 13 full waves + 76
  w = sm90_split_workspace(large, stream, 132);
  EXPECT_EQ(w.tiles, 1792 - 12 * 132);
  EXPECT_EQ(w.slots, w.tiles);

  // The grid the launch uses: work units capped at the SM count.
  EXPECT_EQ(sm90_grid_size(desc, split), 60);
  EXPECT_EQ(sm90_grid_size(desc_of(64, 2112, 7168), split_config(GemmScheme::kSplitK, 8)), 132);
  EXPECT_EQ(sm90_grid_size(desc_of(1, 8, 64), split_config(GemmScheme::kStreamK, 1)), 1);
}

TEST(SplitKWorkspace, ValidationNamesTheWorkspace) {
  EXPECT_NO_THROW(kernels::require_workspace_fits(4096, 4096));
  test_util::expect_invalid([] { kernels::require_workspace_fits(4097, 4096); }, "workspace", "4097");
  test_util::expect_invalid([] { kernels::require_workspace_fits(0, 4096); }, "workspace");
}

// ---------------------------------------------------------------- kernels compile (NVRTC, ptxas check)

class SplitKCodegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");
  }
  void expect_compiles(const GemmDesc& desc, const GemmConfig& config) {
    const jit::KernelSpec spec = kernels::sm90_bf16_gemm_spec(desc, config);
    SCOPED_TRACE(spec.name);
    const char* scheme = config.scheme == GemmScheme::kSplitK ? "kScheme = tilegemm::GemmScheme::kSplitK"
                                                              : "kScheme = tilegemm::GemmScheme::kStreamK";
    EXPECT_NE(spec.source.find(scheme), std::string::npos);
    EXPECT_NE(spec.source.find(desc.deterministic ? "kDeterministic = true" : "kDeterministic = false"),
              std::string::npos);
    EXPECT_NE(spec.name.find(config.scheme == GemmScheme::kSplitK ? "_splitk" : "_streamk"), std::string::npos);
    EXPECT_EQ(spec.name.find("_det") != std::string::npos, desc.deterministic);
    std::shared_ptr<const jit::CompiledKernel> kernel;
    ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
    EXPECT_GT(kernel->cubin().size(), 1000u);
  }
};

TEST_F(SplitKCodegen, EverySchemeModeAndTileShapeCompilesWithoutSpills) {
  struct Shape {
    int bm, bn, wgs;
  };
  for (GemmScheme scheme : {GemmScheme::kSplitK, GemmScheme::kStreamK})
    for (bool deterministic : {false, true})
      for (Shape s : {Shape{64, 256, 1}, Shape{128, 128, 2}, Shape{256, 128, 2}, Shape{64, 16, 1}, Shape{64, 56, 1}}) {
        GemmDesc desc = desc_of(129, 7168, 7168);
        desc.deterministic = deterministic;
        GemmConfig c = split_config(scheme, scheme == GemmScheme::kSplitK ? 4 : 1, s.bm, s.bn, s.wgs);
        c.stages = s.bm == 256 ? 3 : 4;
        c.raster_group = 8;
        c.swizzle_d_bytes = d_chunk_swizzle_bytes(d_chunk_bytes(s.bn, 2));
        std::string why;
        c.smem_bytes = sm90_bf16_smem_bytes(desc, c);
        if (!sm90_bf16_config_legal(desc, c, hardware_preset("h200"), &why)) {
          // The one combination the rules exclude because ptxas spills there.
          EXPECT_TRUE(scheme == GemmScheme::kStreamK && deterministic && s.bm == 256) << why;
          continue;
        }
        expect_compiles(desc, c);
      }
}

TEST_F(SplitKCodegen, OutputsLayoutsAndBatchesCompile) {
  // fp32 D with C, MN-major operands, a batched problem: each with both schemes.
  for (GemmScheme scheme : {GemmScheme::kSplitK, GemmScheme::kStreamK}) {
    GemmDesc fp32 = desc_of(64, 576, 1000);
    fp32.d_dtype = DType::kFloat32, fp32.with_c = true, fp32.deterministic = true;
    const GemmConfig c = split_config(scheme, scheme == GemmScheme::kSplitK ? 3 : 1, 64, 128, 1);
    expect_compiles(fp32, c);
    GemmDesc mn = desc_of(128, 576, 1000);
    mn.major_a = mn.major_b = Major::kMNMajor;
    expect_compiles(mn, c);
    GemmDesc batched = desc_of(64, 576, 1000);
    batched.type = GemmType::kBatched, batched.num_groups = 3;
    expect_compiles(batched, c);
  }
}
