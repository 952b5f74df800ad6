// The weight-only GEMM's plan: the fused kernel (decode in registers) with its token block, stages and K split, or
// dequantise-then-dense-GEMM, whichever the model says is faster.
//   Fused: each pass over the weight (one per token block) is bound by the slowest of the DRAM bytes (packed weight
//   once, then L2) at the bandwidth the CTAs' stages in flight sustain and the busy SMs' share of DRAM, the decode's
//   lane instructions at the rate the resident warps can issue them, and mma.sync's tensor rate. A split K adds CTAs
//   (more SMs, more warps per SM) at the price of a partial-tile tail; K groups add warps inside a CTA at the price of
//   a shared-memory sum.
//   Dequantise: the packed weight read and the 16-bit weight written once, then the dense BF16 GEMM's own model.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/config_filter.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {
namespace {

constexpr double kMmaSyncShare = 0.6;     // mma.sync's share of the wgmma tensor peak (guess until measured)
constexpr double kDramLatencyUs = 1.0;    // a loaded DRAM round trip: in-flight bytes / latency = bandwidth
constexpr double kLaunchUs = 2.0;         // launch and pipeline fill of one kernel
constexpr double kReduceLatencyUs = 1.0;  // the split counter round trip and the partials' first reads
// ncu on an H100 (one consumer warp per scheduler): a decoding warp issues once per 2.9-4.5 cycles, stalled on
// fixed-latency dependencies, so a scheduler issues every cycle only with about this many such warps.
constexpr double kWarpCyclesPerIssue = 3.35;
constexpr double kKGroupSumUs = 0.3;  // sets 1.. hand their sums to set 0: two CTA barriers (a guess until measured)
// Registers a thread holds (ptxas, sm_90a, with the split sum): up to 96 up to 32 tokens, ~150 at 64.
constexpr int kRegistersSmallBlock = 96;
constexpr int kRegistersLargeBlock = 152;
constexpr int kRegistersPerSm = 65536;
constexpr int kMaxSplits = 16;
constexpr int kMaxStages = 8;

int block_m_for(int m) {
  return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
}

// Bytes of weight (codes, scales, zero points) one stage of a CTA brings in: what its loads keep in flight.
double weight_stage_bytes(const WeightLayout& w) {
  return wq::code_stage_bytes(w.format) + wq::scale_stage_bytes(w.format, w.group_size) +
         wq::zero_stage_bytes(w.format, w.group_size, w.has_zeros);
}

// CTAs of `c` one SM holds: shared memory, threads and registers (a launch bound of one CTA caps a thread at what
// one CTA may use, so a thread holds the fewer of its need and that cap).
int ctas_per_sm_by_threads(int block_m, int k_groups, const HardwareModel& hw) {
  const int threads = wq::threads(k_groups);
  const int need = block_m <= 32 ? kRegistersSmallBlock : kRegistersLargeBlock;
  const int registers = std::min(need, kRegistersPerSm / threads / 8 * 8);
  return std::max(
      1, std::min({hw.max_threads_per_sm / threads, kRegistersPerSm / (registers * threads), hw.max_blocks_per_sm}));
}
int ctas_per_sm(const WqGemmConfig& c, const HardwareModel& hw) {
  const int by_smem = hw.smem_per_sm_bytes / (c.smem_bytes + hw.smem_reserved_per_block_bytes);
  return std::max(1, std::min(by_smem, ctas_per_sm_by_threads(c.block_m, c.k_groups, hw)));
}

// The fused kernel's work: CTAs, passes over a weight's rows (one per token block) and DRAM bytes.
struct FusedWork {
  std::int64_t ctas = 0;
  std::int64_t passes = 0;  // token blocks times experts' weights decoded, in whole weights of the layout
  double dram_bytes = 0;
};

// Dense: token blocks x row blocks x splits CTAs. Contiguous: one expert's weight per token block; every expert's
// weight read from DRAM once. Masked (m = rows per expert): a CTA per (row block, expert) walks its token blocks.
FusedWork fused_work(int m, const WeightLayout& w, const WqLedger& ledger, int block_m, int splits, GemmType type,
                     int experts) {
  const std::int64_t m_blocks = (m + block_m - 1) / block_m;
  const std::int64_t n_blocks = (w.n_pad / wq::kRowBlock + wq::kConsumerWarps - 1) / wq::kConsumerWarps;
  FusedWork f;
  const bool masked = type == GemmType::kMGroupedMasked;
  f.ctas = n_blocks * (masked ? experts : m_blocks) * splits;
  f.passes = m_blocks * (masked ? experts : 1);
  f.dram_bytes = ledger.packed_bytes * experts + (ledger.act_bytes + ledger.out_bytes) * (masked ? experts : 1);
  return f;
}

// Modelled microseconds of the fused kernel doing `f` with `c` (its splits, K groups, stages).
double fused_us(const WeightLayout& w, const FusedWork& f, const WqGemmConfig& c, const HardwareModel& hw,
                int num_sms) {
  const double busy_sms = static_cast<double>(std::min<std::int64_t>(f.ctas, num_sms));
  // Whole CTAs per SM: the busiest SMs hold ceil(ctas / SMs) of them.
  const double per_sm = std::ceil(static_cast<double>(f.ctas) / num_sms);
  const double imbalance = f.ctas >= num_sms ? per_sm * num_sms / static_cast<double>(f.ctas) : 1.0;
  const double clock = hw.sm_clock_mhz * 1e6;
  // DRAM: what the busy SMs keep in flight (their resident CTAs' stages) per round trip, at most the busy SMs' share
  // of the bandwidth (ncu: 64 CTAs on as many SMs drew 46% of an H100's peak).
  const double resident = std::min<double>(per_sm, ctas_per_sm(c, hw));
  const double in_flight = busy_sms * resident * c.stages * weight_stage_bytes(w);
  const double bw = std::min(hw.hbm_bytes_per_s() * busy_sms / hw.num_sms, in_flight / (kDramLatencyUs * 1e-6));
  const double memory_s = f.dram_bytes / bw * imbalance;
  // Issue: a scheduler holds `resident` CTAs' warps of each set.
  const double issue_rate = std::min(1.0, resident * c.k_groups / kWarpCyclesPerIssue);
  // Per pass: the decode plus, per n-tile of 8 tokens, 6 lane instructions (2 loads, 4 mmas) per 32 weights.
  const bool scale_each = !(w.format == WeightFormat::kInt4 && w.group_size >= wq::kChunkK && c.block_m <= 16);
  const double ops_per_weight =
      wq_decode_ops_per_weight(w.format, scale_each, w.act_dtype) + (1.0 + 6.0 * c.block_m / 8) / 32;
  const double weights = static_cast<double>(w.n_pad) * w.k_pad * f.passes;
  const double issue_s = ops_per_weight * weights / (kLaneOpsPerSmCycle * issue_rate * busy_sms * clock) * imbalance;
  const double mma_s =
      2.0 * c.block_m * weights / (hw.flop_per_cycle_bf16 * kMmaSyncShare * busy_sms * clock) * imbalance;
  double us = std::max({memory_s, issue_s, mma_s}) * 1e6 + kLaunchUs;
  if (c.num_splits > 1) {
    // The last CTA of a tile reads every split's partial tile.
    const double tile_bytes = 4.0 * wq::kBlockN * c.block_m;
    us += kReduceLatencyUs + c.num_splits * tile_bytes / (hw.hbm_bytes_per_s() / hw.num_sms) * 1e6;
  }
  if (c.k_groups > 1) us += kKGroupSumUs;
  return us;
}

// Sets of consumer warps a token block allows: four sets hold a thread to 96 registers (enough up to 32 tokens),
// two to 224.
int max_k_groups(int block_m) {
  return block_m <= 32 ? 4 : 2;
}

// The deepest ring (at most kMaxStages per pair of sets, a multiple of the K groups) that still lets two CTAs share
// an SM where registers and threads allow two.
int stages_for(const WeightLayout& w, int block_m, int k_groups, const HardwareModel& hw) {
  const int sharing = std::min(2, ctas_per_sm_by_threads(block_m, k_groups, hw));
  const int step = k_groups;
  int stages = kMaxStages * std::max(1, k_groups / 2);
  const auto smem = [&](int s) { return wq::smem_bytes(w.format, w.group_size, w.has_zeros, block_m, s, k_groups); };
  while (stages - step >= std::max(2, k_groups) &&
         (sharing * (smem(stages) + hw.smem_reserved_per_block_bytes) > hw.smem_per_sm_bytes ||
          smem(stages) > hw.smem_per_block_bytes))
    stages -= step;
  return stages;
}

}  // namespace

