// The SM90 BF16 legality rules and desc validation, checked against an independent restatement of the
// kernel's constraints (so a change to either side shows up here).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tilegemm/errors.hpp"
#include "tilegemm/heuristics.hpp"

using namespace tilegemm;

namespace {

GemmDesc bf16_desc(int m, int n, int k, Major a = Major::kKMajor, Major b = Major::kKMajor,
                   DType d = DType::kBFloat16) {
  GemmDesc desc;
  desc.m = m, desc.n = n, desc.k = k;
  desc.major_a = a, desc.major_b = b;
  desc.d_dtype = d;
  return desc;
}

GemmConfig base_config(int block_m, int block_n, int wgs, int stages, int num_sms = 132) {
  GemmConfig c;
  c.block_m = block_m, c.block_n = block_n, c.block_k = 64;
  c.num_math_warpgroups = wgs;
  c.stages = stages;
  c.num_sms = num_sms;
  c.swizzle_d_bytes = 0;
  return c;
}

// The kernel's rules restated from the issue, independently of sm90_bf16_legality.cpp.
bool expected_legal(const GemmDesc& d, const GemmConfig& c, const HardwareModel& hw) {
  const std::set<std::pair<int, int>> shapes = {{64, 1}, {128, 1}, {128, 2}, {256, 2}};
  if (!shapes.count({c.block_m, c.num_math_warpgroups})) return false;
  // One or two 64-wide K atoms per stage; two not for K-grouped problems nor with a cluster.
  if (c.block_k != 64 && c.block_k != 128) return false;
  if (c.block_k == 128 && (d.type == GemmType::kKGroupedContiguous || c.cluster_m * c.cluster_n > 1)) return false;
  if (c.block_n % 8 != 0 || c.block_n < 16 || c.block_n > 256) return false;
  if (c.block_n % 16 == 8 && !kSm90OddEighthBlockNSelected) return false;  // run, but not offered unasked
  if ((c.block_m / c.num_math_warpgroups) * c.block_n / 128 > 128) return false;
  if (d.major_a == Major::kMNMajor && c.block_m % 64 != 0) return false;
  if (d.major_b == Major::kMNMajor && c.block_n % 64 != 0) return false;
  const int d_bytes = d.d_dtype == DType::kFloat32 ? 4 : 2;
  const int smem = c.stages * (c.block_m + c.block_n) * c.block_k * 2 + c.block_m * c.block_n * d_bytes + 1024;
  if (smem > hw.smem_per_block_bytes) return false;
  if (c.stages < 2 || c.stages > 16) return false;
  if (d.type == GemmType::kMGroupedContiguous && c.block_m > 128) return false;
  if (d.type == GemmType::kKGroupedContiguous && d.d_dtype != DType::kFloat32) return false;
  if (c.cluster_m * c.cluster_n > 1) {
    // The kernel implements a 2x1 cluster sharing a K-major B tile of a dense, batched or M-grouped problem
    // (not the prefix-sum layout) with an even grid; dense and batched ones need an even m-block count.
    if (c.cluster_m != 2 || c.cluster_n != 1 || c.multicast != MulticastSide::kB) return false;
    if (d.type == GemmType::kKGroupedContiguous || d.use_psum_layout) return false;
    if (d.major_b != Major::kKMajor || c.block_n % 16 != 0) return false;  // halves of whole 8-row atoms
    const bool grouped = d.type == GemmType::kMGroupedContiguous || d.type == GemmType::kMGroupedMasked;
    if (c.num_sms % 2 != 0 || (!grouped && ((d.m + c.block_m - 1) / c.block_m) % 2 != 0)) return false;
  }
  return true;
}

void check_every_candidate(const GemmDesc& desc, const HardwareModel& hw) {
  const auto candidates = enumerate_candidates(desc, hw);
  ASSERT_FALSE(candidates.empty());
  int legal = 0;
  for (const Candidate& cand : candidates) {
    const GemmConfig& c = cand.config;
    SCOPED_TRACE(to_string(desc) + " | " + to_string(c));
    EXPECT_EQ(cand.legal, expected_legal(desc, c, hw));
    EXPECT_EQ(cand.legal, cand.reject_reason.empty()) << cand.reject_reason;
    EXPECT_EQ(c.num_threads(), 128 * (c.num_math_warpgroups + 1));
    EXPECT_EQ(c.smem_bytes, sm90_bf16_smem_bytes(desc, c));
    // Split-K variants carry their slice count (at least 2, never more than K blocks); the others cut nothing.
    const int k_blocks = (desc.k + c.block_k - 1) / c.block_k;
    if (c.scheme == GemmScheme::kSplitK) {
      EXPECT_GE(c.split_k, 2);
      EXPECT_LE(c.split_k, k_blocks);
    } else {
      EXPECT_EQ(c.split_k, 1);
    }
    EXPECT_EQ(c.num_sms, hw.num_sms);
    // more stages than K-blocks are never offered (but always at least 2)
    EXPECT_LE(c.stages, std::max(2, k_blocks));
    if (cand.legal) {
      ++legal;
      EXPECT_LE(c.smem_bytes, hw.smem_per_block_bytes);
      EXPECT_LE(cand.cost.acc_regs_per_thread, 128);
      EXPECT_GT(cand.cost.predicted_us, 0);
      EXPECT_GE(cand.cost.predicted_us, cand.cost.dram_floor_us);
      EXPECT_GE(cand.cost.predicted_us, cand.cost.compute_floor_us);
    }
  }
  EXPECT_GT(legal, 0);
}

}  // namespace

