// tf32_hc_prenorm_gemm without a GPU: its kernels compile for sm_90a with no spills under the name DeepGEMM's tests
// profile, the split follows the model (one wave of CTAs, a split only where row blocks leave SMs idle), and every
// bad argument is named before any CUDA call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "expect_invalid.hpp"
#include "kernels/sm90_hc_prenorm.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/hc_prenorm.hpp"
#include "tilegemm/hw.hpp"

using namespace tilegemm;

namespace {

class HcPrenormCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(HcPrenormCodegen, KernelsCompileWithoutSpillsUnderDeepGemmsName) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {4096, 13}) {  // 64- and 16-row blocks
    for (int n : {8, 24, 32}) {
      const HcPrenormConfig c = select_hc_prenorm_config(m, n, 7168, std::nullopt, hw, hw.num_sms);
      // Unsummed, and summed in clusters of 1 to 8 CTAs.
      for (int cluster : {0, 1, 2, 4, 8}) {
        const jit::KernelSpec spec =
            kernels::sm90_hc_prenorm_spec(n, c.stages, cluster > 0, c.block_m, std::max(cluster, 1));
        SCOPED_TRACE(spec.name);
        // DeepGEMM's test times the kernel with bench_kineto(..., 'tf32_hc_prenorm_gemm').
        EXPECT_NE(spec.entry.find("tf32_hc_prenorm_gemm"), std::string::npos);
        tilegemm::testing::expect_kernel_compiles(spec);
      }
    }
  }
}

TEST(HcPrenormConfig, SplitFillsTheSmsOnlyWhereRowBlocksLeaveThemIdle) {
  const HardwareModel hw = hardware_preset("h200");
  const int sms = hw.num_sms;
  // 128 row blocks of 64 already fill 132 SMs: a split would add a second wave.
  const HcPrenormConfig big = select_hc_prenorm_config(8192, 24, 28672, std::nullopt, hw, sms);
  EXPECT_EQ(big.num_splits, 1);
  EXPECT_FALSE(big.reduce_in_kernel);
  EXPECT_EQ(big.grid, 128);
  // 64 row blocks: two K slices each fill the machine in one wave.
  const HcPrenormConfig half = select_hc_prenorm_config(4096, 24, 28672, std::nullopt, hw, sms);
  EXPECT_EQ(half.num_splits, 2);
  EXPECT_TRUE(half.reduce_in_kernel);
  // Decode-sized M: one row block, so the K split is what spreads the call over the SMs; never past one wave.
  for (int m : {1, 13, 137}) {
    for (int k : {7168, 7680, 28672}) {
      const HcPrenormConfig c = select_hc_prenorm_config(m, 24, k, std::nullopt, hw, sms);
      SCOPED_TRACE(format_hc_prenorm_config(c));
      EXPECT_GE(c.num_splits, 8);
      EXPECT_TRUE(c.reduce_in_kernel);
      EXPECT_LE(c.grid, sms);
      EXPECT_GE(c.predicted_us, c.floor_us);
    }
  }
  // Fewer SMs (deep_gemm.set_num_sms): the grid shrinks with them.
  EXPECT_LE(select_hc_prenorm_config(13, 24, 28672, std::nullopt, hw, 32).grid, 32);
  // The caller's split is kept as given, even past the K blocks (those CTAs write zeros).
  const HcPrenormConfig caller = select_hc_prenorm_config(137, 24, 7168, 16, hw, sms);
  EXPECT_EQ(caller.num_splits, 16);
  EXPECT_TRUE(caller.caller_splits);
  EXPECT_FALSE(caller.reduce_in_kernel);
  EXPECT_EQ(caller.grid, 3 * 16);
  EXPECT_EQ(select_hc_prenorm_config(64, 8, 128, 4, hw, sms).num_splits, 4);
  // The ledger's bytes: A once (bf16), B once (fp32), D and sqr_sum (fp32) once per slice.
  EXPECT_DOUBLE_EQ(big.bytes, 2.0 * 8192 * 28672 + 4.0 * 24 * 28672 + 4.0 * 8192 * 25);
  EXPECT_NEAR(big.floor_us, big.bytes / hw.hbm_bytes_per_s() * 1e6, 1e-9);
  EXPECT_NE(format_hc_prenorm_config(big).find("splits=1"), std::string::npos);
}

