#pragma once
// The performance ledger: pure functions over a problem shape, operand dtypes, an optional tile and a
// HardwareModel. No GPU, no allocation beyond the returned structs. Every number here is a model (a floor
// or an estimate); measured numbers come from the benchmark harness.
//
// Naming: the seeds write C = A·B; tilegemm writes D = C + A·B, so the seeds' "C" is our D (the output)
// and our C is the optional addend that is read once.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilegemm/dtype.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

// One GEMM, or `batch` of them.
//  - batched (grouped == false): `batch` independent [m,n,k] problems; every count is multiplied by batch.
//  - grouped (grouped == true): m is the total rows of all groups (A [m,k], D [m,n]) and B holds `batch`
//    weight matrices [batch, n, k] (M-grouped contiguous, the MoE layout).
struct ProblemShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  bool grouped = false;
  double extra_bytes = 0;  // other DRAM traffic the operator must move, e.g. HC prenorm's fp32 [M] row sums
};

// The sizes every entry point takes (the kernels', the planner's and deep_gemm's contract): m, n, k and batch each
// in [1, 2^31), a grouped problem no more groups than rows, and batch·m·n below 2^62 so tile counts stay exact.
// InvalidArgument names --m, --n, --k, --batch or --extra-bytes.
void validate_problem_shape(const ProblemShape& shape);

// Block scaling of one operand: one scale per gran_mn rows (of M for A, of N for B) × gran_k K elements,
// each `bits` wide (32 = fp32, 8 = UE8M0). gran_k == 0 means the operand has no scale factors.
struct ScaleFactors {
  int gran_mn = 0;
  int gran_k = 0;
  int bits = 32;
  bool present() const { return gran_k > 0; }
};
// Bytes of the scale factors of `rows` rows (M for A, N for B) × k of one operand; 0 when absent.
double scale_factor_bytes(const ScaleFactors& sf, std::int64_t rows, std::int64_t k);

struct OperandDtypes {
  DType a = DType::kBFloat16;
  DType b = DType::kBFloat16;
  DType d = DType::kBFloat16;  // output
  bool with_c = false;         // D = C + A·B reads C once
  DType c = DType::kBFloat16;  // only used when with_c
  std::optional<DType> math;   // tensor-core path; default: the wider of a and b (see math_dtype)
  ScaleFactors sf_a, sf_b;

  static OperandDtypes uniform(DType t) {
    OperandDtypes o;
    o.a = o.b = o.d = o.c = t;
    return o;
  }
  // The dtype whose peak bounds the math: `math` if set, else the wider of a and b (fp8×fp4 runs at the fp8
  // rate, w4a16 at the bf16 rate). fp32 means CUDA-core FFMA; ask for tf32 explicitly for the tensor path.
  DType math_dtype() const;
};

// Minimum DRAM bytes: every operand moved exactly once.
struct OperandBytes {
  double a = 0, b = 0, sf_a = 0, sf_b = 0, c = 0, d = 0, extra = 0;
  double ab() const { return a + b; }
  double total() const { return a + b + sf_a + sf_b + c + d + extra; }
};

enum class BoundClass { kCompute, kMemory };
std::string_view bound_name(BoundClass b);  // "compute", "memory"

struct ProblemLedger {
  ProblemShape shape;
  OperandDtypes dtypes;
  DType math = DType::kBFloat16;
  double flops = 0;                         // 2·M·N·K (× batch)
  OperandBytes bytes;                       // minimum bytes per operand
  double min_bytes = 0;                     // bytes.total()
  double intensity_ab = 0;                  // flops / (A + B)
  double intensity_all = 0;                 // flops / min_bytes
  double peak_flops = 0;                    // FLOP/s of `math` on this hardware
  double bandwidth = 0;                     // bytes/s
  double machine_balance = 0;               // peak_flops / bandwidth, FLOP/byte
  BoundClass bound = BoundClass::kCompute;  // intensity_all vs machine_balance
  double compute_floor_s = 0;               // flops / peak_flops
  double memory_floor_s = 0;                // min_bytes / bandwidth
  double time_floor_s = 0;                  // max of the two
  double naive_ab_bytes = 0;                // rung 0: every output element reads its A row and B column from DRAM
};