TEST(HeuristicsLegality, SmemFormulaMatchesTheKernelLayout) {
  const GemmDesc desc = bf16_desc(4096, 4096, 4096);
  EXPECT_EQ(sm90_bf16_smem_bytes(desc, base_config(128, 128, 2, 4)), 4 * 256 * 64 * 2 + 128 * 128 * 2 + 1024);
  const GemmDesc fp32_out = bf16_desc(4096, 4096, 4096, Major::kKMajor, Major::kKMajor, DType::kFloat32);
  EXPECT_EQ(sm90_bf16_smem_bytes(fp32_out, base_config(64, 112, 1, 6)), 6 * 176 * 64 * 2 + 64 * 112 * 4 + 1024);
}

TEST(HeuristicsLegality, EveryEnumeratedCandidateFollowsTheRules) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {64, 128, 4096})
    for (auto [n, k] : {std::pair{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}})
      check_every_candidate(bf16_desc(m, n, k), hw);
  check_every_candidate(bf16_desc(256, 1024, 64), hw);  // one K-block: stages stay at 2
  check_every_candidate(bf16_desc(512, 4096, 4096, Major::kMNMajor, Major::kMNMajor, DType::kFloat32), hw);
  check_every_candidate(bf16_desc(512, 4096, 4096, Major::kKMajor, Major::kMNMajor), hw);
  GemmDesc contiguous = bf16_desc(4 * 8192, 4096, 7168);
  contiguous.type = GemmType::kMGroupedContiguous, contiguous.num_groups = 4;
  check_every_candidate(contiguous, hw);
  GemmDesc masked = bf16_desc(4096, 7168, 2048);
  masked.type = GemmType::kMGroupedMasked, masked.num_groups = 8, masked.expected_m = 256;
  check_every_candidate(masked, hw);
  GemmDesc k_grouped = bf16_desc(4096, 4096, 4096, Major::kKMajor, Major::kKMajor, DType::kFloat32);
  k_grouped.type = GemmType::kKGroupedContiguous, k_grouped.num_groups = 4;
  check_every_candidate(k_grouped, hw);
}

TEST(HeuristicsLegality, BothBf16StageWidthsAreEnumerated) {
  const auto candidates = enumerate_candidates(bf16_desc(64, 2112, 7168), hardware_preset("h200"));
  std::set<int> legal_block_ks;
  for (const Candidate& cand : candidates)
    if (cand.legal) legal_block_ks.insert(cand.config.block_k);
  EXPECT_EQ(legal_block_ks, (std::set<int>{64, 128}));
}