// The split sum costs the partial tiles' bytes (the row block's rows of A only), so one short row block affords many
// more splits than the 16 of 256 rows, which fill the SMs with fewer.
TEST(HcPrenormConfig, ShortRowBlocksAffordMoreSplits) {
  const HardwareModel hw = hardware_preset("h200");
  const HcPrenormConfig tiny = select_hc_prenorm_config(13, 24, 28672, std::nullopt, hw, hw.num_sms);
  const HcPrenormConfig full = select_hc_prenorm_config(256, 24, 28672, std::nullopt, hw, hw.num_sms);
  SCOPED_TRACE(format_hc_prenorm_config(tiny) + " / " + format_hc_prenorm_config(full));
  EXPECT_GE(tiny.num_splits, 16);
  EXPECT_GT(tiny.num_splits, 2 * full.num_splits);
}

// The model against the kernel times it was fitted to, within 10%: caller splits of 13x24x28672 on the H200 in
// 64-row blocks (bench/reports/layout-helpers-and-hc-tail/) and on the H100 in 16-row blocks
// (bench/reports/hc-small-m/), one split of 8192x24x28672 (H200), and the library's sums on the H100.
TEST(HcPrenormConfig, ModelMatchesTheMeasuredKernelTimes) {
  const HardwareModel hw = hardware_preset("h200");
  const struct {
    int m, k, block_m, splits;
    bool reduce;
    double us;
  } measured[] = {{13, 28672, 64, 1, false, 97.9}, {13, 28672, 64, 4, false, 27.5}, {13, 28672, 64, 8, false, 16.2},
                  {13, 28672, 64, 32, false, 8.2}, {13, 28672, 16, 1, false, 53.6}, {13, 28672, 16, 4, false, 15.7},
                  {13, 28672, 16, 8, false, 9.7},  {13, 28672, 16, 32, false, 6.0}, {8192, 28672, 64, 1, false, 124.4},
                  {13, 28672, 16, 56, true, 9.2},  {13, 7168, 16, 28, true, 6.7},   {137, 28672, 64, 28, true, 17.9}};
  for (const auto& r : measured) {
    SCOPED_TRACE(::testing::Message() << r.m << "x24x" << r.k << " block_m " << r.block_m << ", " << r.splits
                                      << (r.reduce ? " splits summed" : " caller splits"));
    EXPECT_NEAR(hc_prenorm_model_us(r.m, 24, r.k, r.block_m, r.splits, r.reduce, hw, hw.num_sms), r.us, 0.1 * r.us);
  }
}

// Library splits can be summed in clusters: a cluster holding all of a row block's splits needs no round trip
// through L2 (no workspace), which the model prices; a pinned cluster divides the splits, and the caller's splits are
// never clustered.
TEST(HcPrenormConfig, ClusterSumsSkipTheL2RoundTrip) {
  const HardwareModel hw = hardware_preset("h200");
  EXPECT_LT(hc_prenorm_model_us(13, 24, 7168, 16, 8, true, hw, hw.num_sms, 8),
            hc_prenorm_model_us(13, 24, 7168, 16, 8, true, hw, hw.num_sms, 1));
  EXPECT_LT(hc_prenorm_model_us(137, 24, 7168, 16, 16, true, hw, hw.num_sms, 8),
            hc_prenorm_model_us(137, 24, 7168, 16, 16, true, hw, hw.num_sms, 1));
  test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "cluster_m=8");
  for (int m : {13, 137}) {
    const HcPrenormConfig c = select_hc_prenorm_config(m, 24, 28672, std::nullopt, hw, hw.num_sms);
    SCOPED_TRACE(format_hc_prenorm_config(c));
    EXPECT_TRUE(c.reduce_in_kernel);
    EXPECT_EQ(c.cluster, 8);
    EXPECT_EQ(c.num_splits % 8, 0);
    EXPECT_NE(format_hc_prenorm_config(c).find("clusters of 8"), std::string::npos);
  }
  EXPECT_EQ(select_hc_prenorm_config(13, 24, 7168, 16, hw, hw.num_sms).cluster, 1);
}

