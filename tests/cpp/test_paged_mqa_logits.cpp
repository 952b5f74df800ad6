// fp8_paged_mqa_logits without a GPU: its kernels compile for sm_90a with no spills under the names DeepGEMM's test
// profiles, the launch configuration follows its model, the schedule covers every (item, KV block) exactly once in
// balanced runs, and every bad argument is named before any CUDA call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "expect_invalid.hpp"
#include "kernels/sm90_paged_mqa_logits.hpp"
#include "scoped_env.hpp"
#include "test_jit_support.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/paged_mqa_logits.hpp"
#include "tilegemm/paged_mqa_logits_params.hpp"

using namespace tilegemm;

namespace {

// The presets hardware_from_device maps a GPU onto (H800 is an H100 to the model).
const char* const kPresets[] = {"h100-sxm", "h200", "h20"};

class PagedMqaCodegen : public tilegemm::testing::JitEnvFixture {};

TEST_F(PagedMqaCodegen, EveryVariantCompilesWithoutSpillsUnderDeepGemmsNames) {
  set("DG_JIT_PTXAS_CHECK", "1");
  std::map<std::string, jit::KernelSpec> specs;
  for (const char* preset : kPresets) {
    const HardwareModel hw = hardware_preset(preset);
    for (int next_n : {1, 2})
      for (int heads : {32, 64})
        for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
          const auto spec =
              kernels::sm90_paged_mqa_logits_spec(select_paged_mqa_logits_config(next_n, heads, dtype, hw.num_sms, hw));
          specs.emplace(spec.name, spec);
        }
  }
  const auto metadata = kernels::sm90_paged_mqa_logits_metadata_spec();
  specs.emplace(metadata.name, metadata);
  for (const auto& [name, spec] : specs) {
    SCOPED_TRACE(name);
    // DeepGEMM's test times the logits kernel with bench_kineto(..., ('paged_mqa_logits', 'clean_logits')), which
    // asserts each name matches at most one kernel of the call.
    EXPECT_NE(spec.entry.find("paged_mqa_logits"), std::string::npos);
    EXPECT_EQ(spec.entry.find("clean_logits"), std::string::npos);
    tilegemm::testing::expect_kernel_compiles(spec);
  }
  EXPECT_EQ(metadata.entry, "sm90_paged_mqa_logits_metadata");
  EXPECT_EQ(kernels::sm90_paged_mqa_logits_spec(
                select_paged_mqa_logits_config(2, 64, DType::kFloat32, 132, hardware_preset("h200")))
                .entry,
            "sm90_fp8_paged_mqa_logits");
}

// Four consumer warpgroups, their rings twelve KV blocks in all, on every shape and preset (measured on an H100,
// src/heuristics/paged_mqa_logits_config.cpp); the printed line carries the model's cycles per block.
TEST(PagedMqaLogitsConfig, FourWarpgroupsWithTwelveBlocksInFlight) {
  for (const char* preset : kPresets) {
    const HardwareModel hw = hardware_preset(preset);
    for (int next_n : {1, 2})
      for (int heads : {32, 64})
        for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
          const PagedMqaLogitsConfig c = select_paged_mqa_logits_config(next_n, heads, dtype, hw.num_sms, hw);
          SCOPED_TRACE(format_paged_mqa_logits_config(c));
          EXPECT_EQ(c.math_warpgroups, 4);
          EXPECT_EQ(c.kv_stages, 3);
          EXPECT_EQ(c.threads, 128 * 4 + 32);
          EXPECT_EQ(c.q_stages, 3);
          EXPECT_EQ(c.partitions, hw.num_sms);
          EXPECT_EQ(c.smem_bytes, paged_mqa::smem_bytes(next_n, heads, 4, 3, c.q_stages));
          EXPECT_LE(c.smem_bytes, hw.smem_per_block_bytes);
          // The model's account: shared by the four warpgroups, a block's tensor-core and epilogue cycles stay under
          // its DRAM time per SM (bound by the read).
          EXPECT_GT(c.mma_cycles, 0);
          EXPECT_LT((c.mma_cycles + c.epilogue_cycles) / c.math_warpgroups, c.dram_cycles);
        }
  }
  // A shared memory too small for twelve blocks keeps two stages per warpgroup.
  HardwareModel small = hardware_preset("h200");
  small.smem_per_block_bytes = paged_mqa::smem_bytes(2, 64, 4, 2, 3);
  EXPECT_EQ(select_paged_mqa_logits_config(2, 64, DType::kFloat32, 132, small).kv_stages, 2);
  const std::string line = format_paged_mqa_logits_config(
      select_paged_mqa_logits_config(2, 64, DType::kBFloat16, 78, hardware_preset("h20")));
  for (const char* field : {"next_n=2", "heads=64", "logits=bf16", "partitions=78", "warpgroups=4", "kv_stages=3"})
    EXPECT_NE(line.find(field), std::string::npos) << line;
}

