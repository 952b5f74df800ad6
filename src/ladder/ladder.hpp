#pragma once
// The teaching ladder: five real BF16 GEMM kernels for D[M,N] = A[M,K]·B[N,K]ᵀ (A and B
// K-major, the "nt" layout; fp32 accumulation; bf16 D), each removing one bottleneck of the one before:
//   0 naive        one thread per output element, fp32 FMAs straight from global memory
//   1 smem + mma   128x128x32 tiles staged in shared memory, tensor cores (ldmatrix + mma.sync), no overlap
//   2 cp.async     a 4-stage cp.async ring: loads of later K-slices overlap the MMAs of the current one
//   3 swizzle      XOR-swizzled shared memory (no ldmatrix bank conflicts) + rasterised tile order (L2 reuse)
//   4 production   TMA + wgmma + warp specialisation: tilegemm::bf16_gemm with the heuristics' config
// `tilegemm ladder --m --n --k` runs them all on one problem (src/ladder/run_ladder.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/ledger.hpp"
#include "tilegemm/tensor_view.hpp"

namespace tilegemm::ladder {

inline constexpr int kNumRungs = 5;
inline constexpr int kProductionRung = 4;
// Rung 3's rasterisation panel: m-blocks walked before moving along N. 16 128-row blocks against the ~17
// n-blocks a 264-CTA wave then spans keeps the resident A and B panels about equally tall.
inline constexpr int kRasterGroup = 16;

struct RungInfo {
  int index = 0;
  std::string name;                           // "naive", "smem+mma", "cp.async", "swizzle+raster", "tma+wgmma"
  std::string idea;                           // what this rung adds, one phrase
  std::string removes;                        // the bottleneck of the previous rung it removes (empty for rung 0)
  int block_m = 0, block_n = 0, block_k = 0;  // CTA tile (rung 0: 16x16 outputs, block_k = 8 per load)
  int stages = 1;
  int threads = 0;
  int smem_bytes = 0;  // dynamic + static shared memory per CTA (rung 4: from its config)
};

// Rungs 0-3 as fixed tables; rung 4's tile comes from the heuristics for the shape (rung_info_for).
// Throws InvalidArgument naming "rung" for an index outside [0, kNumRungs).
RungInfo rung_info(int rung);
RungInfo rung_info_for(int rung, const ProblemShape& shape, const HardwareModel& hw);

// The JIT spec of rungs 0-3 (rung 4 is the production kernel and has its own). Needs no GPU.
jit::KernelSpec rung_kernel_spec(int rung);

// Checks the operands of a ladder GEMM without a GPU: a bf16 [M,K] and b bf16 [N,K], both 2-D, K-major
// (stride 1 along K), row strides multiples of 8 and base addresses 16-byte aligned; K % 8 == 0; d bf16
// [M,N] with unit column stride. Throws InvalidArgument naming "a", "b", "d" or "k".
void validate_operands(const TensorView& a, const TensorView& b, const TensorView& d);

// D = A·Bᵀ with rung `rung` on `stream` (a cudaStream_t). Validates first; the launch is asynchronous.
void run_rung(int rung, const TensorView& a, const TensorView& b, const TensorView& d, void* stream = nullptr);

// ---- The ledger's view of each rung (no GPU) ------------------------------------------------------------
struct RungTraffic {
  double load_bytes = 0;     // operand bytes the CTAs ask the memory system for (L2 -> SM): rung 0 2·M·N·K·b,
                             // tiled rungs b·M·N·K·(1/bm + 1/bn) (ledger tiled_ab_bytes)
  double dram_bytes = 0;     // HBM estimate: A/B panels of one wave of resident CTAs read once per wave, + D
  double minimum_bytes = 0;  // every operand once (problem_ledger)
  int resident_ctas = 0;     // CTAs of one wave (num_sms × blocks per SM from the ledger's occupancy)
  int wave_m_blocks = 0, wave_n_blocks = 0;  // the output panel a wave covers (tiled rungs)
};
RungTraffic predicted_traffic(int rung, const ProblemShape& shape, const HardwareModel& hw);

// ---- Running the ladder ---------------------------------------------------------------------------------
struct LadderOptions {
  int m = 0, n = 0, k = 0;
  double warmup_ms = 25;
  double rep_ms = 200;
  std::uint64_t seed = 20251130;
  double max_diff = 1e-5;  // calc_diff bound of the reference check (the GPU tests' bound)
  int device = 0;
};

struct LadderRow {
  RungInfo rung;
  RungTraffic traffic;
  bool measured = false;
  BenchStats stats;
  double tflops = 0;
  double speedup = 0;     // previous rung's median / this one's (0 for rung 0 or when unmeasured)
  double calc_diff = -1;  // -1 = not checked
  bool passed = false;
  std::string error;  // why there are no numbers, or why the check failed
};

struct LadderReport {
  ProblemShape shape;
  std::string hw_name;   // the ledger's hardware
  std::string gpu_name;  // empty when nothing was measured
  std::string commit, date_utc;
  std::string note;               // e.g. why nothing was measured
  std::int64_t checked_rows = 0;  // rows of D compared with the float64 reference
  double max_diff = 0;
  std::vector<LadderRow> rows;
  bool all_passed() const;  // every measured row passed and at least one was measured
};

// The ledger-only report (no GPU): rung descriptions and predicted traffic. Validates the sizes
// (InvalidArgument naming "--m", "--n", "--k"; K must be a multiple of 8).
LadderReport ledger_report(const LadderOptions& options, const HardwareModel& hw);

// Empty when a GPU that can run the sm_90a rungs is present, else one line saying why not.
std::string why_no_ladder_gpu(int device = 0);

// Measures every rung on fresh random inputs (CUDA events, L2 flush before each timed call, tilegemm::bench)
// and checks each against the float64 reference (sampled rows for large problems). A rung that throws is
// recorded in its row's error. Throws RuntimeError without a usable GPU.
LadderReport run_ladder(const LadderOptions& options);

std::string report_to_markdown(const LadderReport& report);
std::string report_to_json(const LadderReport& report);

}  // namespace tilegemm::ladder