// TILEGEMM_CONFIG_FILTER pins the row block, the library's split and its cluster (tests and probes), and names
// itself for a pin the kernel cannot run.
TEST(HcPrenormConfig, FilterPinsBlockSplitAndCluster) {
  const HardwareModel hw = hardware_preset("h200");
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "block_m=64,split_k=16,cluster_m=4");
    const HcPrenormConfig c = select_hc_prenorm_config(13, 24, 7168, std::nullopt, hw, hw.num_sms);
    EXPECT_EQ(c.block_m, 64);
    EXPECT_EQ(c.num_splits, 16);
    EXPECT_EQ(c.cluster, 4);
    EXPECT_TRUE(c.reduce_in_kernel);
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "split_k=6,cluster_m=1");
    const HcPrenormConfig c = select_hc_prenorm_config(13, 24, 7168, std::nullopt, hw, hw.num_sms);
    EXPECT_EQ(c.num_splits, 6);
    EXPECT_EQ(c.cluster, 1);
  }
  for (const char* bad : {"cluster_m=3", "split_k=6,cluster_m=4", "cluster_m=16", "block_m=32"}) {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", bad);
    test_util::expect_invalid([&] { select_hc_prenorm_config(13, 24, 7168, std::nullopt, hw, hw.num_sms); },
                              "TILEGEMM_CONFIG_FILTER", "tf32_hc_prenorm_gemm");
  }
}

// At small M a CTA takes 16 rows (its TMA boxes hold no rows past M, and a stage costs its box rows); past 256 rows
// always 64 (four times fewer reads of B). In between the choice is the model's, and the config reports it.
TEST(HcPrenormConfig, SmallMTakesSixteenRowBlocks) {
  const HardwareModel hw = hardware_preset("h200");
  for (int m : {1, 13, 16, 17, 137, 1024, 4096, 8192}) {
    const HcPrenormConfig c = select_hc_prenorm_config(m, 24, 7168, std::nullopt, hw, hw.num_sms);
    SCOPED_TRACE(format_hc_prenorm_config(c));
    if (m <= 16) EXPECT_EQ(c.block_m, 16);
    if (m > 256) EXPECT_EQ(c.block_m, 64);
    EXPECT_EQ(c.grid, (m + c.block_m - 1) / c.block_m * c.num_splits);
    EXPECT_LE(c.smem_bytes, hw.smem_per_block_bytes);
    EXPECT_NEAR(
        c.predicted_us,
        hc_prenorm_model_us(m, 24, 7168, c.block_m, c.num_splits, c.reduce_in_kernel, hw, hw.num_sms, c.cluster), 1e-9);
  }
}

TEST(HcPrenormConfig, RejectsShapesTheKernelDoesNotTake) {
  const HardwareModel hw = hardware_preset("h200");
  test_util::expect_invalid([&] { select_hc_prenorm_config(64, 12, 1024, std::nullopt, hw, 132); }, "n");
  test_util::expect_invalid([&] { select_hc_prenorm_config(64, 40, 1024, std::nullopt, hw, 132); }, "n");
  test_util::expect_invalid([&] { select_hc_prenorm_config(64, 24, 0, std::nullopt, hw, 132); }, "k");
  test_util::expect_invalid([&] { select_hc_prenorm_config(64, 24, 1024, 0, hw, 132); }, "num_splits");
}

// Host buffers stand in for device tensors: every check runs before any CUDA call.
struct Tensors {
  std::vector<float> a_store = std::vector<float>(64 * 1024), b_store = std::vector<float>(32 * 1024),
                     d_store = std::vector<float>(16 * 64 * 32), s_store = std::vector<float>(16 * 64);
  TensorView a = TensorView::matrix(a_store.data(), DType::kBFloat16, 64, 1024, 1024);
  TensorView b = TensorView::matrix(b_store.data(), DType::kFloat32, 24, 1024, 1024);
  TensorView d = TensorView::matrix(d_store.data(), DType::kFloat32, 64, 24, 24);
  TensorView s = vector(s_store.data(), 64);
  static TensorView vector(float* p, std::int64_t n) {
    TensorView v;
    v.data = p, v.dtype = DType::kFloat32, v.ndim = 1, v.shape[0] = n, v.strides[0] = 1;
    return v;
  }
};

