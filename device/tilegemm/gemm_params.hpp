#pragma once
// The parameter block of the SM90 GEMM kernels, shared verbatim by host code (which fills it) and device
// code (which receives it as one __grid_constant__ argument). Plain data only: no device-only constructs.

// Functions both host code and device code call.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TG_HOST_DEVICE __host__ __device__
#else
#define TG_HOST_DEVICE
#endif

namespace tilegemm {

// How a GEMM's work is cut across CTAs (values are stable: they appear in generated source and cache keys).
//   data-parallel: one CTA computes a whole output tile (the whole K range).
//   split-K:       every tile's K range is cut into `split_k` balanced slices, one work unit each.
//   stream-K:      the problem's tiles × K blocks are laid end to end and every CTA of the persistent grid
//                  takes an equal share of that sequence, so tiles are cut wherever the shares end. With two
//                  or more full waves of tiles, all full waves but the last are walked whole first, as in
//                  data-parallel, and only the rest is shared out (stream_k_whole_tiles below).
// Cut tiles are summed through an fp32 workspace (see SplitWorkspace below).
enum class GemmScheme : int { kDataParallel = 0, kSplitK = 1, kStreamK = 2 };

// An opaque CUtensorMap (the host encodes it with cuTensorMapEncodeTiled). A tensor map passed as a
// kernel parameter must be 64-byte aligned.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

struct GemmParams {
  TmaDescriptor tma_a;  // A as [batch][rows][K] (K-major) or [batch][K][rows] (MN-major), 3-D
  TmaDescriptor tma_b;  // B likewise with N rows
  TmaDescriptor tma_d;  // D as [batch][rows][N]
  // The tail: the last m-block when A's rows are not a multiple of BLOCK_M (decode, M < BLOCK_M: the only block).
  // A boxes reaching past A's last row, loaded every stage by every CTA of that block, made the whole call up to
  // twice as slow (measured on the H200), so the tail is loaded through a map whose box holds just its rows; the
  // tile's other shared-memory rows stay stale and only reach accumulator rows past the end, which are never stored.
  // D likewise: the consumer warpgroup whose rows contain D's last row stores through a map of just the rows left.
  // A tail map is used by the tile (row band) that starts exactly at its first row.
  TmaDescriptor tma_a_tail;  // box of a_tail_rows rows
  TmaDescriptor tma_d_tail;  // box of d_tail_rows rows
  // B's last n-block likewise, for a swap-AB BF16 kernel (whose B is the tokens) with K-major tokens and no cluster.
  TmaDescriptor tma_b_tail;      // box of b_tail_rows rows
  int a_tail_row0, a_tail_rows;  // a_tail_rows = 0: no tail (whole blocks or MN-major A)
  int d_tail_row0, d_tail_rows;  // d_tail_rows = 0: none
  int b_tail_row0, b_tail_rows;  // b_tail_rows = 0: none
  int m;                         // rows: of the whole problem, of one batch, or M_max per masked group
  int n;
  int k;
  int num_groups;  // batch count or group count (1 for a plain GEMM)
  // M-grouped contiguous: [m] group index per row (-1 = padding). M-grouped masked: [num_groups] valid
  // rows per group. Unused otherwise.
  const int* grouped_layout;
  // ---- split-K / stream-K only (unused and null for data-parallel) ----
  int split_k;  // split-K: slices per tile (1 otherwise)
  // fp32 partial tiles, each BLOCK_M × BLOCK_N floats in the kernel's accumulator-fragment order (private to
  // the kernel). Deterministic: one slot per (tile, slice) for split-K or per (CTA, first/last segment) for
  // stream-K, summed in slice order. Otherwise one slot per tile that can be cut (split-K: every tile; stream-K:
  // the shared ones) that every part reduce-adds into; the fix-up CTA leaves it zeroed again for the next launch.
  float* workspace;
  // One arrival counter per (tile that can be cut, math warpgroup): the part that arrives last sums the tile and
  // resets its counter to 0, so counters start (and end) every launch at zero without a memset.
  int* tile_counters;
  // ---- data-parallel M-grouped problems launched in chunks (sched/gemm_scheduler.cuh) ----
  // This launch's work units [unit_begin, unit_end): tile indices (2-CTA clusters: tile-pair indices) for
  // per-row contiguous problems, group indices for masked and prefix-sum ones. A long persistent kernel lets
  // its CTAs drift apart in K, and CTAs that share an operand panel then no longer read it from L2 at the
  // same time; a new launch every few waves starts them in step again. The defaults cover all the work.
  int unit_begin = 0;
  int unit_end = 0x7fffffff;
  // ---- int8 x int8 only: D = scale_a[m] · scale_b[n] · Σ a·b (fp32 per token and per channel) ----
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
};

// The tail maps (see GemmParams): whether the tile at row m0 loads A through tma_a_tail, and the map a consumer
// warpgroup whose rows start at m_row stores D through.
TG_HOST_DEVICE inline bool is_a_tail(const GemmParams& p, int m0) {
  return p.a_tail_rows > 0 && m0 == p.a_tail_row0;
}
TG_HOST_DEVICE inline bool is_b_tail(const GemmParams& p, int n0) {
  return p.b_tail_rows > 0 && n0 == p.b_tail_row0;
}
TG_HOST_DEVICE inline const TmaDescriptor* d_map_for_rows(const GemmParams& p, int m_row) {
  return p.d_tail_rows > 0 && m_row == p.d_tail_row0 ? &p.tma_d_tail : &p.tma_d;
}

}  // namespace tilegemm

