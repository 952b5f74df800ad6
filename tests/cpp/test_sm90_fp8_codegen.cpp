// Every SM90 FP8 kernel variant the API can launch compiles for sm_90a through the JIT on a machine without a
// GPU, and ptxas reports no spills or local memory (DG_JIT_PTXAS_CHECK).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include <fmt/format.h>

#include "kernels/sm90_fp8_gemm.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/fp8_params.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"

using namespace tilegemm;

namespace {

// A fresh JIT cache per test, and ptxas spills or local memory fail the compile.
class Sm90Fp8Codegen : public tilegemm::testing::JitEnvFixture {
 protected:
  void SetUp() override {
    JitEnvFixture::SetUp();
    set("DG_JIT_PTXAS_CHECK", "1");
  }
};

GemmDesc fp8_desc(GemmType type, DType d, bool with_c) {
  GemmDesc desc;
  desc.type = type;
  desc.m = 4096, desc.n = 7168, desc.k = 2048;
  desc.num_groups = type == GemmType::kNormal ? 1 : 4;
  desc.expected_m = type == GemmType::kMGroupedMasked ? 256 : 0;
  desc.a_dtype = desc.b_dtype = DType::kFloat8E4M3;
  desc.d_dtype = d;
  desc.with_c = with_c;
  return desc;
}

void expect_compiles(const GemmDesc& desc, const GemmConfig& config) {
  const jit::KernelSpec spec = kernels::sm90_fp8_gemm_spec(desc, config);
  SCOPED_TRACE(spec.name);
  EXPECT_NE(spec.source.find("static constexpr int BLOCK_N = " + std::to_string(config.block_n)), std::string::npos);
  EXPECT_NE(spec.source.find(std::string("kSfbPerToken = ") + (desc.d_dtype == DType::kFloat32 ? "true" : "false")),
            std::string::npos);
  // Profilers (and DeepGEMM's bench_kineto) find the kernel by a name that carries the family and recipe.
  EXPECT_EQ(spec.entry, desc.d_dtype == DType::kFloat32 ? "sm90_fp8_gemm_1d1d_impl" : "sm90_fp8_gemm_1d2d_impl");
  EXPECT_NE(spec.source.find("\n" + spec.entry + "(const __grid_constant__"), std::string::npos);
  std::shared_ptr<const jit::CompiledKernel> kernel;
  ASSERT_NO_THROW(kernel = jit::get_kernel(spec));
  EXPECT_GT(kernel->cubin().size(), 1000u);
}

// A config with the given tile on every SM; the rest default.
GemmConfig tile_config(const HardwareModel& hw, int block_m, int wgs, int block_n, int block_k, int stages) {
  GemmConfig c;
  c.block_m = block_m, c.num_math_warpgroups = wgs, c.block_n = block_n, c.block_k = block_k;
  c.stages = stages, c.num_sms = hw.num_sms;
  return c;
}

}  // namespace

