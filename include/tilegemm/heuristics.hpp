#pragma once
// Heuristics: GemmDesc → GemmConfig for the SM90 BF16 and FP8 kernel families.
//   enumerate (block_m × block_n × math warpgroups × stages × cluster) → reject what the kernel or the
//   HardwareModel cannot run (each rejection carries its reason) → score the rest with a cost model built on
//   the performance ledger → pick the cheapest, ties broken by a fixed order. select_config caches one answer
//   per (desc, hardware, num_sms) so that repeated calls are a hash lookup; DG_PRINT_CONFIGS=1 prints each new
//   desc → config once to stderr.
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tilegemm/gemm_config.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

// Whether the FP8 selector offers 256-row tiles for masked problems on its own; TILEGEMM_CONFIG_FILTER=block_m=256
// forces them. NOTE (H200, through deep_gemm): on the five masked shapes of 128 to 1024 expected rows per group,
// 256x128 tiles ran 1.01-1.32x the time of 128x192 ones (32x192x6144x7168 740 -> 729 µs, 16x256x4096x7168
// 474 -> 359), which the cost model, calibrated on dense and contiguous problems, ranks the other way round.
constexpr bool kSm90Fp8MaskedTallTilesSelected = false;
// The narrowest 256-row tile the FP8 selector offers on its own, but for kSm90Fp8TallFillerBlockN-wide ones where
// 256x128 tiles leave a third of the SMs idle; TILEGEMM_CONFIG_FILTER=block_n=80 (any width) forces a narrow one.
// NOTE (H200, through deep_gemm, same process as DeepGEMM): an 8-expert MoE prefill of 8704 rows on 4096x7168
// weights ran 707-772 µs on 256x80 tiles and 614-627 on 256x96, 486-540 on 256x128; eight dense shapes with
// M = 1024-6144 were 1.07-1.69x faster on the wider tiles picked instead (2048x7168x2048: 256x64 93.7 -> 256x128
// 55.4 µs). The cost model, counting whole waves, ranked the narrow ones first. 256x64 still won where 256x128
// tiles half-fill the machine: 1024x2112x7168 29.6 µs (256x128 42.8, 128x64 47.5).
constexpr int kSm90Fp8TallTileMinBlockN = 128;
constexpr int kSm90Fp8TallFillerBlockN = 64;
// Whether the selectors offer tiles whose width is an odd multiple of 8 (24, 40, 56, ...) on their own; the kernels
// run them and TILEGEMM_CONFIG_FILTER=block_n=56 (any such width) forces one. NOTE (H200): 64x56 / 128x56 tiles
// fill 128 SMs on N = 7168 where 64-wide ones fill 112, and were 1-12% slower at M = 64 and 128, both dtypes: those
// shapes are not bound per SM.
constexpr bool kSm90OddEighthBlockNSelected = false;
// Where the FP8 selector offers stages of two 128-wide K blocks (block_k = 256: half the stage handshakes) on its
// own: at most kSm90Fp8TwoBlockStagesMaxRows rows (per group) and K >= kSm90Fp8TwoBlockStagesMinK, where they are
// then preferred over one-block stages of the same tile. NOTE (H200): on the 12 M = 64/128 DeepSeek shapes, 1-11%
// faster at K >= 7168 (64x2112x7168 15.1/14.5 -> 13.2 µs), within ±3% at K <= 2048; at M = 4096 (128x192, two
// stages) 3-4% slower.
// TILEGEMM_CONFIG_FILTER=block_k=256 forces them anywhere the kernel runs them.
constexpr int kSm90Fp8TwoBlockStagesMaxRows = 128;
constexpr int kSm90Fp8TwoBlockStagesMinK = 4096;
// Stages of four K blocks (block_k = 512) are offered where two-block stages are and the tile is at most
// kSm90Fp8FourBlockStagesMaxBlockN wide, and then preferred over two-block stages of the same tile. NOTE (H200,
// kernel timer): 64x16 and 64x32 tiles 3-7% faster (64x2112x7168 10.3 -> 9.6 µs, 128x2112x7168 11.1 -> 10.4,
// 64x4096x7168 14.0 -> 13.6); 64x64 tiles on three stages -3% (64x7168x16384) and +4% (128x4096x7168); 128x64 on
// two stages +10%. TILEGEMM_CONFIG_FILTER=block_k=512 forces them anywhere the kernel runs them.
constexpr int kSm90Fp8FourBlockStagesMaxBlockN = 32;
// Whether the BF16 selector offers stages of four 64-wide K atoms (block_k = 256) on its own; the kernel runs them
// and TILEGEMM_CONFIG_FILTER=block_k=256 forces them.
constexpr bool kSm90Bf16FourAtomStagesSelected = false;
// K groups (2 or 4 sets of consumer warps per CTA) the selectors offer on their own: dense weight-only GEMMs and
// FP8 x FP4 (not MXFP8) of at most this many tokens a block, where they were measured;
// TILEGEMM_CONFIG_FILTER=k_groups=N forces them anywhere the kernels run them. NOTE (H200, kernel time,
// bench/reports/wq-k-groups/): at M = 1 and 16 on DeepSeek-sized weights the best plans all had 2 or 4 sets (int8
// 16x4096x7168: one set 19.8 us, four 15.6; int4 g128 1x4096x7168 16.7 -> 10.5 with two sets and 2 splits); FP8 x FP4
// at 1 and 16 tokens 9-14% faster with four sets, MXFP8 within 3%.
constexpr int kSmallMKGroupsMaxBlockM = 16;
// Splits of the small-M mma.sync kernels stop where a second CTA would share an SM. NOTE (H200, kernel time): a
// second CTA per SM cost 8-100% (int8 16x4096x7168, 2 splits on 128 SMs 16.4 us, 4 splits on 256 CTAs 23.2; int4 g128
// 16x2112x7168, 4 splits 13.1 us, 8 splits 26.1).