// TILEGEMM_CONFIG_FILTER pins the consumer warpgroups and the KV stages per warpgroup (tuning probes); pins the
// kernel cannot run with are named.
TEST(PagedMqaLogitsConfig, FilterPinsWarpgroupsAndStages) {
  const HardwareModel hw = hardware_preset("h100-sxm");
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "math_wg=4,stages=3");
    const PagedMqaLogitsConfig c = select_paged_mqa_logits_config(1, 32, DType::kFloat32, 132, hw);
    EXPECT_EQ(c.math_warpgroups, 4);
    EXPECT_EQ(c.kv_stages, 3);
    EXPECT_EQ(c.threads, 4 * 128 + 32);
    EXPECT_EQ(c.smem_bytes, paged_mqa::smem_bytes(1, 32, 4, 3, c.q_stages));
  }
  {
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", "math_wg=3");  // stages: twelve blocks in flight
    const PagedMqaLogitsConfig c = select_paged_mqa_logits_config(2, 64, DType::kFloat32, 132, hw);
    EXPECT_EQ(c.math_warpgroups, 3);
    EXPECT_EQ(c.kv_stages, 4);
  }
  for (const char* bad : {"math_wg=5", "stages=1", "math_wg=4,stages=16"}) {
    SCOPED_TRACE(bad);
    test_util::ScopedEnv pin("TILEGEMM_CONFIG_FILTER", bad);
    test_util::expect_invalid([&] { select_paged_mqa_logits_config(2, 64, DType::kFloat32, 132, hw); },
                              "TILEGEMM_CONFIG_FILTER");
  }
}

TEST(PagedMqaLogitsConfig, RejectsShapesTheKernelDoesNotTake) {
  const HardwareModel hw = hardware_preset("h200");
  using test_util::expect_invalid;
  expect_invalid([&] { select_paged_mqa_logits_config(3, 64, DType::kFloat32, 132, hw); }, "next_n");
  expect_invalid([&] { select_paged_mqa_logits_config(1, 16, DType::kFloat32, 132, hw); }, "heads");
  expect_invalid([&] { select_paged_mqa_logits_config(1, 64, DType::kFloat16, 132, hw); }, "logits_dtype");
  expect_invalid([&] { select_paged_mqa_logits_config(1, 64, DType::kFloat32, 0, hw); }, "partitions");
  HardwareModel small = hw;
  small.smem_per_block_bytes = 32 * 1024;
  expect_invalid([&] { select_paged_mqa_logits_config(2, 64, DType::kFloat32, 132, small); }, "hw");
}

// ---- the schedule ----

TEST(PagedMqaSchedule, PartitionArithmeticInvertsAndBalances) {
  for (long long total = 1; total <= 70; ++total)
    for (long long parts = 1; parts <= 40; ++parts) {
      long long smallest = total, largest = 0;
      for (long long s = 0; s < parts; ++s) {
        const long long size =
            paged_mqa::partition_start(s + 1, total, parts) - paged_mqa::partition_start(s, total, parts);
        smallest = std::min(smallest, size), largest = std::max(largest, size);
      }
      ASSERT_EQ(paged_mqa::partition_start(0, total, parts), 0);
      ASSERT_EQ(paged_mqa::partition_start(parts, total, parts), total);
      ASSERT_LE(largest - smallest, 1) << total << " units in " << parts;
      for (long long unit = 0; unit <= total; ++unit) {
        const long long s = paged_mqa::first_partition_at(unit, total, parts);
        ASSERT_GE(paged_mqa::partition_start(s, total, parts), unit);
        ASSERT_TRUE(s == 0 || paged_mqa::partition_start(s - 1, total, parts) < unit) << unit << "/" << total;
      }
    }
  EXPECT_EQ(paged_mqa::kv_blocks(0), 0);
  EXPECT_EQ(paged_mqa::kv_blocks(-5), 0);
  EXPECT_EQ(paged_mqa::kv_blocks(1), 1);
  EXPECT_EQ(paged_mqa::kv_blocks(64), 1);
  EXPECT_EQ(paged_mqa::kv_blocks(65), 2);
  EXPECT_EQ(paged_mqa::kv_blocks(2147483647), 33554432);
}

