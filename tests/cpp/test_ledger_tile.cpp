// Tile-level ledger, waves, occupancy, the variant tree and the Ascend L1/L0 check.
#include <gtest/gtest.h>

#include "expect_invalid.hpp"

#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {
namespace {

ProblemShape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  ProblemShape s;
  s.m = m, s.n = n, s.k = k;
  return s;
}

TileShape tile(int bm, int bn, int bk, int stages = 1, int threads = 128, int split_k = 1) {
  TileShape t;
  t.block_m = bm, t.block_n = bn, t.block_k = bk, t.stages = stages, t.threads = threads, t.split_k = split_k;
  return t;
}

// Seed 000 §1.2–1.3: 4096³ fp16 with 128×128 tiles reads b·MNK(1/128 + 1/128) bytes; a 128×128×32 fp16
// stage is 16 KiB, 48 KiB at 3 stages; 128×128 fp32 accumulators over 128 threads are 128 registers each.
TEST(LedgerTile, Seed000TileNumbers) {
  const OperandDtypes fp16 = OperandDtypes::uniform(DType::kFloat16);
  const TileLedger t = tile_ledger(shape(4096, 4096, 4096), fp16, tile(128, 128, 32, 3), hardware_preset("h100-sxm"));
  const double mnk = 4096.0 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(t.ab_bytes, 2 * mnk * (2.0 / 128));
  EXPECT_DOUBLE_EQ(t.ab_bytes, t.naive_ab_bytes / 128);  // 128-wide tiles cut the naive A+B reads 128×
  EXPECT_DOUBLE_EQ(t.output_bytes, 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(t.dram_bytes, t.ab_bytes + t.output_bytes);
  EXPECT_DOUBLE_EQ(t.smem_per_stage, 16 * 1024);
  EXPECT_DOUBLE_EQ(t.smem_total, 48 * 1024);
  EXPECT_TRUE(t.smem_fits);
  EXPECT_EQ(t.accum_regs_per_thread, 128);
  EXPECT_EQ(accumulator_regs_per_thread(128, 128, 128), 128);
  EXPECT_EQ(accumulator_regs_per_thread(128, 256, 256), 128);
  EXPECT_TRUE(t.fits());
  EXPECT_EQ(t.why_not_fit(), "");
}

// `h200`, M=4096 N=7168 with 128×128 tiles: 1792 tiles, 14 waves on 132 SMs, last wave 76/132.
TEST(LedgerTile, H200WavesForDeepSeekShape) {
  const TileLedger t = tile_ledger(shape(4096, 7168, 16384), OperandDtypes::uniform(DType::kBFloat16),
                                   tile(128, 128, 64, 4), hardware_preset("h200"));
  EXPECT_EQ(t.tiles_m, 32);
  EXPECT_EQ(t.tiles_n, 56);
  EXPECT_EQ(t.tiles, 1792);
  EXPECT_EQ(t.waves.waves, 14);
  EXPECT_EQ(t.waves.last_wave_units, 76);
  EXPECT_EQ(t.waves.slots, 132);
  EXPECT_DOUBLE_EQ(t.waves.last_wave_utilisation, 76.0 / 132);
  EXPECT_DOUBLE_EQ(t.waves.efficiency, 1792.0 / (14 * 132));
}

TEST(LedgerTile, WaveStatsEdgeCases) {
  const WaveStats exact = wave_stats(264, 132);
  EXPECT_EQ(exact.waves, 2);
  EXPECT_EQ(exact.last_wave_units, 132);
  EXPECT_DOUBLE_EQ(exact.efficiency, 1.0);
  const WaveStats one = wave_stats(1, 132);
  EXPECT_EQ(one.waves, 1);
  EXPECT_EQ(one.last_wave_units, 1);
  EXPECT_THROW(wave_stats(10, 0), InvalidArgument);
}

TEST(LedgerTile, OccupancyFollowsRegistersSharedMemoryAndThreads) {
  const HardwareModel hw = hardware_preset("h100-sxm");
  // 160 regs × 32 lanes = 5120 per warp → 12 warps → 3 blocks of 4 warps.
  OccupancyEstimate o = blocks_per_sm(hw, 128, 160, 48 * 1024);
  EXPECT_EQ(o.by_registers, 3);
  EXPECT_EQ(o.by_smem, 4);  // 228 KiB / (48 KiB + 1 KiB reserved)
  EXPECT_EQ(o.by_threads, 16);
  EXPECT_EQ(o.blocks_per_sm, 3);
  EXPECT_EQ(o.limiter, "registers");
  // Registers round up to 8 per thread (256 per warp): 33 → 40.
  EXPECT_EQ(blocks_per_sm(hw, 128, 33, 0).regs_per_thread, 40);
  // 32 registers per thread is the 100%-occupancy point (seed 000 §1.3): threads become the limiter.
  o = blocks_per_sm(hw, 256, 32, 0);
  EXPECT_EQ(o.by_registers, 8);
  EXPECT_EQ(o.by_threads, 8);
  EXPECT_EQ(o.blocks_per_sm, 8);
  // A big pipeline leaves room for one block.
  o = blocks_per_sm(hw, 128, 64, 200 * 1024);
  EXPECT_EQ(o.by_smem, 1);
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_EQ(o.limiter, "shared memory");
  // Over the per-block opt-in limit: zero blocks.
  EXPECT_EQ(blocks_per_sm(hw, 128, 64, 240 * 1024).blocks_per_sm, 0);
}

TEST(LedgerTile, TilesThatCannotFitSayWhy) {
  const HardwareModel hw = hardware_preset("h100-sxm");
  const OperandDtypes bf16 = OperandDtypes::uniform(DType::kBFloat16);
  // 256×256×128 bf16 × 4 stages = 512 KiB of shared memory.
  TileLedger t = tile_ledger(shape(4096, 4096, 4096), bf16, tile(256, 256, 128, 4), hw);
  EXPECT_FALSE(t.smem_fits);
  EXPECT_FALSE(t.fits());
  EXPECT_NE(t.why_not_fit().find("exceeds the 232448 B per-block limit"), std::string::npos) << t.why_not_fit();
  // 256×256 accumulators over 128 threads = 512 registers per thread.
  t = tile_ledger(shape(4096, 4096, 4096), bf16, tile(256, 256, 32, 1, 128), hw);
  EXPECT_EQ(t.accum_regs_per_thread, 512);
  EXPECT_FALSE(t.regs_fit);
  EXPECT_NE(t.why_not_fit().find("512 fp32 accumulators"), std::string::npos) << t.why_not_fit();
}

TEST(LedgerTile, SplitKAddsPartialTrafficAndWorkUnits) {
  const HardwareModel hw = hardware_preset("h200");
  const OperandDtypes bf16 = OperandDtypes::uniform(DType::kBFloat16);
  const TileLedger one = tile_ledger(shape(64, 2112, 7168), bf16, tile(64, 128, 64), hw);
  const TileLedger four = tile_ledger(shape(64, 2112, 7168), bf16, tile(64, 128, 64, 1, 128, 4), hw);
  EXPECT_EQ(one.waves.work_units, 17);
  EXPECT_EQ(four.waves.work_units, 68);
  EXPECT_DOUBLE_EQ(one.splitk_extra_write_bytes, 0);
  EXPECT_DOUBLE_EQ(four.splitk_extra_write_bytes, 4.0 * 64 * 2112 * 4);
  EXPECT_DOUBLE_EQ(four.splitk_extra_read_bytes, four.splitk_extra_write_bytes);
  EXPECT_DOUBLE_EQ(four.dram_bytes - one.dram_bytes, 2 * four.splitk_extra_write_bytes);
}

using test_util::expect_invalid;

TEST(LedgerTile, BadTileArgumentsNameTheFlag) {
  const HardwareModel hw = hardware_preset("h200");
  const OperandDtypes bf16 = OperandDtypes::uniform(DType::kBFloat16);
  const ProblemShape s = shape(256, 256, 256);
  expect_invalid([&] { tile_ledger(s, bf16, tile(0, 128, 64), hw); }, "--block-m", "got 0");
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, -1, 64), hw); }, "--block-n", "got -1");
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, 128, 0), hw); }, "--block-k", "got 0");
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, 128, 64, 0), hw); }, "--stages", "got 0");
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, 128, 64, 1, 100), hw); }, "--threads", "multiple of 32");
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, 128, 64, 1, 128, 0), hw); }, "--split-k", "got 0");
  // K=256 with block_k=64 has 4 K steps: 5 slices cannot all have work.
  expect_invalid([&] { tile_ledger(s, bf16, tile(128, 128, 64, 1, 128, 5), hw); }, "--split-k", "at most");
}