// deep_gemm.precompile's kernels for an M range are, for each M, the kernel the call's own path JITs: the config
// select_hc_prenorm_config picks with the call's SM count and launch_sm90_hc_prenorm's spec of it.
TEST(HcPrenormConfig, PrecompileSpecsAreTheCallPathsKernels) {
  const HardwareModel hw = hardware_preset("h200");
  const std::vector<int> ms = {0, 1, 64, 1000, 4096, 65536, 262144};
  for (const int num_sms : {0, 40, 100000}) {
    const int used = num_sms > 0 && num_sms < hw.num_sms ? num_sms : hw.num_sms;
    for (const int n : {8, 32}) {
      for (const std::optional<int> splits : {std::optional<int>{}, std::optional<int>{4}}) {
        const std::vector<jit::KernelSpec> specs = hc_prenorm_kernel_specs(ms, n, 7168, splits, hw, num_sms);
        std::set<std::string> names;
        bool reduce = false, plain = false;
        for (const int m : ms) {
          if (m == 0) continue;
          const HcPrenormConfig config = select_hc_prenorm_config(m, n, 7168, splits, hw, used);
          const jit::KernelSpec call = kernels::sm90_hc_prenorm_spec(config);
          SCOPED_TRACE(call.name);
          names.insert(call.name);
          (config.reduce_in_kernel ? reduce : plain) = true;
          int found = 0;
          for (const auto& spec : specs)
            found += spec.name == call.name && spec.source == call.source && spec.entry == call.entry;
          EXPECT_EQ(found, 1);
        }
        EXPECT_EQ(specs.size(), names.size());
        EXPECT_TRUE(plain);
        EXPECT_EQ(reduce, !splits.has_value());  // the library's split for small M only; the caller's never sums
      }
    }
  }
  test_util::expect_invalid([&] { hc_prenorm_kernel_specs({-1}, 8, 128, std::nullopt, hw, 0); }, "m", ">= 0");
  test_util::expect_invalid([&] { hc_prenorm_kernel_specs({1}, 12, 128, std::nullopt, hw, 0); }, "n",
                            "8, 16, 24 or 32");
  test_util::expect_invalid([&] { hc_prenorm_kernel_specs({1}, 8, 0, std::nullopt, hw, 0); }, "k", "> 0");
  test_util::expect_invalid([&] { hc_prenorm_kernel_specs({1}, 8, 128, 0, hw, 0); }, "num_splits", ">= 1");
  EXPECT_TRUE(hc_prenorm_kernel_specs({0}, 8, 128, std::nullopt, hw, 0).empty());
}

TEST(HcPrenormValidation, EveryBadArgumentIsNamed) {
  using test_util::expect_invalid;
  const auto call = [](const Tensors& t, std::optional<int> splits = std::nullopt) {
    tf32_hc_prenorm_gemm(t.a, t.b, t.d, t.s, splits);
  };
  {
    Tensors t;
    t.a.dtype = DType::kFloat32;
    expect_invalid([&] { call(t); }, "a");
  }
  {
    Tensors t;
    t.b.dtype = DType::kBFloat16;
    expect_invalid([&] { call(t); }, "b");
  }
  {
    Tensors t;  // K differs
    t.b.shape[1] = 512;
    expect_invalid([&] { call(t); }, "b", "K as a's");
  }
  {
    Tensors t;  // N = 20
    t.b.shape[0] = 20;
    expect_invalid([&] { call(t); }, "b", "8, 16, 24 or 32");
  }
  {
    Tensors t;  // D [64, 16] for N = 24
    t.d.shape[1] = 16;
    expect_invalid([&] { call(t); }, "d", "[64, 24]");
  }
  {
    Tensors t;  // D transposed
    t.d.strides = {1, 64, 0, 0};
    expect_invalid([&] { call(t); }, "d", "N contiguous");
  }
  {
    Tensors t;  // sqr_sum strided
    t.s.strides[0] = 2;
    expect_invalid([&] { call(t); }, "sqr_sum", "contiguous");
  }
  {
    Tensors t;  // with num_splits, D must be [S, M, N]
    expect_invalid([&] { call(t, 4); }, "d");
  }
  {
    Tensors t;
    expect_invalid([&] { call(t, 0); }, "num_splits");
  }
  {
    Tensors t;  // B's rows 4 bytes out of TMA's 16-byte alignment
    t.b.data = t.b_store.data() + 1;
    expect_invalid([&] { call(t); }, "b", "16-byte");
  }
  {
    Tensors t;  // A with K strided
    t.a.strides = {2048, 2, 0, 0};
    expect_invalid([&] { call(t); }, "a", "K-major");
  }
}

TEST(HcPrenormValidation, EmptyMIsANoOpWithoutTheGpu) {
  Tensors t;
  t.a.shape[0] = 0, t.d.shape[0] = 0, t.s.shape[0] = 0;
  EXPECT_NO_THROW(tf32_hc_prenorm_gemm(t.a, t.b, t.d, t.s, std::nullopt));
}

}  // namespace