struct Unit {
  int b, k;
  bool operator<(const Unit& o) const { return b != o.b ? b < o.b : k < o.k; }
  bool operator==(const Unit& o) const { return b == o.b && k == o.k; }
};

// The walk the logits kernel's producer makes from row s of the schedule to row s + 1.
std::vector<Unit> walk(const std::vector<std::int32_t>& schedule, const std::vector<int>& blocks, int s) {
  const int batch = static_cast<int>(blocks.size());
  const auto clamp = [&](int x) { return std::clamp(x, 0, batch); };
  int b = clamp(schedule[2 * s]), k = std::max(schedule[2 * s + 1], 0);
  const int end_b = clamp(schedule[2 * s + 2]), end_k = schedule[2 * s + 3];
  std::vector<Unit> units;
  while (b < end_b || (b == end_b && k < end_k)) {
    const int n = b < batch ? blocks[b] : 0;
    const int k_end = b == end_b ? std::min(end_k, n) : n;
    for (; k < k_end; ++k) units.push_back({b, k});
    ++b, k = 0;
  }
  return units;
}

void check_schedule(const std::vector<std::int32_t>& context_lens, int batch, int next_n, int parts) {
  SCOPED_TRACE(fmt::format("batch {} next_n {} partitions {}", batch, next_n, parts));
  const std::vector<std::int32_t> schedule = paged_mqa_logits_schedule(context_lens, batch, next_n, parts);
  ASSERT_EQ(schedule.size(), 2u * (parts + 1));
  std::vector<int> blocks(batch);
  long long total = 0;
  for (int b = 0; b < batch; ++b) {
    int longest = 0;  // the item's longest row decides its blocks
    for (int i = 0; i < next_n; ++i) longest = std::max(longest, context_lens[b * next_n + i]);
    blocks[b] = paged_mqa::kv_blocks(longest);
    total += blocks[b];
  }
  // The end row, and every start a real unit (k < the item's blocks) or the end (B, 0).
  EXPECT_EQ(schedule[2 * parts], batch);
  EXPECT_EQ(schedule[2 * parts + 1], 0);
  for (int s = 0; s <= parts; ++s) {
    const int b = schedule[2 * s], k = schedule[2 * s + 1];
    EXPECT_TRUE((b == batch && k == 0) || (b >= 0 && b < batch && k >= 0 && k < blocks[b]))
        << s << ": " << b << ", " << k;
  }
  // Walking every partition covers every unit exactly once, in order, with run lengths within one of each other.
  std::vector<Unit> all;
  std::size_t shortest = SIZE_MAX, longest = 0;
  for (int s = 0; s < parts; ++s) {
    const std::vector<Unit> run = walk(schedule, blocks, s);
    shortest = std::min(shortest, run.size()), longest = std::max(longest, run.size());
    all.insert(all.end(), run.begin(), run.end());
  }
  ASSERT_EQ(static_cast<long long>(all.size()), total);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  for (const Unit& u : all) EXPECT_LT(u.k, blocks[u.b]);
  EXPECT_LE(longest - shortest, 1u);
  EXPECT_EQ(static_cast<long long>(longest), (total + parts - 1) / parts);
}

TEST(PagedMqaSchedule, CoversEveryBlockOnceInBalancedRuns) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int batch = std::uniform_int_distribution<int>(0, 300)(rng);
    const int next_n = std::uniform_int_distribution<int>(1, 3)(rng);
    const int mean = std::uniform_int_distribution<int>(1, 3000)(rng);
    std::vector<std::int32_t> lens(static_cast<std::size_t>(batch) * next_n);
    for (int b = 0; b < batch; ++b) {
      const int last = std::uniform_int_distribution<int>(0, 2 * mean)(rng);
      for (int i = 0; i < next_n; ++i)  // earlier rows shorter, as DeepGEMM's test makes them; sometimes longer
        lens[b * next_n + i] =
            i == next_n - 1 ? last : std::uniform_int_distribution<int>(0, last + (trial % 5 == 0 ? 200 : 0))(rng);
      if (trial % 7 == 0 && b % 3 == 0)
        for (int i = 0; i < next_n; ++i) lens[b * next_n + i] = 0;  // empty items
    }
    for (int parts : {1, 7, 132, 1000}) check_schedule(lens, batch, next_n, parts);
  }
}