// Throws InvalidArgument for non-positive sizes ("--m", "--n", "--k", "--batch") or a math dtype the
// hardware has no peak for.
ProblemLedger problem_ledger(const ProblemShape& shape, const OperandDtypes& dtypes, const HardwareModel& hw);

// A measured (or claimed) time against the floors.
struct TimingLedger {
  double time_s = 0;
  double tflops = 0;                 // achieved, 1e12 FLOP/s
  double gbps = 0;                   // minimum bytes / time, 1e9 B/s
  double fraction_of_peak = 0;       // achieved FLOP/s ÷ peak (compute floor ÷ time)
  double fraction_of_bandwidth = 0;  // achieved B/s ÷ HBM bandwidth (memory floor ÷ time)
  double fraction_of_floor = 0;      // time floor ÷ time
};
// Throws InvalidArgument naming "--time-us" for a non-positive or non-finite time.
TimingLedger timing_ledger(const ProblemLedger& problem, double time_us);

struct TileShape {
  int block_m = 128, block_n = 128, block_k = 64;
  int stages = 1;
  int threads = 128;
  int split_k = 1;
  int regs_per_thread = 0;  // 0 = estimate: fp32 accumulators + kTileRegOverhead
};
// Registers a thread needs beyond its accumulators (addresses, loop state, A/B fragments) when the caller
// gives no measured count. A rough, documented guess: ptxas reports are the truth.
inline constexpr int kTileRegOverhead = 32;

struct WaveStats {
  std::int64_t work_units = 0;  // tiles (× split_k)
  std::int64_t slots = 0;       // units that run at once
  std::int64_t waves = 0;       // ceil(work_units / slots)
  std::int64_t last_wave_units = 0;
  double last_wave_utilisation = 0;  // last_wave_units / slots
  double efficiency = 0;             // work_units / (waves · slots)
};
WaveStats wave_stats(std::int64_t work_units, std::int64_t slots);

struct OccupancyEstimate {
  int regs_per_thread = 0;  // after rounding to the allocation granularity
  int by_registers = 0, by_smem = 0, by_threads = 0, by_hw_limit = 0;
  int blocks_per_sm = 0;  // min of the four
  std::string limiter;    // "registers", "shared memory", "threads" or "block limit"
};
// Resident blocks per SM for a block of `threads` threads using `regs_per_thread` registers and
// `smem_bytes` of shared memory (the per-block reservation of the hardware model is added).
OccupancyEstimate blocks_per_sm(const HardwareModel& hw, int threads, int regs_per_thread, double smem_bytes);

std::int64_t ceil_div(std::int64_t a, std::int64_t b);
// Output tiles of the problem (× batch; grouped: each group's rows padded to block_m is approximated by
// ceil(m / block_m) + batch - 1).
std::int64_t output_tiles(const ProblemShape& shape, int block_m, int block_n);
// fp32 accumulator registers per thread: block_m·block_n / threads.
int accumulator_regs_per_thread(int block_m, int block_n, int threads);
// Shared memory of one pipeline stage: A [block_m, block_k] + B [block_k, block_n] (+ their scale factors).
double smem_bytes_per_stage(const OperandDtypes& dtypes, int block_m, int block_n, int block_k);
// DRAM reads of A and B with no cache reuse across tiles: b_A·MNK/block_n + b_B·MNK/block_m (the seed's
// b·MNK(1/bm + 1/bn)), scale factors re-read the same way.
double tiled_ab_bytes(const ProblemShape& shape, const OperandDtypes& dtypes, int block_m, int block_n);