// The numbers that decided a candidate's rank. Times are in microseconds.
struct CostBreakdown {
  long long tiles = 0;           // output tiles the persistent scheduler hands out
  int num_sms = 0;               // persistent CTAs
  long long waves = 0;           // ceil(work_units / num_sms)
  double last_wave_util = 0;     // fraction of SMs busy in the last wave
  long long work_units = 0;      // what the CTAs walk: tiles (data-parallel), tiles × split_k (split-K), or
                                 // one equal share of all K blocks per CTA (stream-K)
  double unit_k_blocks = 0;      // BLOCK_K steps of one work unit (mean)
  double reduction_us = 0;       // split-K / stream-K: publishing fp32 partials + the fix-up of a cut tile
  double workspace_bytes = 0;    // fp32 partial slots and counters the scheme needs (0 for data-parallel)
  double flops = 0;              // useful FLOPs of the problem (2·M·N·K per group)
  double l2_to_sm_bytes = 0;     // operand bytes all tiles load through L2 (ledger: b·MNK(1/bm+1/bn))
  double dram_bytes = 0;         // estimated HBM traffic with the wave's panels reused in L2
  int smem_bytes = 0;            // dynamic shared memory per CTA
  int smem_per_stage_bytes = 0;  // one A tile + one B tile
  int acc_regs_per_thread = 0;   // fp32 accumulator registers per math thread
  double mma_efficiency = 0;     // fraction of the tensor peak one tile's inner loop can reach
  double tile_compute_us = 0;    // one tile's MMA time at that efficiency
  double tile_load_us = 0;       // one tile's operand loads at its SM's share of L2 bandwidth (full wave)
  double tile_issue_us = 0;      // one consumer's serial floor: per stage a handshake and its wgmma chain
  double tile_overhead_us = 0;   // prologue + epilogue (D tile store) per tile
  double mainloop_us = 0;        // Σ over waves of max(compute, load, issue) + overhead
  double dram_floor_us = 0;      // dram_bytes / HBM bandwidth
  double compute_floor_us = 0;   // flops / (tensor peak × efficiency ceiling)
  double predicted_us = 0;       // max(mainloop, floors) + launch
  double predicted_tflops = 0;
  std::string bound;  // which term set predicted_us: "tiles", "dram" or "compute"
};

struct Candidate {
  GemmConfig config;
  bool legal = false;         // the kernel runs it and the selector offers it (or the filter asks for it)
  std::string reject_reason;  // empty when legal
  CostBreakdown cost;         // filled for legal candidates only
  std::string scheme_reason;  // split-K / stream-K: the wave analysis that proposed it
};

// Checks the problem itself (sizes, dtypes, TMA stride alignment). Throws InvalidArgument naming the
// offending dimension, e.g. "k: expected a multiple of 8 (16-byte TMA row stride of K-major bf16 A/B), got 100".
void validate_desc(const GemmDesc& desc);
// fp8_gemm_nt_skip_head_mid's head_splits for a GEMM of N columns (b's rows): each part >= 0, left + right > 0 and
// dividing N, and some FP8 tile width dividing both left and right. Throws InvalidArgument naming head_splits.
// validate_desc runs it for a desc with head splits; the API also before it checks d's width against them.
void validate_head_splits(const HeadSplits& heads, std::int64_t n);

// Swap AB (GemmConfig::swap_ab). A plain BF16 GEMM with bf16 D may run as Dᵀ = B·Aᵀ: ragged M (65, 129, 257 tokens)
// then fills the wgmma's free N side instead of a third of a 128-row block. sm90_swap_ab_runs says whether the BF16
// kernel can run `desc` so; swapped_problem is the problem it then runs (m and n, A's and B's majors exchanged,
// d_transposed set); kernel_problem is the one a (desc, config) pair launches (desc itself unless config.swap_ab and
// desc is not already swapped).
bool sm90_swap_ab_runs(const GemmDesc& desc);
GemmDesc swapped_problem(const GemmDesc& desc);
GemmDesc kernel_problem(const GemmDesc& desc, const GemmConfig& config);