TEST(PagedMqaSchedule, EdgeCases) {
  // No work: every row is the end.
  for (const auto& lens : {std::vector<std::int32_t>{}, std::vector<std::int32_t>{0, 0, -3, 0}}) {
    const int batch = static_cast<int>(lens.size()) / 2;
    const auto schedule = paged_mqa_logits_schedule(lens, batch, 2, 5);
    for (int s = 0; s <= 5; ++s)
      EXPECT_EQ(std::make_pair(schedule[2 * s], schedule[2 * s + 1]), std::make_pair(batch, 0));
  }
  // Fewer units than partitions: one block each, then idle partitions at the end.
  const auto few = paged_mqa_logits_schedule({0, 130, 64}, 3, 1, 6);  // items of 0, 3 and 1 blocks
  const std::vector<std::int32_t> expected_few = {1, 0, 1, 1, 1, 2, 2, 0, 3, 0, 3, 0, 3, 0};
  EXPECT_EQ(few, expected_few);
  // The longest row decides the item's blocks (row 0 longer than the last row).
  const auto rows = paged_mqa_logits_schedule({200, 10, 1, 65}, 2, 2, 2);  // 4 and 2 blocks: 3 each
  const std::vector<std::int32_t> expected_rows = {0, 0, 0, 3, 2, 0};
  EXPECT_EQ(rows, expected_rows);
  // DeepGEMM-sized decode batch: still within one block per partition.
  std::vector<std::int32_t> big(4096);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::int32_t>(5734 + (i * 7919) % 4915);
  check_schedule(big, 4096, 1, 132);
  test_util::expect_invalid([] { paged_mqa_logits_schedule({1, 2, 3}, 2, 2, 4); }, "context_lens");
  test_util::expect_invalid([] { paged_mqa_logits_schedule({1, 2}, 1, 2, 0); }, "partitions");
}

// ---- argument validation (host buffers stand in for device tensors: every check runs before any CUDA call) ----

struct PagedTensors {
  static constexpr int kBatch = 3, kNextN = 2, kHeads = 64, kBlocks = 8, kMaxBlocks = 4, kParts = 4, kCols = 256;
  std::vector<std::uint8_t> q_store = std::vector<std::uint8_t>(kBatch * kNextN * kHeads * 128 + 64),
                            kv_store = std::vector<std::uint8_t>(kBlocks * 64 * 132 + 64);
  std::vector<float> w_store = std::vector<float>(kBatch * kNextN * kHeads + 16),
                     logits_store = std::vector<float>(kBatch * kNextN * 512);
  std::vector<std::int32_t> lens_store = std::vector<std::int32_t>(kBatch * kNextN),
                            table_store = std::vector<std::int32_t>(kBatch * kMaxBlocks),
                            schedule_store = std::vector<std::int32_t>(2 * (kParts + 1));
  TensorView q, kv, w, lens, table, schedule, logits;

  PagedTensors() {
    q = TensorView::contiguous(aligned(q_store.data()), DType::kFloat8E4M3, {kBatch, kNextN, kHeads, 128});
    kv = TensorView::contiguous(aligned(kv_store.data()), DType::kInt8, {kBlocks, 64, 1, 132});
    w = TensorView::contiguous(aligned(w_store.data()), DType::kFloat32, {kBatch * kNextN, kHeads});
    lens = TensorView::contiguous(lens_store.data(), DType::kInt32, {kBatch, kNextN});
    table = TensorView::contiguous(table_store.data(), DType::kInt32, {kBatch, kMaxBlocks});
    schedule = TensorView::contiguous(schedule_store.data(), DType::kInt32, {kParts + 1, 2});
    logits = TensorView::matrix(logits_store.data(), DType::kFloat32, kBatch * kNextN, kCols, 512);
  }
  template <class T>
  static T* aligned(T* p) {
    auto address = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<T*>((address + 15) / 16 * 16);
  }
};

void call(const PagedTensors& t, bool clean = false) {
  fp8_paged_mqa_logits(t.q, t.kv, t.w, t.lens, t.table, t.schedule, t.logits, clean);
}