TEST(LedgerVariant, DecisionTreeFollowsSeed000) {
  const HardwareModel hw = hardware_preset("h200");
  // Enough tiles, tail wave 76/132 → 3% idle → data-parallel.
  VariantDecision d = choose_variant(shape(4096, 7168, 16384), 128, 128, 64, hw);
  EXPECT_EQ(d.variant, Variant::kDataParallel);
  EXPECT_EQ(d.tiles, 1792);
  EXPECT_NE(d.reason.find("76/132"), std::string::npos) << d.reason;
  // 17 tiles on 132 SMs with 112 K steps → split K min(132/17, 112/4) = 7 ways.
  d = choose_variant(shape(64, 2112, 7168), 128, 128, 64, hw);
  EXPECT_EQ(d.variant, Variant::kSplitK);
  EXPECT_EQ(d.suggested_split_k, 7);
  EXPECT_NE(d.reason.find("17 tiles < 132 SMs"), std::string::npos) << d.reason;
  // Few tiles but K is short: nothing to split.
  d = choose_variant(shape(64, 2112, 256), 128, 128, 64, hw);
  EXPECT_EQ(d.variant, Variant::kDataParallel);
  EXPECT_EQ(d.suggested_split_k, 1);
  // 192 tiles = 2 waves with the second 60/132 → 27% idle → stream-K.
  d = choose_variant(shape(128, 24576, 1536), 128, 128, 64, hw);
  EXPECT_EQ(d.variant, Variant::kStreamK);
  EXPECT_EQ(d.waves.last_wave_units, 60);
  // Several problems: identical → batched, ragged → grouped.
  ProblemShape batched = shape(512, 512, 512);
  batched.batch = 8;
  EXPECT_EQ(choose_variant(batched, 128, 128, 64, hw).variant, Variant::kBatched);
  batched.grouped = true;
  EXPECT_EQ(choose_variant(batched, 128, 128, 64, hw).variant, Variant::kGrouped);
  EXPECT_EQ(variant_name(Variant::kStreamK), "stream-K");
  EXPECT_THROW(choose_variant(shape(0, 1, 1), 128, 128, 64, hw), InvalidArgument);
}

