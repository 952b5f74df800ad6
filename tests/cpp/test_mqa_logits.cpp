// fp8_mqa_logits without a GPU: every kernel variant compiles for sm_90a with no spills under the names DeepGEMM's test
// profiles, the rings fit shared memory, the allocation helper gives DeepGEMM's logits layout, and every bad argument
// is named before any CUDA call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "expect_invalid.hpp"
#include "kernels/sm90_mqa_logits.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/mqa_logits.hpp"
#include "tilegemm/mqa_logits_params.hpp"

using namespace tilegemm;

namespace {

class MqaLogitsCodegen : public tilegemm::testing::JitEnvFixture {};

// H 32/64 × D 32/64/128 × fp32/bf16 logits × compressed or not, each with the rings the heuristics pick on an H200:
// compiled through NVRTC with ptxas's report checked (spills, local memory, serialised wgmma fail the compile).
TEST_F(MqaLogitsCodegen, EveryVariantCompilesWithoutSpillsUnderDeepGemmsName) {
  set("DG_JIT_PTXAS_CHECK", "1");
  const HardwareModel hw = hardware_preset("h200");
  for (int heads : {32, 64})
    for (int head_dim : {32, 64, 128})
      for (DType dtype : {DType::kFloat32, DType::kBFloat16})
        for (bool compressed : {false, true}) {
          const MqaLogitsConfig c = select_mqa_logits_config(4096, 16384, heads, head_dim, compressed ? 4096 : 0, dtype,
                                                             !compressed, hw, hw.num_sms);
          const jit::KernelSpec spec = kernels::sm90_fp8_mqa_logits_spec(
              heads, head_dim, compressed, dtype == DType::kBFloat16, c.q_stages, c.kv_stages);
          SCOPED_TRACE(spec.name);
          // DeepGEMM's test times the kernels with bench_kineto(..., ('mqa_logits', 'clean_logits')).
          EXPECT_NE(spec.entry.find("mqa_logits"), std::string::npos);
          EXPECT_EQ(spec.entry.find("clean_logits"), std::string::npos);
          EXPECT_EQ(spec.entry.find("paged"), std::string::npos);
          tilegemm::testing::expect_kernel_compiles(spec);
        }
  for (bool bf16 : {false, true}) {
    const jit::KernelSpec spec = kernels::sm90_clean_logits_spec(bf16);
    SCOPED_TRACE(spec.name);
    EXPECT_NE(spec.entry.find("clean_logits"), std::string::npos);
    EXPECT_EQ(spec.entry.find("mqa_logits"), std::string::npos);
    tilegemm::testing::expect_kernel_compiles(spec, 500);
  }
}

// NVCC's front end allocates registers differently from NVRTC's (an earlier form of the kernel spilled under NVCC
// only, at H = 32, D = 32: 32 weights, 64 accumulators and 8 sums per consumer thread in 112 registers). The variants
// closest to the budget, and the DeepSeek one, through DG_JIT_USE_NVRTC=0.
TEST_F(MqaLogitsCodegen, TightestVariantsCompileWithoutSpillsUnderNvcc) {
  set("DG_JIT_PTXAS_CHECK", "1");
  set("DG_JIT_USE_NVRTC", "0");
  struct Variant {
    int heads, head_dim;
    bool compressed, bf16;
    int kv_stages;
  };
  for (const Variant v :
       {Variant{32, 32, false, false, 8}, Variant{32, 32, true, false, 8}, Variant{32, 32, false, true, 8},
        Variant{32, 32, true, true, 8}, Variant{64, 128, false, false, 5}}) {
    const jit::KernelSpec spec =
        kernels::sm90_fp8_mqa_logits_spec(v.heads, v.head_dim, v.compressed, v.bf16, 3, v.kv_stages);
    SCOPED_TRACE(spec.name);
    EXPECT_NO_THROW(jit::get_kernel(spec));
  }
}

TEST_F(MqaLogitsCodegen, VariantsHaveDistinctNames) {
  std::vector<std::string> names;
  for (int heads : {32, 64})
    for (int head_dim : {32, 64, 128})
      for (bool bf16 : {false, true})
        for (bool compressed : {false, true})
          names.push_back(kernels::sm90_fp8_mqa_logits_spec(heads, head_dim, compressed, bf16, 3, 5).name);
  names.push_back(kernels::sm90_clean_logits_spec(false).name);
  names.push_back(kernels::sm90_clean_logits_spec(true).name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(kernels::sm90_fp8_mqa_logits_spec(64, 128, true, true, 3, 5).name,
            "sm90_fp8_mqa_logits_h64_d128_bf16_compressed_q3_kv5");
}

TEST(MqaLogitsConfig, RingsFitSharedMemoryAndTheGridTheQBlocks) {
  for (const char* preset : {"h100-sxm", "h200", "h800", "h20"}) {
    const HardwareModel hw = hardware_preset(preset);
    for (int heads : {32, 64})
      for (int head_dim : {32, 64, 128}) {
        const MqaLogitsConfig c =
            select_mqa_logits_config(8192, 65536, heads, head_dim, 0, DType::kFloat32, true, hw, hw.num_sms);
        SCOPED_TRACE(format_mqa_logits_config(c));
        EXPECT_EQ(c.block_q * heads, mqa_logits::kBlockQH);
        EXPECT_EQ(c.block_kv, 256);
        EXPECT_EQ(c.q_stages, 3);
        EXPECT_GE(c.kv_stages, 2);
        EXPECT_LE(c.kv_stages, 8);
        EXPECT_LE(c.smem_bytes, hw.smem_per_block_bytes);
        EXPECT_EQ(c.smem_bytes, mqa_logits::smem_plan(head_dim, c.q_stages, c.kv_stages).total);
        // The deepest ring that fits: one more KV stage would not.
        if (c.kv_stages < 8)
          EXPECT_GT(mqa_logits::smem_plan(head_dim, c.q_stages, c.kv_stages + 1).total, hw.smem_per_block_bytes);
        EXPECT_EQ(c.grid, hw.num_sms);  // 8192 / block_q q blocks: more than the SMs
        EXPECT_GT(c.clean_grid, 0);
        EXPECT_LE(c.clean_grid, hw.num_sms * hw.max_threads_per_sm / mqa_logits::kCleanThreads);
      }
  }
  const HardwareModel hw = hardware_preset("h200");
  // D = 128 on 227 KB: three Q stages of 16.5 KB and five KV stages of 33 KB.
  EXPECT_EQ(select_mqa_logits_config(4096, 4096, 64, 128, 0, DType::kFloat32, true, hw, hw.num_sms).kv_stages, 5);
  // Few q blocks: one CTA each; fewer SMs (deep_gemm.set_num_sms): the grid shrinks with them.
  EXPECT_EQ(select_mqa_logits_config(7, 4096, 64, 128, 0, DType::kFloat32, true, hw, hw.num_sms).grid, 4);
  EXPECT_EQ(select_mqa_logits_config(7, 4096, 32, 128, 0, DType::kFloat32, true, hw, hw.num_sms).grid, 2);
  EXPECT_EQ(select_mqa_logits_config(4096, 4096, 64, 64, 0, DType::kFloat32, true, hw, 32).grid, 32);
  EXPECT_EQ(select_mqa_logits_config(100, 4096, 64, 64, 0, DType::kFloat32, true, hw, 32).clean_grid, 13);
  // Compressed: no clean kernel.
  const MqaLogitsConfig compressed =
      select_mqa_logits_config(4096, 4096, 64, 64, 1000, DType::kBFloat16, false, hw, hw.num_sms);
  EXPECT_EQ(compressed.clean_grid, 0);
  const std::string line = format_mqa_logits_config(compressed);
  for (const char* part : {"h=64", "d=64", "logits=bf16", "compressed=1000", "block_q=2", "block_kv=256", "q_stages=3"})
    EXPECT_NE(line.find(part), std::string::npos) << line;
  EXPECT_EQ(line.find("clean_logits"), std::string::npos) << line;
}

TEST(MqaLogitsConfig, RejectsWhatTheKernelsDoNotTake) {
  const HardwareModel hw = hardware_preset("h200");
  using test_util::expect_invalid;
  const auto select = [&](int heads, int head_dim, int max_seqlen_k, DType dtype, bool clean) {
    select_mqa_logits_config(256, 1024, heads, head_dim, max_seqlen_k, dtype, clean, hw, hw.num_sms);
  };
  expect_invalid([&] { select(16, 128, 0, DType::kFloat32, true); }, "num_heads");
  expect_invalid([&] { select(128, 128, 0, DType::kFloat32, true); }, "num_heads");
  expect_invalid([&] { select(64, 96, 0, DType::kFloat32, true); }, "head_dim");
  expect_invalid([&] { select(64, 128, -1, DType::kFloat32, false); }, "max_seqlen_k");
  expect_invalid([&] { select(64, 128, 0, DType::kFloat16, true); }, "logits");
  expect_invalid([&] { select(64, 128, 512, DType::kFloat32, true); }, "clean_logits");
  expect_invalid([&] { select_mqa_logits_config(-1, 1024, 64, 128, 0, DType::kFloat32, true, hw, hw.num_sms); },
                 "seq_len");
  HardwareModel tiny = hw;
  tiny.smem_per_block_bytes = 64 * 1024;
  expect_invalid([&] { select_mqa_logits_config(256, 1024, 64, 128, 0, DType::kFloat32, true, tiny, tiny.num_sms); },
                 "hw");
}

// DeepGEMM's fp8_fp4_mqa_logits allocation: rows rounded up to block_q, the row stride 1024-byte aligned, seq_len_kv +
// block_kv wide (full rows) or max_seqlen_k rounded up to block_kv (compressed).
TEST(MqaLogitsLayout, MatchesDeepGemmsAllocation) {
  const auto align = [](std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; };
  for (int heads : {32, 64})
    for (DType dtype : {DType::kFloat32, DType::kBFloat16})
      for (std::int64_t seq_len : {1, 63, 2048, 8191})
        for (std::int64_t seq_len_kv : {1, 1000, 8192, 65536})
          for (int max_seqlen_k : {0, 1, 300, 8192}) {
            const MqaLogitsLayout l = mqa_logits_layout(seq_len, seq_len_kv, heads, max_seqlen_k, dtype);
            const std::int64_t block_q = 128 / heads, align_elems = dtype == DType::kFloat32 ? 256 : 512;
            EXPECT_EQ(l.rows, align(seq_len, block_q));
            if (max_seqlen_k == 0) {
              EXPECT_EQ(l.row_stride, align(seq_len_kv + 256, align_elems));
              EXPECT_EQ(l.cols, seq_len_kv);
            } else {
              EXPECT_EQ(l.row_stride, align(align(max_seqlen_k, 256), align_elems));
              EXPECT_EQ(l.cols, max_seqlen_k);
            }
            EXPECT_GE(l.row_stride, l.cols);
          }
  // Worked examples: fp32 [2048, 8192] → stride 8448; bf16 → 8704; compressed 300 → 512 (fp32), 512 (bf16).
  EXPECT_EQ(mqa_logits_layout(2048, 8192, 64, 0, DType::kFloat32).row_stride, 8448);
  EXPECT_EQ(mqa_logits_layout(2048, 8192, 64, 0, DType::kBFloat16).row_stride, 8704);
  EXPECT_EQ(mqa_logits_layout(2047, 8192, 32, 300, DType::kFloat32).row_stride, 512);
  EXPECT_EQ(mqa_logits_layout(2047, 8192, 32, 300, DType::kFloat32).rows, 2048);
  EXPECT_EQ(mqa_logits_layout(0, 0, 64, 0, DType::kFloat32).rows, 0);
  using test_util::expect_invalid;
  expect_invalid([] { mqa_logits_layout(-1, 10, 64, 0, DType::kFloat32); }, "seq_len");
  expect_invalid([] { mqa_logits_layout(10, -1, 64, 0, DType::kFloat32); }, "seq_len_kv");
  expect_invalid([] { mqa_logits_layout(10, 10, 48, 0, DType::kFloat32); }, "num_heads");
  expect_invalid([] { mqa_logits_layout(10, 10, 64, -5, DType::kFloat32); }, "max_seqlen_k");
  expect_invalid([] { mqa_logits_layout(10, 10, 64, 0, DType::kFloat8E4M3); }, "logits_dtype");
}

// Host buffers stand in for device tensors: every check runs before any CUDA call. A valid call here would reach the
// device context (and throw RuntimeError without a GPU), so each case breaks exactly one thing.
struct MqaTensors {
  static constexpr std::int64_t kSeq = 64, kSeqKv = 512, kHeads = 64, kDim = 128;
  // Over-allocated so that strided and shifted views stay inside; 16-byte aligned (vector of uint4).
  std::vector<std::uint64_t> q_store = std::vector<std::uint64_t>(2 * kSeq * kHeads * kDim / 8 + 16),
                             kv_store = std::vector<std::uint64_t>(2 * kSeqKv * kDim / 8 + 16),
                             scale_store = std::vector<std::uint64_t>(kSeqKv + 16),
                             weight_store = std::vector<std::uint64_t>(2 * kSeq * kHeads + 16),
                             ks_store = std::vector<std::uint64_t>(kSeq + 16),
                             ke_store = std::vector<std::uint64_t>(kSeq + 16),
                             logits_store = std::vector<std::uint64_t>(kSeq * (kSeqKv + 256) + 16);
  TensorView q = tensor3(q_store.data(), DType::kFloat8E4M3, kSeq, kHeads, kDim);
  TensorView kv = TensorView::matrix(kv_store.data(), DType::kFloat8E4M3, kSeqKv, kDim, kDim);
  TensorView scales = vector(scale_store.data(), DType::kFloat32, kSeqKv);
  TensorView weights = TensorView::matrix(weight_store.data(), DType::kFloat32, kSeq, kHeads, kHeads);
  TensorView ks = vector(ks_store.data(), DType::kInt32, kSeq);
  TensorView ke = vector(ke_store.data(), DType::kInt32, kSeq);
  TensorView logits = TensorView::matrix(logits_store.data(), DType::kFloat32, kSeq, kSeqKv, kSeqKv + 256);

  static TensorView vector(void* p, DType dtype, std::int64_t n) {
    TensorView v;
    v.data = p, v.dtype = dtype, v.ndim = 1, v.shape[0] = n, v.strides[0] = 1;
    return v;
  }
  static TensorView tensor3(void* p, DType dtype, std::int64_t a, std::int64_t b, std::int64_t c) {
    TensorView v;
    v.data = p, v.dtype = dtype, v.ndim = 3;
    v.shape = {a, b, c, 0};
    v.strides = {b * c, c, 1, 0};
    return v;
  }
  void call(bool clean = true, int max_seqlen_k = 0) const {
    fp8_mqa_logits(q, kv, scales, weights, ks, ke, logits, clean, max_seqlen_k);
  }
};

TEST(MqaLogitsValidation, EveryBadArgumentIsNamed) {
  using test_util::expect_invalid;
  const auto bad = [](auto&& edit, const std::string& argument, const std::string& fragment, bool clean = true,
                      int max_seqlen_k = 0) {
    MqaTensors t;
    edit(t);
    SCOPED_TRACE(argument + ": " + fragment);
    expect_invalid([&] { t.call(clean, max_seqlen_k); }, argument, fragment);
  };
  // q: dtype, rank, heads, head dim, layout, alignment.
  bad([](MqaTensors& t) { t.q.dtype = DType::kBFloat16; }, "q", "fp8");
  bad([](MqaTensors& t) { t.q = TensorView::matrix(t.q.data, DType::kFloat8E4M3, 64, 128, 128); }, "q", "3-D");
  bad([](MqaTensors& t) { t.q.shape[1] = 16, t.q.strides[0] = 16 * 128; }, "q", "32 or 64 heads");
  bad([](MqaTensors& t) { t.q.shape[2] = 96, t.q.strides = {64 * 96, 96, 1, 0}; }, "q", "32, 64 or 128");
  bad([](MqaTensors& t) { t.q.strides = {2 * 64 * 128, 128, 1, 0}; }, "q", "contiguous");
  bad([](MqaTensors& t) { t.q.strides = {64 * 128, 1, 64, 0}; }, "q", "contiguous");
  bad([](MqaTensors& t) { t.q.data = reinterpret_cast<char*>(t.q.data) + 8; }, "q", "16-byte");
  bad([](MqaTensors& t) { t.q.data = nullptr; }, "q", "device pointer");
  // kv and its scales.
  bad([](MqaTensors& t) { t.kv.dtype = DType::kFloat8E5M2; }, "kv", "fp8");
  bad([](MqaTensors& t) { t.kv.shape[1] = 64, t.kv.strides[0] = 64; }, "kv", "D as q's");
  bad([](MqaTensors& t) { t.kv.strides[0] = 256; }, "kv", "contiguous");
  bad([](MqaTensors& t) { t.kv.data = reinterpret_cast<char*>(t.kv.data) + 4; }, "kv", "16-byte");
  bad([](MqaTensors& t) { t.scales.dtype = DType::kBFloat16; }, "kv_scales", "fp32");
  bad([](MqaTensors& t) { t.scales.shape[0] = 511; }, "kv_scales", "[512]");
  bad([](MqaTensors& t) { t.scales.strides[0] = 2; }, "kv_scales", "contiguous");
  bad([](MqaTensors& t) { t.scales.data = reinterpret_cast<char*>(t.scales.data) + 4; }, "kv_scales", "16-byte");
  // weights.
  bad([](MqaTensors& t) { t.weights.dtype = DType::kBFloat16; }, "weights", "fp32");
  bad([](MqaTensors& t) { t.weights.shape[1] = 32; }, "weights", "[64, 64]");
  bad([](MqaTensors& t) { t.weights.shape[0] = 63; }, "weights", "[64, 64]");
  bad([](MqaTensors& t) { t.weights.strides = {1, 64, 0, 0}; }, "weights", "H contiguous");
  bad([](MqaTensors& t) { t.weights.strides[0] = -64; }, "weights", "row stride >= 0");
  // cu_seq_len_k_start / _end.
  bad([](MqaTensors& t) { t.ks.dtype = DType::kFloat32; }, "cu_seq_len_k_start", "int32");
  bad([](MqaTensors& t) { t.ks.shape[0] = 65; }, "cu_seq_len_k_start", "[64]");
  bad([](MqaTensors& t) { t.ks.strides[0] = 2; }, "cu_seq_len_k_start", "contiguous");
  bad([](MqaTensors& t) { t.ke.dtype = DType::kInt8; }, "cu_seq_len_k_end", "int32");
  bad([](MqaTensors& t) { t.ke.shape[0] = 32; }, "cu_seq_len_k_end", "[64]");
  bad([](MqaTensors& t) { t.ke.ndim = 2, t.ke.shape[1] = 1, t.ke.strides[1] = 1; }, "cu_seq_len_k_end", "1-D");
  // logits and the mode.
  bad([](MqaTensors& t) { t.logits.dtype = DType::kFloat16; }, "logits", "fp32 or bf16");
  bad([](MqaTensors& t) { t.logits.shape[1] = 511; }, "logits", "[64, 512] (seq_len, seq_len_kv)");
  bad([](MqaTensors& t) { t.logits.shape[0] = 65; }, "logits", "[64, 512]");
  bad([](MqaTensors& t) { t.logits.strides = {1, 64, 0, 0}; }, "logits", "contiguous");
  bad([](MqaTensors& t) { t.logits.strides[0] = 256; }, "logits", "row stride >= width");
  bad([](MqaTensors&) {}, "logits", "[64, 300] (seq_len, max_seqlen_k)", false, 300);
  bad([](MqaTensors& t) { t.logits.shape[1] = 300; }, "clean_logits", "false with compressed", true, 300);
  bad([](MqaTensors&) {}, "max_seqlen_k", "0 (full rows)", false, -1);
}

TEST(MqaLogitsValidation, EmptyProblemsAreNoOpsWithoutTheGpu) {
  {
    MqaTensors t;  // seq_len = 0
    t.q.shape[0] = 0, t.weights.shape[0] = 0, t.ks.shape[0] = 0, t.ke.shape[0] = 0, t.logits.shape[0] = 0;
    EXPECT_NO_THROW(t.call());
  }
  {
    MqaTensors t;  // seq_len_kv = 0
    t.kv.shape[0] = 0, t.scales.shape[0] = 0, t.logits.shape[1] = 0;
    EXPECT_NO_THROW(t.call());
    t.logits.shape[1] = 100;  // compressed: every window is empty
    EXPECT_NO_THROW(t.call(false, 100));
  }
}

}  // namespace