TEST(PagedMqaValidation, EveryBadArgumentIsNamed) {
  using test_util::expect_invalid;
  struct Case {
    const char* what;
    void (*edit)(PagedTensors&);
    const char* argument;
    const char* fragment;
  };
  const Case cases[] = {
      {"q bf16", [](PagedTensors& t) { t.q.dtype = DType::kBFloat16; }, "q", "fp8"},
      {"q 3-D", [](PagedTensors& t) { t.q.ndim = 3; }, "q", "4-D"},
      {"next_n 3", [](PagedTensors& t) { t.q.shape[1] = 3; }, "q", "next_n 1 or 2"},
      {"16 heads", [](PagedTensors& t) { t.q.shape[2] = 16; }, "q", "H 32 or 64"},
      {"head dim 64", [](PagedTensors& t) { t.q.shape[3] = 64; }, "q", "128"},
      {"q strided", [](PagedTensors& t) { t.q.strides[0] *= 2; }, "q", "contiguous"},
      {"q misaligned", [](PagedTensors& t) { t.q.data = static_cast<char*>(t.q.data) + 8; }, "q", "16-byte"},
      {"kv fp32", [](PagedTensors& t) { t.kv.dtype = DType::kFloat32; }, "kv_cache", "int8"},
      {"block_kv 32", [](PagedTensors& t) { t.kv.shape[1] = 32; }, "kv_cache", "64, 1, 132"},
      {"two kv heads", [](PagedTensors& t) { t.kv.shape[2] = 2; }, "kv_cache", "64, 1, 132"},
      {"no scale bytes", [](PagedTensors& t) { t.kv.shape[3] = 128; }, "kv_cache", "64, 1, 132"},
      {"no blocks", [](PagedTensors& t) { t.kv.shape[0] = 0; }, "kv_cache", "num_blocks >= 1"},
      {"token rows apart", [](PagedTensors& t) { t.kv.strides[1] = 136; }, "kv_cache", "stride(1) = 132"},
      {"block stride 4 bytes off", [](PagedTensors& t) { t.kv.strides[0] += 4; }, "kv_cache", "multiple of 16"},
      {"blocks overlap", [](PagedTensors& t) { t.kv.strides[0] = 64 * 128; }, "kv_cache", "8448"},
      {"kv misaligned", [](PagedTensors& t) { t.kv.data = static_cast<char*>(t.kv.data) + 4; }, "kv_cache", "16-byte"},
      {"weights bf16", [](PagedTensors& t) { t.w.dtype = DType::kBFloat16; }, "weights", "fp32"},
      {"weights rows", [](PagedTensors& t) { t.w.shape[0] = 3; }, "weights", "[6, 64]"},
      {"weights heads", [](PagedTensors& t) { t.w.shape[1] = 32, t.w.strides[0] = 32; }, "weights", "[6, 64]"},
      {"weights strided", [](PagedTensors& t) { t.w.strides[0] = 68; }, "weights", "contiguous"},
      {"weights misaligned", [](PagedTensors& t) { t.w.data = static_cast<float*>(t.w.data) + 1; }, "weights",
       "16-byte"},
      {"context_lens 1-D", [](PagedTensors& t) { t.lens.ndim = 1, t.lens.shape[0] = 6, t.lens.strides[0] = 1; },
       "context_lens", "2-D"},
      {"context_lens fp32", [](PagedTensors& t) { t.lens.dtype = DType::kFloat32; }, "context_lens", "int32"},
      {"context_lens next_n", [](PagedTensors& t) { t.lens.shape[1] = 1, t.lens.strides[0] = 1; }, "context_lens",
       "[3, 2]"},
      {"context_lens transposed",
       [](PagedTensors& t) {
         t.lens.strides = {1, 3, 0, 0};
       },
       "context_lens", "contiguous"},
      {"block_table rows", [](PagedTensors& t) { t.table.shape[0] = 2; }, "block_table", "[3, max_blocks]"},
      {"block_table strided", [](PagedTensors& t) { t.table.strides[1] = 2; }, "block_table", "stride(1) = 1"},
      {"block_table fp32", [](PagedTensors& t) { t.table.dtype = DType::kFloat32; }, "block_table", "int32"},
      {"schedule 1 row", [](PagedTensors& t) { t.schedule.shape[0] = 1; }, "schedule_meta", "[partitions + 1, 2]"},
      {"schedule 3 wide", [](PagedTensors& t) { t.schedule.shape[1] = 3; }, "schedule_meta", "[partitions + 1, 2]"},
      {"schedule strided", [](PagedTensors& t) { t.schedule.strides[0] = 4; }, "schedule_meta", "contiguous"},
      {"schedule int8", [](PagedTensors& t) { t.schedule.dtype = DType::kInt8; }, "schedule_meta", "int32"},
      {"logits fp16", [](PagedTensors& t) { t.logits.dtype = DType::kFloat16; }, "logits", "fp32 or bf16"},
      {"logits rows", [](PagedTensors& t) { t.logits.shape[0] = 5; }, "logits", "[6, max_context_len]"},
      {"logits transposed",
       [](PagedTensors& t) {
         t.logits.strides = {1, 6, 0, 0};
       },
       "logits", "contiguous columns"},
      {"logits rows overlap", [](PagedTensors& t) { t.logits.strides[0] = 100; }, "logits", "at least"},
      {"logits misaligned", [](PagedTensors& t) { t.logits.data = static_cast<char*>(t.logits.data) + 2; }, "logits",
       "aligned"},
      {"logits 3-D", [](PagedTensors& t) { t.logits.ndim = 3, t.logits.shape[2] = 1, t.logits.strides[2] = 1; },
       "logits", "2-D"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    PagedTensors t;
    c.edit(t);
    expect_invalid([&] { call(t); }, c.argument, c.fragment);
  }
  PagedTensors t;
  expect_invalid([&] { call(t, /*clean=*/true); }, "clean_logits", "false");
}

TEST(PagedMqaValidation, NoWorkReturnsWithoutTheGpu) {
  {
    PagedTensors t;  // B = 0
    t.q.shape[0] = 0, t.w.shape[0] = 0, t.lens.shape[0] = 0, t.table.shape[0] = 0, t.logits.shape[0] = 0;
    EXPECT_NO_THROW(call(t));
  }
  {
    PagedTensors t;  // max_context_len = 0
    t.logits.shape[1] = 0;
    EXPECT_NO_THROW(call(t));
  }
}

TEST(PagedMqaValidation, MetadataArguments) {
  using test_util::expect_invalid;
  PagedTensors t;
  expect_invalid([&] { paged_mqa_logits_metadata(t.lens, 32, t.schedule); }, "block_kv", "64");
  TensorView flat = t.lens;
  flat.ndim = 1, flat.shape[0] = 6, flat.strides[0] = 1;
  expect_invalid([&] { paged_mqa_logits_metadata(flat, 64, t.schedule); }, "context_lens", "2-D");
  TensorView transposed = t.lens;
  transposed.strides = {1, 3, 0, 0};
  expect_invalid([&] { paged_mqa_logits_metadata(transposed, 64, t.schedule); }, "context_lens", "contiguous");
  TensorView empty_rows = t.lens;
  empty_rows.shape[1] = 0;
  expect_invalid([&] { paged_mqa_logits_metadata(empty_rows, 64, t.schedule); }, "context_lens", "next_n >= 1");
  TensorView narrow = t.schedule;
  narrow.shape[1] = 1;
  expect_invalid([&] { paged_mqa_logits_metadata(t.lens, 64, narrow); }, "schedule_meta", "[partitions + 1, 2]");
  TensorView floats = t.schedule;
  floats.dtype = DType::kFloat32;
  expect_invalid([&] { paged_mqa_logits_metadata(t.lens, 64, floats); }, "schedule_meta", "int32");
}

TEST(PagedMqaLayout, RowStrideIsDeepGemmsAllocation) {
  // align(align(max_context_len, 256), 1024 bytes of elements)
  EXPECT_EQ(paged_mqa_logits_row_stride(10000, DType::kFloat32), 10240);
  EXPECT_EQ(paged_mqa_logits_row_stride(10000, DType::kBFloat16), 10240);
  EXPECT_EQ(paged_mqa_logits_row_stride(100, DType::kFloat32), 256);
  EXPECT_EQ(paged_mqa_logits_row_stride(100, DType::kBFloat16), 512);
  EXPECT_EQ(paged_mqa_logits_row_stride(0, DType::kFloat32), 0);
  test_util::expect_invalid([] { paged_mqa_logits_row_stride(64, DType::kFloat16); }, "logits_dtype");
  test_util::expect_invalid([] { paged_mqa_logits_row_stride(-1, DType::kFloat32); }, "max_context_len");
}

}  // namespace