namespace tilegemm {

// A and B tiles use the 128-byte swizzle: one swizzle atom row is 128 bytes of K (64 bf16, 128 e4m3), the widest
// a swizzled TMA box may be. Host (tensor-map boxes, legality) and device (loads, wgmma descriptors) share it.
constexpr int kOperandSwizzleBytes = 128;

// Stream-K: how many leading tiles every CTA walks whole, data-parallel, before the K blocks of the remaining tiles
// are shared out evenly: all full waves of the grid but the last (none under two full waves). Sharing only the
// last one to two waves keeps the data-parallel waves' L2 reuse (CTAs walk neighbouring tiles together) and cuts
// at most two tiles per CTA, while the tail still ends level (the Stream-K paper's "DP + SK" hybrid).
// Host (workspace sizing) and device (scheduler) both call this.
// (Templated on the integer type: the device computes it in 32 bits, where a 64-bit division costs registers.)
template <class Int>
TG_HOST_DEVICE constexpr Int stream_k_whole_tiles(Int tiles, Int grid) {
  return tiles / grid >= 2 ? (tiles / grid - 1) * grid : 0;
}

// The epilogue stages D in shared memory as column chunks whose rows are `d_chunk_bytes` wide and
// swizzled with the matching TMA mode (128B, 64B or 32B; a 16-byte chunk is stored unswizzled), so any BLOCK_N
// that is a multiple of 8 works (16-byte chunks only for bf16 D with BLOCK_N an odd multiple of 8).
// Host (tensor-map box) and device (addressing) both call this.
TG_HOST_DEVICE constexpr int d_chunk_bytes(int block_n, int d_elem_bytes) {
  const int row_bytes = block_n * d_elem_bytes;
  return row_bytes % 128 == 0 ? 128 : row_bytes % 64 == 0 ? 64 : row_bytes % 32 == 0 ? 32 : 16;
}

// The TMA swizzle mode of a D chunk that wide: 16-byte chunks have none (one 16-byte unit per row).
TG_HOST_DEVICE constexpr int d_chunk_swizzle_bytes(int chunk_bytes) {
  return chunk_bytes >= 32 ? chunk_bytes : 0;
}

}  // namespace tilegemm