WqGemmConfig select_wq_gemm_config(int m, const WeightLayout& w, DType d_dtype, const HardwareModel& hw, int num_sms,
                                   GemmType type, int num_experts) {
  TILEGEMM_REQUIRE(m >= 1, "m", "a token count >= 1", fmt::format("{}", m));
  TILEGEMM_REQUIRE(num_experts >= 1, "num_experts", "an expert count >= 1", fmt::format("{}", num_experts));
  TILEGEMM_REQUIRE(d_dtype == DType::kBFloat16 || d_dtype == DType::kFloat16 || d_dtype == DType::kFloat32, "d_dtype",
                   "bf16, fp16 or fp32", std::string(dtype_name(d_dtype)));
  TILEGEMM_REQUIRE(
      type == GemmType::kNormal || type == GemmType::kMGroupedContiguous || type == GemmType::kMGroupedMasked, "type",
      "normal, m_grouped_contiguous or m_grouped_masked", std::string(gemm_type_name(type)));
  TILEGEMM_REQUIRE(num_sms > 0 && hw.num_sms > 0 && hw.hbm_gbps > 0 && hw.sm_clock_mhz > 0, "hw",
                   "a hardware model with SMs, a clock and DRAM bandwidth",
                   fmt::format("{} ({} SMs asked, {} GB/s)", hw.name, num_sms, hw.hbm_gbps));
  const bool dense = type == GemmType::kNormal;
  const WqLedger ledger = wq_ledger(m, w, d_dtype, hw);
  // TILEGEMM_CONFIG_FILTER (tests, tuning) may pin block_m, stages, split_k and k_groups; pinning any of them also
  // pins the fused path.
  const SmallMPins pin = small_m_pins(env_config_filter());
  // Contiguous: each expert's rows come in whole 128-row blocks, so about M / experts rows per expert.
  const int block_m =
      pin.block_m ? pin.block_m : block_m_for(type == GemmType::kMGroupedContiguous ? std::max(1, m / num_experts) : m);
  TILEGEMM_REQUIRE(block_m == 8 || block_m == 16 || block_m == 32 || block_m == 64, "TILEGEMM_CONFIG_FILTER",
                   "block_m 8, 16, 32 or 64 for the weight-only kernel", fmt::format("block_m={}", block_m));
  const int total_stages = (w.k_pad / wq::kChunkK + wq::kChunksPerStage - 1) / wq::kChunksPerStage;
  WqGemmConfig c;
  c.packed_bytes = ledger.packed_bytes * num_experts;
  c.fused_us = -1;
  for (int groups = 1; groups <= max_k_groups(block_m); groups *= 2) {
    if (pin.k_groups ? groups != pin.k_groups : groups > 1 && !(dense && block_m <= kSmallMKGroupsMaxBlockM)) continue;
    const int stages = pin.stages ? pin.stages : stages_for(w, block_m, groups, hw);
    const int smem = wq::smem_bytes(w.format, w.group_size, w.has_zeros, block_m, stages, groups);
    if (stages < 2 || stages % groups != 0 || smem > hw.smem_per_block_bytes) continue;
    for (int splits = 1; splits <= (dense ? std::min(kMaxSplits, total_stages) : 1); ++splits) {
      if (pin.split_k && splits != pin.split_k) continue;
      const FusedWork f = fused_work(m, w, ledger, block_m, splits, type, num_experts);
      if (f.ctas > std::numeric_limits<int>::max()) continue;
      if (!pin.split_k && splits > 1 && f.ctas > num_sms) break;  // a second CTA per SM: slower (heuristics.hpp)
      WqGemmConfig candidate = c;
      candidate.block_m = block_m, candidate.stages = stages, candidate.k_groups = groups;
      candidate.num_splits = splits, candidate.smem_bytes = smem;
      // Masked: one row of CTAs per expert.
      candidate.grid = static_cast<int>(type == GemmType::kMGroupedMasked ? f.ctas / num_experts : f.ctas);
      candidate.grid_y = type == GemmType::kMGroupedMasked ? num_experts : 1;
      candidate.fused_us = fused_us(w, f, candidate, hw, num_sms);
      // Each step up in splits or sets must win clearly: the simpler kernel keeps near-ties.
      if (c.fused_us < 0 || candidate.fused_us < 0.98 * c.fused_us) c = candidate;
    }
  }
  TILEGEMM_REQUIRE(
      c.fused_us >= 0, pin.any() ? "TILEGEMM_CONFIG_FILTER" : "hw",
      "a weight-only kernel that fits (stages a multiple of k_groups, K groups 4 up to 32 tokens, 2 up "
      "to 64, splits for dense GEMMs up to one per stage, two stages in shared memory)",
      fmt::format("block_m={} on {} ({} bytes of shared memory per block)", block_m, hw.name, hw.smem_per_block_bytes));
  // The dense path runs the BF16 GEMM: bf16 activations and a bf16 or fp32 D.
  if (dense && !pin.any() && w.act_dtype == DType::kBFloat16 && d_dtype != DType::kFloat16) {
    GemmDesc desc;
    desc.m = m, desc.n = w.n, desc.k = w.k;
    desc.d_dtype = d_dtype;
    const GemmConfig dense_config = select_config(desc, hw, num_sms);
    const double dequant_s = (ledger.packed_bytes + ledger.dense_weight_bytes) / hw.hbm_bytes_per_s() +
                             ledger.decode_ops / (kLaneOpsPerSmCycle * num_sms * hw.sm_clock_mhz * 1e6);
    c.dequant_us = dequant_s * 1e6 + kLaunchUs + estimate_sm90_cost(desc, dense_config, hw).predicted_us;
    c.fused = c.fused_us <= c.dequant_us;
  }
  return c;
}

std::string format_wq_gemm_config(int m, const WeightLayout& w, const WqGemmConfig& c) {
  const std::string packing = w.format == WeightFormat::kInt4
                                  ? fmt::format("int4 g{}{}", w.group_size, w.has_zeros ? " zeros" : "")
                                  : std::string(weight_format_name(w.format));
  const std::string dequant = c.dequant_us > 0 ? fmt::format("{:.1f} us", c.dequant_us) : "n/a";
  return fmt::format(
      "wq_gemm m={} n={} k={} {} {} -> {} block_m={} stages={} splits={} k_groups={} grid={} smem={} | "
      "packed {:.2f} MB, model fused {:.1f} us, dequantise+dense {}",
      m, w.n, w.k, packing, dtype_name(w.act_dtype), c.fused ? "fused" : "dequantise+dense", c.block_m, c.stages,
      c.num_splits, c.k_groups, c.grid_y > 1 ? fmt::format("{}x{}", c.grid, c.grid_y) : fmt::format("{}", c.grid),
      c.smem_bytes, c.packed_bytes / 1e6, c.fused_us, dequant);
}

}  // namespace tilegemm