TEST(HeuristicsLegality, RejectionsCarryTheirReason) {
  const HardwareModel hw = hardware_preset("h200");
  const GemmDesc desc = bf16_desc(4096, 4096, 4096);
  std::string why;
  EXPECT_TRUE(sm90_bf16_config_legal(desc, base_config(64, 256, 1, 4), hw, &why)) << why;   // 128 regs
  EXPECT_TRUE(sm90_bf16_config_legal(desc, base_config(128, 128, 1, 4), hw, &why)) << why;  // 128 regs
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(128, 144, 1, 4), hw, &why));        // 144 regs
  EXPECT_NE(why.find("accumulator registers"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(256, 128, 1, 4), hw, &why));
  EXPECT_NE(why.find("math warpgroups"), std::string::npos) << why;
  EXPECT_TRUE(sm90_bf16_config_legal(desc, base_config(128, 120, 2, 4), hw, &why)) << why;  // multiple of 8
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(128, 124, 2, 4), hw, &why));
  EXPECT_NE(why.find("multiple of 8"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(256, 128, 2, 8), hw, &why));
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(128, 128, 2, 1), hw, &why));
  EXPECT_NE(why.find("stages"), std::string::npos) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, base_config(128, 128, 2, 4, 200), hw, &why));
  EXPECT_NE(why.find("num_sms"), std::string::npos) << why;

  GemmConfig bad_k = base_config(128, 128, 2, 4);
  bad_k.block_k = 96;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, bad_k, hw, &why));
  EXPECT_NE(why.find("block_k 96"), std::string::npos) << why;
  GemmConfig wide_k = base_config(64, 16, 1, 8);
  wide_k.block_k = 128;
  EXPECT_TRUE(sm90_bf16_config_legal(desc, wide_k, hw, &why)) << why;
  EXPECT_EQ(sm90_bf16_smem_bytes(desc, wide_k), 8 * 80 * 128 * 2 + 64 * 16 * 2 + 1024);
  GemmConfig wide_k_cluster = base_config(128, 128, 2, 3);
  wide_k_cluster.block_k = 128, wide_k_cluster.cluster_m = 2, wide_k_cluster.multicast = MulticastSide::kB;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, wide_k_cluster, hw, &why));
  EXPECT_NE(why.find("multicast"), std::string::npos) << why;

  const GemmDesc nn = bf16_desc(4096, 4096, 4096, Major::kKMajor, Major::kMNMajor);
  EXPECT_FALSE(sm90_bf16_config_legal(nn, base_config(128, 80, 2, 4), hw, &why));
  EXPECT_NE(why.find("MN-major B"), std::string::npos) << why;
  const GemmDesc tn = bf16_desc(4096, 4096, 4096, Major::kMNMajor, Major::kKMajor);
  EXPECT_TRUE(sm90_bf16_config_legal(tn, base_config(64, 80, 1, 4), hw, &why)) << why;

  GemmConfig cluster = base_config(128, 128, 2, 4);
  cluster.cluster_m = 2, cluster.multicast = MulticastSide::kB;
  EXPECT_TRUE(sm90_bf16_config_legal(desc, cluster, hw, &why)) << why;
  GemmConfig odd_eighths = cluster;  // B multicast halves the tile into whole 8-row atoms
  odd_eighths.block_n = 120;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, odd_eighths, hw, &why));
  EXPECT_NE(why.find("block_n 120 is not a multiple of 16"), std::string::npos) << why;
  cluster.multicast = MulticastSide::kNone;  // a 2x1 cluster shares B
  EXPECT_FALSE(sm90_bf16_config_legal(desc, cluster, hw, &why));
  EXPECT_NE(why.find("cluster"), std::string::npos) << why;
  GemmConfig odd_pairs = base_config(128, 128, 2, 4);
  odd_pairs.cluster_m = 2, odd_pairs.multicast = MulticastSide::kB;
  EXPECT_FALSE(sm90_bf16_config_legal(bf16_desc(4096 - 128, 4096, 4096), odd_pairs, hw, &why));
  EXPECT_NE(why.find("even block count"), std::string::npos) << why;
  GemmConfig n_pairs = base_config(128, 128, 2, 4);  // clusters pair m-blocks only
  n_pairs.cluster_n = 2;
  EXPECT_FALSE(sm90_bf16_config_legal(desc, n_pairs, hw, &why));
  EXPECT_NE(why.find("cluster 1x2"), std::string::npos) << why;

  GemmDesc contiguous = bf16_desc(8192, 4096, 4096);
  contiguous.type = GemmType::kMGroupedContiguous, contiguous.num_groups = 4;
  EXPECT_FALSE(sm90_bf16_config_legal(contiguous, base_config(256, 128, 2, 3), hw, &why));
  EXPECT_NE(why.find("128 rows"), std::string::npos) << why;
  GemmDesc k_grouped = bf16_desc(4096, 4096, 4096);
  k_grouped.type = GemmType::kKGroupedContiguous, k_grouped.num_groups = 4;
  EXPECT_FALSE(sm90_bf16_config_legal(k_grouped, base_config(128, 128, 2, 4), hw, &why));  // bf16 D
  EXPECT_NE(why.find("fp32"), std::string::npos) << why;
  k_grouped.d_dtype = DType::kFloat32;
  EXPECT_TRUE(sm90_bf16_config_legal(k_grouped, base_config(128, 128, 2, 4), hw, &why)) << why;
  GemmConfig k_grouped_wide = base_config(128, 128, 2, 2);
  k_grouped_wide.block_k = 128;
  EXPECT_FALSE(sm90_bf16_config_legal(k_grouped, k_grouped_wide, hw, &why));
  EXPECT_NE(why.find("K-grouped"), std::string::npos) << why;
  // Batch-reduced (einsum bmk,bnk->mn): 64-wide K blocks, so none straddles two batches, and no cluster.
  GemmDesc reduced = bf16_desc(128, 384, 129 * 128);
  reduced.type = GemmType::kBatchReduced, reduced.num_groups = 129;
  EXPECT_TRUE(sm90_bf16_config_legal(reduced, base_config(128, 128, 2, 4), hw, &why)) << why;
  EXPECT_FALSE(sm90_bf16_config_legal(reduced, k_grouped_wide, hw, &why));
  EXPECT_NE(why.find("batch-reduced"), std::string::npos) << why;
}