struct TileLedger {
  TileShape tile;
  double ab_bytes = 0;              // tiled_ab_bytes
  double output_bytes = 0;          // D written once (+ C read once)
  double dram_bytes = 0;            // ab_bytes + output_bytes + extra
  double traffic_over_minimum = 0;  // dram_bytes / minimum bytes
  double naive_ab_bytes = 0;        // rung 0, for comparison
  double smem_per_stage = 0;
  double smem_total = 0;  // × stages
  int smem_limit = 0;     // per block (opt-in)
  bool smem_fits = false;
  int accum_regs_per_thread = 0;
  int regs_per_thread = 0;  // the count occupancy used: given, or accumulators + kTileRegOverhead
  int regs_limit = 0;       // max registers per thread (0 = not modelled)
  bool regs_fit = false;    // accumulators + overhead within max registers per thread
  OccupancyEstimate occupancy;
  std::int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  WaveStats waves;                      // work units (tiles × split_k) over num_sms persistent slots
  double splitk_extra_write_bytes = 0;  // fp32 partials written by split_k > 1
  double splitk_extra_read_bytes = 0;   // and read back by the reduction
  bool fits() const { return smem_fits && regs_fit && occupancy.blocks_per_sm > 0; }
  std::string why_not_fit() const;  // empty when fits()
};
// Throws InvalidArgument naming "--block-m", "--block-n", "--block-k", "--stages", "--threads" or
// "--split-k" for non-positive values (and threads not a multiple of 32). A tile that does not fit is not an
// error here: check fits() (the CLI turns it into one).
TileLedger tile_ledger(const ProblemShape& shape, const OperandDtypes& dtypes, const TileShape& tile,
                       const HardwareModel& hw);

// The textbook variant decision tree:
//   several problems? same shape → batched, shapes differ → grouped;
//   one problem: tiles < SMs and K long enough to cut → split-K;
//                tiles ≥ SMs but the tail wave wastes more than kStreamKTailWaste → stream-K;
//                else data-parallel.
enum class Variant { kDataParallel, kSplitK, kStreamK, kGrouped, kBatched };
std::string_view variant_name(Variant v);  // "data-parallel", "split-K", "stream-K", "grouped", "batched"

inline constexpr double kStreamKTailWaste = 0.10;  // idle fraction of all wave slots that justifies stream-K
inline constexpr int kMinKItersPerSplit = 4;       // each split-K slice keeps ≥ 4 block_k iterations

struct VariantDecision {
  Variant variant = Variant::kDataParallel;
  std::int64_t tiles = 0;
  int num_sms = 0;
  std::int64_t k_iters = 0;   // ceil(K / block_k)
  WaveStats waves;            // data-parallel waves
  int suggested_split_k = 1;  // for split-K
  std::string reason;         // one sentence with the numbers that decided it
};
VariantDecision choose_variant(const ProblemShape& shape, int block_m, int block_n, int block_k,
                               const HardwareModel& hw);

// CATLASS "Common" template constraints for an L1 tile m1×n1×k1 and L0 step k0, with
// m0 = m1 and n0 = n1 (L0 does not split M/N on Ascend):
//   L1 : (m1·k1 + k1·n1)·b·l1_stages ≤ L1      L0A: m0·k0·b·2 ≤ L0A (double-buffered)
//   L0B: k0·n0·b·2 ≤ L0B                        L0C: m0·n0·4 ≤ L0C (fp32 accumulation)
struct AscendTilingCheck {
  int m1 = 0, n1 = 0, k1 = 0, k0 = 0, l1_stages = 2;
  double l1_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0;  // needed
  int l1_limit = 0, l0a_limit = 0, l0b_limit = 0, l0c_limit = 0;     // capacity
  bool l1_ok = false, l0a_ok = false, l0b_ok = false, l0c_ok = false;
  bool k_ok = false;  // k0 divides k1
  bool ok() const { return l1_ok && l0a_ok && l0b_ok && l0c_ok && k_ok; }
  std::string why_not() const;  // empty when ok()
};
// Throws InvalidArgument naming `argument` when the hardware has no Ascend buffers (not an Ascend preset)
// or a size is non-positive.
AscendTilingCheck ascend_tiling_check(const OperandDtypes& dtypes, int m1, int n1, int k1, int k0, int l1_stages,
                                      const HardwareModel& hw, const std::string& argument = "--hw");

// The DeepSeek-V3 inference suite: M ∈ {64, 128, 4096} × (N,K) ∈ {(2112,7168), (24576,1536),
// (32768,512), (7168,16384), (4096,7168), (7168,2048)}, M-major order.
std::vector<ProblemShape> deepseek_suite();
// The same six weights at decode batch sizes: M ∈ {1, 8, 16, 32}, below the 64-row wgmma tile.
std::vector<ProblemShape> deepseek_decode_suite();

}  // namespace tilegemm