TEST(LedgerAscend, CatlassConstraintsOnAscend950) {
  const HardwareModel hw = hardware_preset("ascend-950dt");
  const OperandDtypes bf16 = OperandDtypes::uniform(DType::kBFloat16);
  // CATLASS's basic matmul tiling: L1 128×256×256, L0 k0 = 64.
  AscendTilingCheck c = ascend_tiling_check(bf16, 128, 256, 256, 64, 2, hw);
  EXPECT_DOUBLE_EQ(c.l1_bytes, (128.0 * 256 + 256.0 * 256) * 2 * 2);  // 384 KiB ≤ 512 KiB
  EXPECT_DOUBLE_EQ(c.l0a_bytes, 128.0 * 64 * 2 * 2);                  // 32 KiB ≤ 64 KiB
  EXPECT_DOUBLE_EQ(c.l0b_bytes, 64.0 * 256 * 2 * 2);                  // 64 KiB ≤ 64 KiB
  EXPECT_DOUBLE_EQ(c.l0c_bytes, 128.0 * 256 * 4);                     // 128 KiB ≤ 256 KiB
  EXPECT_TRUE(c.ok()) << c.why_not();
  // 256×256 fills the 950's 256 KiB L0C exactly (seed 004 §4.4); 256×512 does not fit.
  c = ascend_tiling_check(bf16, 256, 256, 64, 32, 2, hw);
  EXPECT_DOUBLE_EQ(c.l0c_bytes, 256.0 * 1024);
  EXPECT_TRUE(c.l0c_ok);
  c = ascend_tiling_check(bf16, 256, 512, 64, 16, 2, hw);
  EXPECT_FALSE(c.l0c_ok);
  EXPECT_NE(c.why_not().find("L0C needs 524288 B > 262144 B"), std::string::npos) << c.why_not();
  // k0 must divide k1.
  c = ascend_tiling_check(bf16, 128, 128, 256, 96, 2, hw);
  EXPECT_FALSE(c.k_ok);
  EXPECT_NE(c.why_not().find("k0=96 must divide k1=256"), std::string::npos);
  // On NVIDIA hardware the check does not apply.
  try {
    ascend_tiling_check(bf16, 128, 128, 64, 64, 2, hardware_preset("h200"), "--hw");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--hw");
    EXPECT_NE(std::string(e.what()).find("'h200'"), std::string::npos);
  }
}

}  // namespace
}  // namespace tilegemm
