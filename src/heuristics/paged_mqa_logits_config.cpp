// The paged MQA-logits launch: consumer warpgroups and ring depths from the HardwareModel, and the schedule's
// arithmetic on the host.
//   The kernel is bound by reading each KV block once (8448 bytes). One CTA per SM draws its even share of the DRAM
//   bandwidth, so a block costs the SM dram_cycles; one consumer warpgroup spends mma_cycles (its wgmma at the SM's
//   fp8 rate) plus epilogue_cycles (relu, weights, head sum and store) on it, printed for the ledger's account.
//   Those counts are a quarter to three quarters of the DRAM time, yet on an H100 four warpgroups beat two on every
//   shape of DeepGEMM's decode test (0.3-6.5%), three in between: a warpgroup spends most of a block waiting (for its
//   data, its wgmma's latency, its stores), so every shape takes the kernel's four. The rings hold twelve blocks in
//   all (about 100 KB, twice what one SM's share of the bandwidth needs in flight): with four warpgroups 2, 3 and 4
//   stages each came within 2% of one another, rings as deep as shared memory allows up to 3% slower.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/config_filter.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/mqa_ledger.hpp"
#include "tilegemm/paged_mqa_logits.hpp"
#include "tilegemm/paged_mqa_logits_params.hpp"

namespace tilegemm {
namespace {

constexpr int kPagedWarpgroups = 4;       // the kernel's most
constexpr int kPagedBlocksInFlight = 12;  // KV stages of all the rings together
constexpr int kPagedQStages = 3;          // items in flight: short contexts move on to the next item's Q early
// Epilogue instructions fixed per block (record, barriers, scales, addresses) besides the ledger's per accumulator
// (kMqaEpilogueInstrPerAccumulator), issued by each of the warpgroup's four warps on its own scheduler, so one
// instruction per thread is about one cycle.
constexpr double kPagedEpilogueFixedInstr = 64;

}  // namespace

PagedMqaLogitsConfig select_paged_mqa_logits_config(int next_n, int heads, DType logits_dtype, int partitions,
                                                    const HardwareModel& hw) {
  TILEGEMM_REQUIRE(next_n == 1 || next_n == 2, "next_n", "1 or 2 query rows per batch item (DeepGEMM's SM90)",
                   fmt::format("{}", next_n));
  TILEGEMM_REQUIRE(heads == 32 || heads == 64, "heads", "32 or 64 heads", fmt::format("{}", heads));
  TILEGEMM_REQUIRE(logits_dtype == DType::kFloat32 || logits_dtype == DType::kBFloat16, "logits_dtype", "fp32 or bf16",
                   std::string(dtype_name(logits_dtype)));
  TILEGEMM_REQUIRE(partitions >= 1, "partitions", "at least one schedule partition (CTA)",
                   fmt::format("{}", partitions));
  TILEGEMM_REQUIRE(hw.num_sms > 0 && hw.hbm_gbps > 0 && hw.sm_clock_mhz > 0 && hw.flop_per_cycle_fp8 > 0, "hw",
                   "a hardware model with SMs, DRAM bandwidth, a clock and fp8 tensor cores",
                   fmt::format("{} ({} SMs, {} GB/s, {} MHz, {} fp8 FLOP/cycle/SM)", hw.name, hw.num_sms, hw.hbm_gbps,
                               hw.sm_clock_mhz, hw.flop_per_cycle_fp8));
  PagedMqaLogitsConfig c;
  c.next_n = next_n, c.heads = heads, c.logits_dtype = logits_dtype, c.partitions = partitions;
  c.q_stages = kPagedQStages;

  const int n = next_n * heads;  // wgmma N
  c.mma_cycles = 2.0 * paged_mqa::kBlockKv * n * paged_mqa::kHeadDim / hw.flop_per_cycle_fp8;
  c.epilogue_cycles = kMqaEpilogueInstrPerAccumulator * n / 2 + kPagedEpilogueFixedInstr;
  const double block_bytes = paged_mqa::kKvBytes + paged_mqa::kScaleBytes +
                             static_cast<double>(next_n) * paged_mqa::kBlockKv * dtype_bits(logits_dtype) / 8;
  const double sm_bytes_per_cycle = hw.hbm_bytes_per_s() / hw.num_sms / (hw.sm_clock_mhz * 1e6);
  c.dram_cycles = block_bytes / sm_bytes_per_cycle;
  // TILEGEMM_CONFIG_FILTER (tests, tuning) may pin math_wg (1 to 4) and stages (KV stages per warpgroup).
  const ConfigFilter& filter = env_config_filter();
  const int pin_warpgroups = filter.value_of("math_wg"), pin_stages = filter.value_of("stages");
  TILEGEMM_REQUIRE(pin_warpgroups <= kPagedWarpgroups && pin_stages != 1, "TILEGEMM_CONFIG_FILTER",
                   "math_wg 1 to 4 and stages >= 2 for fp8_paged_mqa_logits",
                   fmt::format("math_wg={} stages={}", pin_warpgroups, pin_stages));
  c.math_warpgroups = pin_warpgroups ? pin_warpgroups : kPagedWarpgroups;

  c.threads = 128 * c.math_warpgroups + paged_mqa::kProducerThreads;
  const auto bytes = [&](int stages) {
    return paged_mqa::smem_bytes(next_n, heads, c.math_warpgroups, stages, c.q_stages);
  };
  c.kv_stages =
      pin_stages ? pin_stages : std::max(2, (kPagedBlocksInFlight + c.math_warpgroups - 1) / c.math_warpgroups);
  while (!pin_stages && c.kv_stages > 2 && bytes(c.kv_stages) > hw.smem_per_block_bytes) --c.kv_stages;
  c.smem_bytes = bytes(c.kv_stages);
  TILEGEMM_REQUIRE(
      c.smem_bytes <= hw.smem_per_block_bytes, pin_stages ? "TILEGEMM_CONFIG_FILTER" : "hw",
      fmt::format("room for {} KV stages per warpgroup", pin_stages ? pin_stages : 2),
      fmt::format("{} bytes of shared memory per block ({} needed)", hw.smem_per_block_bytes, c.smem_bytes));
  return c;
}

std::string format_paged_mqa_logits_config(const PagedMqaLogitsConfig& c) {
  return fmt::format(
      "fp8_paged_mqa_logits next_n={} heads={} logits={} -> partitions={} warpgroups={} kv_stages={} q_stages={} "
      "threads={} smem={} | per block: mma {:.0f} + epilogue {:.0f} cycles per warpgroup, DRAM {:.0f} cycles per SM",
      c.next_n, c.heads, dtype_name(c.logits_dtype), c.partitions, c.math_warpgroups, c.kv_stages, c.q_stages,
      c.threads, c.smem_bytes, c.mma_cycles, c.epilogue_cycles, c.dram_cycles);
}

std::vector<std::int32_t> paged_mqa_logits_schedule(const std::vector<std::int32_t>& context_lens, int batch,
                                                    int next_n, int partitions) {
  TILEGEMM_REQUIRE(batch >= 0 && next_n >= 1 &&
                       context_lens.size() == static_cast<std::size_t>(batch) * static_cast<std::size_t>(next_n),
                   "context_lens", fmt::format("[batch, next_n] = [{}, {}] values", batch, next_n),
                   fmt::format("{} values", context_lens.size()));
  TILEGEMM_REQUIRE(partitions >= 1, "partitions", "at least one partition", fmt::format("{}", partitions));
  std::vector<std::int64_t> blocks(static_cast<std::size_t>(batch));
  std::int64_t total = 0;
  for (int b = 0; b < batch; ++b) {
    int longest = 0;
    for (int i = 0; i < next_n; ++i)
      longest = std::max(longest, context_lens[static_cast<std::size_t>(b) * next_n + i]);
    blocks[b] = paged_mqa::kv_blocks(longest);
    total += blocks[b];
  }
  std::vector<std::int32_t> schedule(2 * (static_cast<std::size_t>(partitions) + 1));
  std::int64_t unit = 0;  // first unit of item b
  int b = 0;
  for (int s = 0; s <= partitions; ++s) {
    const std::int64_t start = total == 0 ? 0 : paged_mqa::partition_start(s, total, partitions);
    while (b < batch && unit + blocks[b] <= start) unit += blocks[b++];  // skips empty items too
    schedule[2 * s] = b;
    schedule[2 * s + 1] = b < batch ? static_cast<std::int32_t>(start - unit) : 0;
  }
  return schedule;
}

}  // namespace tilegemm