TEST_F(Sm90Fp8Codegen, EveryRecipeAndSchedulerCompilesWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  for (GemmType type :
       {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
    const GemmDesc desc = fp8_desc(type, DType::kBFloat16, false);
    expect_compiles(desc, select_config(desc, hw));
  }
  GemmDesc psum = fp8_desc(GemmType::kMGroupedContiguous, DType::kBFloat16, false);
  psum.use_psum_layout = true;
  expect_compiles(psum, select_config(psum, hw));
  for (bool with_c : {false, true}) {
    const GemmDesc one_d_one_d = fp8_desc(GemmType::kNormal, DType::kFloat32, with_c);
    expect_compiles(one_d_one_d, select_config(one_d_one_d, hw));
  }
  const GemmDesc k_grouped = fp8_desc(GemmType::kKGroupedContiguous, DType::kFloat32, true);
  expect_compiles(k_grouped, select_config(k_grouped, hw));
}

// K-grouped operands in DeepGEMM's layout: the kernel takes the per-group maps after its parameter block, 4 to 32
// groups' worth (32: a parameter of more than 4 KB, which sm_90a allows), and names itself apart from the [rows, ΣK]
// variant.
TEST_F(Sm90Fp8Codegen, KGroupedPerGroupMapsCompile) {
  const HardwareModel hw = hardware_preset("h200");
  static_assert(sizeof(Fp8GroupMapsParams<8>) < 4096 && sizeof(Fp8GroupMapsParams<32>) > 4096);
  EXPECT_EQ(kernels::sm90_fp8_group_maps_per_launch(1), 4);
  EXPECT_EQ(kernels::sm90_fp8_group_maps_per_launch(5), 8);
  EXPECT_EQ(kernels::sm90_fp8_group_maps_per_launch(16), 16);
  EXPECT_EQ(kernels::sm90_fp8_group_maps_per_launch(40), 32);
  for (auto [with_c, maps] : {std::pair{false, 4}, std::pair{true, 32}}) {
    GemmDesc desc = fp8_desc(GemmType::kKGroupedContiguous, DType::kFloat32, with_c);
    const GemmConfig config = select_config(desc, hw);
    const std::string side_by_side = kernels::sm90_fp8_gemm_spec(desc, config).name;
    desc.k_group_maps = maps;
    const jit::KernelSpec spec = kernels::sm90_fp8_gemm_spec(desc, config);
    EXPECT_NE(spec.name, side_by_side);
    EXPECT_NE(spec.source.find("kGroupMaps = true"), std::string::npos);
    EXPECT_NE(spec.source.find(fmt::format("tilegemm::Fp8GroupMapsParams<{}> params", maps)), std::string::npos);
    EXPECT_NE(spec.source.find("sm90_fp8_gemm<Config>(params.base, {params.maps, params.k_block_base})"),
              std::string::npos);
    expect_compiles(desc, config);
  }
}

// The tile shapes at the edges of the legality rules: the widest tiles the registers allow, the block_n values
// that straddle two 128-wide scale blocks of B (96, 144, 160, 192: the K loop is specialised on the split for all but
// 144) and the narrowest tile.
TEST_F(Sm90Fp8Codegen, ExtremeTileShapesCompile) {
  const HardwareModel hw = hardware_preset("h200");
  struct Shape {
    int block_m, wgs, block_n;
    DType d;
  };
  const Shape shapes[] = {{64, 1, 16, DType::kBFloat16},   {64, 1, 192, DType::kBFloat16},
                          {128, 2, 144, DType::kBFloat16}, {128, 2, 160, DType::kBFloat16},
                          {128, 2, 192, DType::kBFloat16}, {256, 2, 128, DType::kBFloat16},
                          {128, 1, 112, DType::kBFloat16}, {128, 2, 192, DType::kFloat32},
                          {128, 2, 176, DType::kFloat32},  {64, 1, 96, DType::kBFloat16}};
  for (const Shape& s : shapes) {
    const GemmDesc desc = fp8_desc(GemmType::kNormal, s.d, false);
    const GemmConfig c = tile_config(hw, s.block_m, s.wgs, s.block_n, 128, 3);
    std::string why;
    ASSERT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << why;
    expect_compiles(desc, c);
  }
}

// Tiles whose width is an odd multiple of 8: 64x56 and 128x56 (N = 7168 on 128 SMs), a 1D1D 64x24 tile with C, and
// 128x136 (straddles two scale blocks of B with a split step of 8 columns: the K loop's runtime split).
TEST_F(Sm90Fp8Codegen, OddMultipleOfEightTilesCompile) {
  const HardwareModel hw = hardware_preset("h200");
  struct Shape {
    int block_m, wgs, block_n;
    DType d;
  };
  for (const Shape& s : {Shape{64, 1, 56, DType::kBFloat16}, Shape{128, 2, 56, DType::kBFloat16},
                         Shape{64, 1, 24, DType::kFloat32}, Shape{128, 2, 136, DType::kBFloat16}}) {
    const GemmDesc desc = fp8_desc(GemmType::kNormal, s.d, s.d == DType::kFloat32);
    const GemmConfig c = tile_config(hw, s.block_m, s.wgs, s.block_n, 128, 4);
    std::string why;
    ASSERT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << why;
    expect_compiles(desc, c);
  }
  // 152 - 128 = 24 is not gcd(152, 128) = 8: such a tile could straddle three scale blocks of B.
  const GemmConfig wide = tile_config(hw, 128, 2, 152, 128, 3);
  std::string why;
  EXPECT_FALSE(sm90_fp8_config_legal(fp8_desc(GemmType::kNormal, DType::kBFloat16, false), wide, hw, &why));
  EXPECT_NE(why.find("block_n 152"), std::string::npos) << why;
}

namespace {

// A stage-width case: the tile, the problem type and the scheme (split-K cuts 3 slices).
struct StageShape {
  int block_m, wgs, block_n, stages;
  GemmType type;
  GemmScheme scheme;
};

// Each case with `block_k`-wide stages is legal and compiles without spills or serialised wgmma.
void expect_stage_shapes_compile(int block_k, std::initializer_list<StageShape> shapes) {
  const HardwareModel hw = hardware_preset("h200");
  for (const StageShape& s : shapes) {
    const GemmDesc desc = fp8_desc(s.type, DType::kBFloat16, false);
    GemmConfig c = tile_config(hw, s.block_m, s.wgs, s.block_n, block_k, s.stages);
    c.scheme = s.scheme;
    c.split_k = s.scheme == GemmScheme::kSplitK ? 3 : 1;
    std::string why;
    ASSERT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << why;
    expect_compiles(desc, c);
  }
}

}  // namespace

// Stages of two 128-wide K blocks (block_k = 256): narrow and 64-wide one-warpgroup tiles, a 128x192 tile on two
// warpgroups (two column groups per sub-block), split-K and stream-K, a masked problem. Legal only for the 1D2D recipe
// of dense, batched and masked problems without a cluster.
TEST_F(Sm90Fp8Codegen, TwoBlockStagesCompileWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  expect_stage_shapes_compile(256, {StageShape{64, 1, 16, 10, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{64, 1, 64, 6, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{128, 2, 192, 2, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{64, 1, 64, 6, GemmType::kNormal, GemmScheme::kSplitK},
                                    StageShape{64, 1, 32, 8, GemmType::kNormal, GemmScheme::kStreamK},
                                    StageShape{64, 1, 64, 6, GemmType::kMGroupedMasked, GemmScheme::kDataParallel}});
  GemmConfig c = tile_config(hw, 128, 2, 128, 256, 2);
  std::string why;
  for (const GemmDesc& desc : {fp8_desc(GemmType::kNormal, DType::kFloat32, false),
                               fp8_desc(GemmType::kMGroupedContiguous, DType::kBFloat16, false)}) {
    EXPECT_FALSE(sm90_fp8_config_legal(desc, c, hw, &why));
    EXPECT_NE(why.find("block_k 256"), std::string::npos) << why;
  }
  c.cluster_m = 2, c.multicast = MulticastSide::kB;
  EXPECT_FALSE(sm90_fp8_config_legal(fp8_desc(GemmType::kNormal, DType::kBFloat16, false), c, hw, &why));
  EXPECT_NE(why.find("block_k 256"), std::string::npos) << why;
}

// Stages of four 128-wide K blocks (block_k = 512): the tiles the selector offers them for (64x16, 64x32), a 128x64
// tile on two warpgroups, split-K and stream-K, a masked problem; 1024 is no stage width.
TEST_F(Sm90Fp8Codegen, FourBlockStagesCompileWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  expect_stage_shapes_compile(512, {StageShape{64, 1, 16, 5, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{64, 1, 32, 4, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{128, 2, 64, 2, GemmType::kNormal, GemmScheme::kDataParallel},
                                    StageShape{64, 1, 32, 4, GemmType::kNormal, GemmScheme::kSplitK},
                                    StageShape{64, 1, 32, 4, GemmType::kNormal, GemmScheme::kStreamK},
                                    StageShape{64, 1, 32, 4, GemmType::kMGroupedMasked, GemmScheme::kDataParallel}});
  std::string why;
  EXPECT_FALSE(sm90_fp8_config_legal(fp8_desc(GemmType::kNormal, DType::kBFloat16, false),
                                     tile_config(hw, 64, 1, 16, 1024, 2), hw, &why));
  EXPECT_NE(why.find("not 128, 256 or 512"), std::string::npos) << why;
  EXPECT_FALSE(sm90_fp8_config_legal(fp8_desc(GemmType::kNormal, DType::kFloat32, false),
                                     tile_config(hw, 64, 1, 16, 512, 4), hw, &why));
  EXPECT_NE(why.find("block_k 512"), std::string::npos) << why;
}

// 2x1 clusters sharing B: both recipes, every scheduler that pairs m-blocks.
TEST_F(Sm90Fp8Codegen, TwoCtaClusterWithBMulticastCompiles) {
  const HardwareModel hw = hardware_preset("h200");
  for (GemmType type :
       {GemmType::kNormal, GemmType::kBatched, GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
    for (DType d : {DType::kBFloat16, DType::kFloat32}) {
      const GemmDesc desc = fp8_desc(type, d, false);
      GemmConfig c;
      c.block_m = 128, c.num_math_warpgroups = 2, c.block_n = 128, c.block_k = 128, c.stages = 4;
      c.cluster_m = 2, c.multicast = MulticastSide::kB, c.num_sms = hw.num_sms;
      std::string why;
      ASSERT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << to_string(desc) << ": " << why;
      const jit::KernelSpec spec = kernels::sm90_fp8_gemm_spec(desc, c);
      EXPECT_NE(spec.source.find("kClusterM = 2"), std::string::npos);
      expect_compiles(desc, c);
    }
  }
}

// Split-K and stream-K in both reduction modes, both recipes (1D1D also with C accumulated), batched: every
// variant compiles without spills; the tiles at the 192-register budget are refused deterministic stream-K.
TEST_F(Sm90Fp8Codegen, SplitKAndStreamKCompileWithoutSpills) {
  const HardwareModel hw = hardware_preset("h200");
  struct Shape {
    int block_m, wgs, block_n;
  };
  for (GemmScheme scheme : {GemmScheme::kSplitK, GemmScheme::kStreamK})
    for (bool deterministic : {false, true})
      for (DType d : {DType::kBFloat16, DType::kFloat32})
        for (Shape s : {Shape{64, 1, 128}, Shape{128, 2, 128}, Shape{256, 2, 128}, Shape{64, 1, 16}}) {
          GemmDesc desc = fp8_desc(GemmType::kNormal, d, d == DType::kFloat32);
          desc.m = 129, desc.n = 576, desc.k = 7168;
          desc.deterministic = deterministic;
          GemmConfig c;
          c.block_m = s.block_m, c.num_math_warpgroups = s.wgs, c.block_n = s.block_n, c.block_k = 128;
          c.stages = s.block_m == 256 ? 3 : 4, c.num_sms = hw.num_sms, c.raster_group = 1;
          c.scheme = scheme, c.split_k = scheme == GemmScheme::kSplitK ? 4 : 1;
          std::string why;
          if (!sm90_fp8_config_legal(desc, c, hw, &why)) {
            // 256x128 with fp32 D does not fit shared memory at all; with bf16 D only deterministic stream-K is
            // refused (the register budget).
            EXPECT_TRUE(s.block_m == 256 && (d == DType::kFloat32 || (scheme == GemmScheme::kStreamK && deterministic)))
                << why;
            continue;
          }
          const jit::KernelSpec spec = kernels::sm90_fp8_gemm_spec(desc, c);
          EXPECT_NE(spec.name.find(scheme == GemmScheme::kSplitK ? "_splitk" : "_streamk"), std::string::npos);
          EXPECT_EQ(spec.name.find("_det") != std::string::npos, deterministic);
          expect_compiles(desc, c);
        }
  GemmDesc batched = fp8_desc(GemmType::kBatched, DType::kBFloat16, false);
  GemmConfig c;
  c.block_m = 64, c.num_math_warpgroups = 1, c.block_n = 64, c.block_k = 128, c.stages = 4, c.num_sms = hw.num_sms;
  c.scheme = GemmScheme::kSplitK, c.split_k = 3;
  expect_compiles(batched, c);
  // Grouped problems are not cut.
  std::string why;
  EXPECT_FALSE(sm90_fp8_config_legal(fp8_desc(GemmType::kMGroupedMasked, DType::kBFloat16, false), c, hw, &why));
  EXPECT_NE(why.find("dense and batched"), std::string::npos) << why;
}

TEST(Sm90Fp8Legality, RejectsWhatTheKernelCannotRun) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = fp8_desc(GemmType::kNormal, DType::kBFloat16, false);
  auto rejected = [&](GemmConfig c, const GemmDesc& d, const std::string& needle) {
    c.num_sms = hw.num_sms;
    std::string why;
    EXPECT_FALSE(sm90_fp8_config_legal(d, c, hw, &why)) << needle;
    EXPECT_NE(why.find(needle), std::string::npos) << why;
  };
  GemmConfig base;
  base.block_m = 128, base.num_math_warpgroups = 2, base.block_n = 128, base.block_k = 128, base.stages = 4;
  GemmConfig c = base;
  c.block_k = 64;
  rejected(c, desc, "block_k 64");
  c = base, c.block_n = 176;  // 176 - 128 = 48 != gcd(176, 128) = 16: three scale blocks in one tile
  rejected(c, desc, "straddle");
  c = base, c.block_n = 256;  // 2 x 256 / 2 = 256 registers
  rejected(c, desc, "registers");
  c = base, c.stages = 40;
  rejected(c, desc, "stages 40");
  c = base, c.block_m = 64, c.num_math_warpgroups = 2;  // two consumer warpgroups own 64 or 128 rows each
  rejected(c, desc, "(block_m, math warpgroups) = (64, 2)");
  c = base, c.cluster_m = 1, c.cluster_n = 2;  // clusters pair m-blocks only
  rejected(c, desc, "cluster 1x2");
  GemmDesc psum = fp8_desc(GemmType::kMGroupedContiguous, DType::kBFloat16, false);
  psum.use_psum_layout = true;
  c = base, c.cluster_m = 2, c.multicast = MulticastSide::kB;
  rejected(c, psum, "prefix-sum");
  GemmDesc with_c = desc;
  with_c.with_c = true;
  rejected(base, with_c, "no C input");
  // 1D1D's per-token B scales may straddle any number of blocks.
  GemmConfig wide = base;
  wide.block_n = 176, wide.stages = 2, wide.num_sms = hw.num_sms;
  std::string why;
  EXPECT_TRUE(sm90_fp8_config_legal(fp8_desc(GemmType::kNormal, DType::kFloat32, false), wide, hw, &why)) << why;
}

TEST(Sm90Fp8Select, PicksLegalFp8ConfigsForTheDeepSeekShapes) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {64, 128, 4096})
    for (auto [n, k] :
         {std::pair{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}}) {
      GemmDesc desc = fp8_desc(GemmType::kNormal, DType::kBFloat16, false);
      desc.m = m, desc.n = n, desc.k = k;
      const GemmConfig c = select_config(desc, hw);
      std::string why;
      EXPECT_TRUE(sm90_fp8_config_legal(desc, c, hw, &why)) << to_string(desc) << ": " << why;
      // Several K blocks per stage for small M and long K (selector_offer.cpp): four on tiles at most 32 wide,
      // two on wider ones; one elsewhere.
      const int multi = c.block_n <= kSm90Fp8FourBlockStagesMaxBlockN ? 512 : 256;
      EXPECT_EQ(c.block_k, m <= 128 && k >= 4096 ? multi : 128) << to_string(desc);
    }
}

// M = 4096, 1D2D: the L2 power term ranks tiles by their traffic per FLOP as measured on the H200:
// 128x192 tiles beat 256x64 at N = 2112 (105-108 against 123-125 us), 256x128 stays elsewhere, and 2x1 clusters
// earn FP8 nothing (they measured no faster).
TEST(Sm90Fp8Select, M4096TilesFollowTheMeasuredPowerRanking) {
  const HardwareModel hw = hardware_preset("h200");
  for (auto [n, k] : {std::pair{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}}) {
    GemmDesc desc = fp8_desc(GemmType::kNormal, DType::kBFloat16, false);
    desc.m = 4096, desc.n = n, desc.k = k;
    const GemmConfig c = select_config(desc, hw);
    SCOPED_TRACE(to_string(desc));
    EXPECT_EQ(c.cluster_m * c.cluster_n, 1);
    EXPECT_EQ(c.num_math_warpgroups, 2);
    if (n == 2112) {
      EXPECT_EQ(c.block_m, 128);
      EXPECT_EQ(c.block_n, 192);
    } else {
      EXPECT_EQ(c.block_m, 256);
      EXPECT_EQ(c.block_n, 128);
    }
  }
}

// Per-row contiguous 1D2D problems may take 256-row tiles (two-pass when a tile straddles two groups); the
// prefix-sum layout, clusters and BF16 may not. The selector's cache must tell the two layouts apart: it once
// keyed on everything but use_psum_layout, and handed the per-row layout's 256-row choice to the psum layout.
TEST(Sm90Fp8Select, TwoPassContiguousTilesOnlyWithThePerRowLayout) {
  const HardwareModel hw = hardware_preset("h200");
  GemmDesc per_row = fp8_desc(GemmType::kMGroupedContiguous, DType::kBFloat16, false);
  per_row.m = 4 * 8192, per_row.n = 4096, per_row.k = 7168;
  GemmConfig c = select_config(per_row, hw);
  std::string why;
  EXPECT_TRUE(sm90_fp8_config_legal(per_row, c, hw, &why)) << why;
  EXPECT_EQ(c.block_m, 256) << "the large grouped shapes should take the dense kernel's best tile";

  GemmDesc psum = per_row;
  psum.use_psum_layout = true;
  EXPECT_FALSE(sm90_fp8_config_legal(psum, c, hw, &why));
  EXPECT_NE(why.find("two-pass tiles need the per-row index layout"), std::string::npos) << why;
  EXPECT_LE(select_config(psum, hw).block_m, 128) << "a cached per-row choice leaked into the psum layout";

  GemmConfig clustered = c;
  clustered.block_n = 128, clustered.cluster_m = 2, clustered.multicast = MulticastSide::kB;
  EXPECT_FALSE(sm90_fp8_config_legal(per_row, clustered, hw, &why));

  // Many small groups: about every other boundary costs a second pass (half the tiles again for groups of 256
  // rows on average), so 128-row tiles win; the cost model counts the expected extra tiles.
  GemmDesc many_groups = per_row;
  many_groups.num_groups = 128;
  EXPECT_LE(select_config(many_groups, hw).block_m, 128);

  GemmDesc one_d_one_d = per_row;  // fp32 D: the 1D1D recipe keeps 128-row contiguous tiles
  one_d_one_d.d_dtype = DType::kFloat32;
  EXPECT_FALSE(sm90_fp8_config_legal(one_d_one_d, c, hw, &why));
  EXPECT_NE(why.find("must not straddle"), std::string::npos) << why;
}

namespace {

// Every way of reading A's per-token scales (and 1D1D B's strided ones) compiles without spills on the selector's
// tiles of a large problem, both recipes, and on a 4-block stage.
TEST_F(Sm90Fp8Codegen, EveryScaleLayoutCompiles) {
  const HardwareModel hw = hardware_preset("h200");
  for (const ScaleLayout layout : {ScaleLayout::kMnMajor, ScaleLayout::kRowMajor, ScaleLayout::kStrided})
    for (const DType d : {DType::kBFloat16, DType::kFloat32}) {
      GemmDesc desc = fp8_desc(GemmType::kNormal, d, d == DType::kFloat32);
      desc.sfa_layout = layout;
      desc.sfb_strided = d == DType::kFloat32 && layout == ScaleLayout::kStrided;
      SCOPED_TRACE(fmt::format("layout {} d {}", static_cast<int>(layout), dtype_name(d)));
      GemmConfig big = select_config(desc, hw);
      expect_compiles(desc, big);
      EXPECT_EQ(big.smem_bytes, sm90_fp8_smem_bytes(desc, big));
      if (d == DType::kBFloat16) {
        const GemmConfig four = tile_config(hw, 64, 1, 16, 512, 5);
        std::string why;
        ASSERT_TRUE(sm90_fp8_config_legal(desc, four, hw, &why)) << why;
        expect_compiles(desc, four);
      }
    }
}

}  // namespace