// Shared memory the SM90 BF16 kernel asks for with this config:
// stages × (block_m + block_n) × block_k × sizeof(A) + block_m × block_n × sizeof(D) + 1024.
int sm90_bf16_smem_bytes(const GemmDesc& desc, const GemmConfig& config);

// Device workspace the SM90 BF16 kernel needs for `config` (split-K / stream-K; 0 for data-parallel) on a grid of
// `grid` CTAs: tile counters, then fp32 partial slots of block_m × block_n floats — per (tile, slice) for
// deterministic split-K, two per CTA for deterministic stream-K, one per tile that can be cut otherwise.
struct SplitWorkspaceLayout {
  long long tiles = 0;            // tiles that can be cut (one counter per tile and math warpgroup): split-K all,
                                  // stream-K those after the whole-tile waves (stream_k_whole_tiles)
  long long slots = 0;            // fp32 partial slots
  std::size_t counter_bytes = 0;  // rounded up to 256 bytes so the slots stay aligned
  std::size_t slot_bytes = 0;
  std::size_t total_bytes() const { return counter_bytes + static_cast<std::size_t>(slots) * slot_bytes; }
};
SplitWorkspaceLayout sm90_split_workspace(const GemmDesc& desc, const GemmConfig& config, int grid);
// The persistent grid the kernel launches for `config`: one CTA per SM at most, fewer when there is less work
// (ctas_per_sm per SM at most: TILEGEMM_CTAS_PER_SM, a tuning experiment).
int sm90_grid_size(const GemmDesc& desc, const GemmConfig& config, int ctas_per_sm = 1);

// The work units of one launch (GemmParams::unit_begin / unit_end): tile or tile-pair indices of a per-row
// contiguous problem, group indices of a masked or prefix-sum one.
struct WorkRange {
  int begin = 0;
  int end = 0x7fffffff;  // the default range covers all the work
};
// The launches a data-parallel M-grouped GEMM on `grid` CTAs is cut into, each about `waves_per_launch` waves
// (masked and prefix-sum problems: whole groups, sized from expected_m or the mean group). One range covering
// everything for other problems, for waves_per_launch 0, or when the work fits one chunk.
std::vector<WorkRange> sm90_launch_chunks(const GemmDesc& desc, const GemmConfig& config, int grid,
                                          int waves_per_launch);

// Whether the SM90 BF16 kernel can run `config` for `desc` on `hw` (config.num_sms must already be set).
// On false, *why (if given) says which rule failed with the numbers involved.
bool sm90_bf16_config_legal(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw, std::string* why);

// The SM90 FP8 kernel's shared memory: stages × (block_m + block_n) × 128 bytes of e4m3 tiles + the stage's
// per-token scales (A's, and B's in 1D1D, each padded to 128 bytes) + block_m × block_n × sizeof(D) + 1024.
int sm90_fp8_smem_bytes(const GemmDesc& desc, const GemmConfig& config);
// The FP8 kernel's rules (device/tilegemm/kernels/sm90_fp8_gemm.cuh), as sm90_bf16_config_legal.
bool sm90_fp8_config_legal(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw, std::string* why);
// The widest block_n the FP8 1D2D kernel runs (a multiple of 8 in [16, 256]) that divides head_splits' left and right,
// so each tile lies in one part of a head; 0 when none does.
int sm90_fp8_head_split_max_block_n(const HeadSplits& heads);
// The family the desc's dtypes name (BF16 or FP8).
int sm90_smem_bytes(const GemmDesc& desc, const GemmConfig& config);
bool sm90_config_legal(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw, std::string* why);

// The cost model on its own (config must be legal).
CostBreakdown estimate_sm90_cost(const GemmDesc& desc, const GemmConfig& config, const HardwareModel& hw);

// Every candidate the selector considers, legal or not, in enumeration order. num_sms = 0 → hw.num_sms.
std::vector<Candidate> enumerate_candidates(const GemmDesc& desc, const HardwareModel& hw, int num_sms = 0);

// The legal candidates sorted best first (the selector's order: predicted time, then the tie-break order).
std::vector<Candidate> rank_candidates(const GemmDesc& desc, const HardwareModel& hw, int num_sms = 0);

// The best config. Validates the desc first; throws InvalidArgument if no candidate is legal.
// Cached per (desc, hardware, num_sms) in a process-wide, thread-safe map.
GemmConfig select_config(const GemmDesc& desc, const HardwareModel& hw, int num_sms = 0);

// The cache behind select_config, usable on its own (tests, tools) with its own print sink.
class ConfigSelector {
 public:
  // print: write "tilegemm: config <desc> -> <config>" to `sink` the first time a key is selected.
  GemmConfig select(const GemmDesc& desc, const HardwareModel& hw, int num_sms, bool print, std::FILE* sink);
  std::size_t size() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, GemmConfig> cache_;
};

}  // namespace tilegemm
