// The weight-only GEMM's plan: the fused kernel (decode in registers) with its token block, stages and K split, or
// dequantise-then-dense-GEMM, whichever the model says is faster.
//   Fused: each pass over the weight (one per token block) is bound by the slowest of the DRAM bytes (packed weight
//   once, then L2) at the bandwidth the CTAs' stages in flight sustain, the decode's lane instructions and mma.sync's
//   tensor rate. A split K adds CTAs (more bytes in flight, more SMs) at the price of a partial-tile tail.
//   Dequantise: the packed weight read and the 16-bit weight written once, then the dense BF16 GEMM's own model.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

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

// CTAs of `smem_bytes` one SM holds.
int ctas_per_sm(int smem_bytes, const HardwareModel& hw) {
  const int by_smem = hw.smem_per_sm_bytes / (smem_bytes + hw.smem_reserved_per_block_bytes);
  const int by_threads = hw.max_threads_per_sm / wq::kThreads;
  return std::max(1, std::min({by_smem, by_threads, hw.max_blocks_per_sm}));
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

// Modelled microseconds of the fused kernel doing `f` with `splits` K slices.
double fused_us(const WeightLayout& w, const FusedWork& f, const WqGemmConfig& c, int splits, const HardwareModel& hw,
                int num_sms) {
  const double busy_sms = static_cast<double>(std::min<std::int64_t>(f.ctas, num_sms));
  // Whole CTAs per SM: the busiest SMs hold ceil(ctas / SMs) of them.
  const double per_sm = std::ceil(static_cast<double>(f.ctas) / num_sms);
  const double imbalance = f.ctas >= num_sms ? per_sm * num_sms / static_cast<double>(f.ctas) : 1.0;
  const double clock = hw.sm_clock_mhz * 1e6;
  // DRAM: what the busy SMs keep in flight (their resident CTAs' stages) per round trip, at most the bandwidth.
  const double resident = std::min<double>(per_sm, ctas_per_sm(c.smem_bytes, hw));
  const double in_flight = busy_sms * resident * c.stages * weight_stage_bytes(w);
  const double bw = std::min(hw.hbm_bytes_per_s(), in_flight / (kDramLatencyUs * 1e-6));
  const double memory_s = f.dram_bytes / bw;
  // Per pass: the decode plus, per n-tile of 8 tokens, 6 lane instructions (2 loads, 4 mmas) per 32 weights.
  const bool scale_each = !(w.format == WeightFormat::kInt4 && w.group_size >= wq::kChunkK && c.block_m <= 16);
  const double ops_per_weight =
      wq_decode_ops_per_weight(w.format, scale_each, w.act_dtype) + (1.0 + 6.0 * c.block_m / 8) / 32;
  const double weights = static_cast<double>(w.n_pad) * w.k_pad * f.passes;
  const double issue_s = ops_per_weight * weights / (kLaneOpsPerSmCycle * busy_sms * clock) * imbalance;
  const double mma_s =
      2.0 * c.block_m * weights / (hw.flop_per_cycle_bf16 * kMmaSyncShare * busy_sms * clock) * imbalance;
  double us = std::max({memory_s, issue_s, mma_s}) * 1e6 + kLaunchUs;
  if (splits > 1) {
    // The last CTA of a tile reads every split's partial tile.
    const double tile_bytes = 4.0 * wq::kBlockN * c.block_m;
    us += kReduceLatencyUs + splits * tile_bytes / (hw.hbm_bytes_per_s() / hw.num_sms) * 1e6;
  }
  return us;
}

// The deepest ring (at most kMaxStages) that still lets two CTAs share an SM.
int stages_for(const WeightLayout& w, int block_m, const HardwareModel& hw) {
  int stages = kMaxStages;
  while (stages > 2 &&
         2 * (wq::smem_bytes(w.format, w.group_size, w.has_zeros, block_m, stages) + hw.smem_reserved_per_block_bytes) >
             hw.smem_per_sm_bytes)
    --stages;
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
  WqGemmConfig c;
  c.packed_bytes = ledger.packed_bytes * num_experts;
  // Contiguous: each expert's rows come in whole 128-row blocks, so about M / experts rows per expert.
  c.block_m = block_m_for(type == GemmType::kMGroupedContiguous ? std::max(1, m / num_experts) : m);
  c.stages = stages_for(w, c.block_m, hw);
  c.smem_bytes = wq::smem_bytes(w.format, w.group_size, w.has_zeros, c.block_m, c.stages);
  TILEGEMM_REQUIRE(c.smem_bytes <= hw.smem_per_block_bytes, "hw", "room for two pipeline stages in shared memory",
                   fmt::format("{} bytes per block ({} needed)", hw.smem_per_block_bytes, c.smem_bytes));
  const int total_stages = (w.k_pad / wq::kChunkK + wq::kChunksPerStage - 1) / wq::kChunksPerStage;
  const auto work = [&](int splits) { return fused_work(m, w, ledger, c.block_m, splits, type, num_experts); };
  c.fused_us = fused_us(w, work(1), c, 1, hw, num_sms);
  for (int s = 2; dense && s <= std::min(kMaxSplits, total_stages); ++s) {
    const double us = fused_us(w, work(s), c, s, hw, num_sms);
    if (us < 0.98 * c.fused_us) c.fused_us = us, c.num_splits = s;  // a split must win clearly
  }
  const FusedWork chosen = work(c.num_splits);
  if (type == GemmType::kMGroupedMasked) {
    c.grid = static_cast<int>(chosen.ctas / num_experts);
    c.grid_y = num_experts;
  } else {
    c.grid = static_cast<int>(chosen.ctas);
  }

  // The dense path runs the BF16 GEMM: bf16 activations and a bf16 or fp32 D.
  if (dense && w.act_dtype == DType::kBFloat16 && d_dtype != DType::kFloat16) {
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
      "wq_gemm m={} n={} k={} {} {} -> {} block_m={} stages={} splits={} grid={} smem={} | packed {:.2f} MB, model "
      "fused {:.1f} us, dequantise+dense {}",
      m, w.n, w.k, packing, dtype_name(w.act_dtype), c.fused ? "fused" : "dequantise+dense", c.block_m, c.stages,
      c.num_splits, c.grid_y > 1 ? fmt::format("{}x{}", c.grid, c.grid_y) : fmt::format("{}", c.grid), c.smem_bytes,
      c.packed_bytes / 1e6, c.fused_us, dequant);
}

}  // namespace tilegemm