namespace {
void expect_invalid(const GemmDesc& desc, const std::string& argument, const std::string& mentions) {
  try {
    validate_desc(desc);
    ADD_FAILURE() << "expected InvalidArgument for " << to_string(desc);
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(HeuristicsValidateDesc, AlignmentErrorsNameTheDimension) {
  EXPECT_NO_THROW(validate_desc(bf16_desc(64, 2112, 7168)));
  EXPECT_NO_THROW(validate_desc(bf16_desc(3, 8, 8)));  // M of K-major A needs no alignment
  expect_invalid(bf16_desc(64, 2112, 100), "k", "multiple of 8");
  expect_invalid(bf16_desc(100, 2112, 7168, Major::kMNMajor), "m", "MN-major A");
  expect_invalid(bf16_desc(64, 2100, 7168, Major::kKMajor, Major::kMNMajor), "n", "MN-major B");
  expect_invalid(bf16_desc(64, 2110, 7168), "n", "bf16 D");
  EXPECT_NO_THROW(validate_desc(bf16_desc(64, 2116, 7168, Major::kKMajor, Major::kKMajor, DType::kFloat32)));
  expect_invalid(bf16_desc(64, 2114, 7168, Major::kKMajor, Major::kKMajor, DType::kFloat32), "n", "multiple of 4");
  // both operands MN-major: K is no tensor's contiguous dimension
  EXPECT_NO_THROW(validate_desc(bf16_desc(64, 2112, 100, Major::kMNMajor, Major::kMNMajor)));
}

TEST(HeuristicsValidateDesc, SizesTypesAndGroups) {
  expect_invalid(bf16_desc(0, 2112, 7168), "m", "positive");
  expect_invalid(bf16_desc(64, -8, 7168), "n", "positive");
  GemmDesc fp8 = bf16_desc(64, 2112, 7168);
  fp8.a_dtype = DType::kFloat8E4M3;
  expect_invalid(fp8, "b_dtype", "(the dtype of A)");  // mixed bf16 x fp8 has no kernel
  fp8.b_dtype = DType::kFloat8E4M3;
  EXPECT_NO_THROW(validate_desc(fp8));
  fp8.major_b = Major::kMNMajor;
  expect_invalid(fp8, "major_b", "K-major");  // SM90 fp8 wgmma reads K-major only
  fp8.major_b = Major::kKMajor;
  fp8.k = 7000;  // 16-byte TMA rows of e4m3: K % 16
  expect_invalid(fp8, "k", "multiple of 16");
  GemmDesc reduced = bf16_desc(128, 384, 129 * 128);
  reduced.type = GemmType::kBatchReduced, reduced.num_groups = 129;
  EXPECT_NO_THROW(validate_desc(reduced));
  reduced.k = 129 * 96;  // each batch's K must be whole 64-wide blocks
  expect_invalid(reduced, "k", "multiple of 64");
  reduced.k = 129 * 128 + 64;  // not num_groups equal parts
  expect_invalid(reduced, "k", "num_groups=129");
  GemmDesc fp16 = bf16_desc(64, 2112, 7168);
  fp16.a_dtype = fp16.b_dtype = DType::kFloat16;
  expect_invalid(fp16, "a_dtype", "bf16, e4m3 or int8");
  GemmDesc mixed = bf16_desc(64, 2112, 7168);
  mixed.b_dtype = DType::kInt8;
  expect_invalid(mixed, "b_dtype", "the dtype of A");
  GemmDesc fp16_out = bf16_desc(64, 2112, 7168);
  fp16_out.d_dtype = DType::kFloat16;
  expect_invalid(fp16_out, "d_dtype", "bf16 or fp32");
  GemmDesc groups = bf16_desc(64, 2112, 7168);
  groups.num_groups = 2;
  expect_invalid(groups, "num_groups", "1 for a normal GEMM");
  GemmDesc contiguous = bf16_desc(1000, 4096, 7168);
  contiguous.type = GemmType::kMGroupedContiguous, contiguous.num_groups = 4;
  expect_invalid(contiguous, "m", "multiple of 128");
  GemmDesc masked = bf16_desc(256, 4096, 7168);
  masked.type = GemmType::kMGroupedMasked, masked.num_groups = 4, masked.expected_m = 300;
  expect_invalid(masked, "expected_m", "[1, m=256]");
  GemmDesc hint = bf16_desc(256, 4096, 7168);
  hint.expected_m = 64;
  expect_invalid(hint, "expected_m", "only masked");
}
