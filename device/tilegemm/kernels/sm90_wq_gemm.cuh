#pragma once
// Weight-only quantised GEMM for small M: D[M, N] = A[M, K] · Wᵀ with W packed as int4, int8 or MXFP4 codes
// (layout: wq_params.hpp), decoded in registers between shared memory and the tensor core.
//
// At small M the GEMM is bound by reading W, so it is computed transposed: Dᵀ = W · Aᵀ, W's rows on the mma's M
// (decoded straight into A registers of mma.sync.m16n8k16, no shared-memory round trip of decoded values) and the
// tokens on its N (8 per n-tile). A CTA owns BLOCK_N = 64 weight rows (one 16-row block per consumer warp), BLOCK_M
// tokens and one K slice (split). One producer lane streams each stage's [BLOCK_M x 256] activations with TMA
// (128-byte swizzle) and each row block's 256 k of codes, scales and zero points with plain bulk copies (the
// packed layout makes each of them one contiguous run). A consumer lane reads one 16-byte word of codes per
// 64 k (two for int8) and, per n-tile, two 16-byte words of its token's activations covering the same 16 k
// (the K order the packer chose, so the products pair up), decodes four steps of A registers and issues the mmas.
// Splits > 1 write fp32 partial tiles; the last CTA of a tile adds them in split order and writes D.
// K groups (k_group_sum.cuh): kKGroups sets of four consumer warps take turns at the ring's slots.
#include "tilegemm/kernels/k_group_sum.cuh"
#include "tilegemm/kernels/transposed_tile_store.cuh"
#include "tilegemm/kernels/wq_decode.cuh"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/global_memory.cuh"
#include "tilegemm/prim/mma_sync.cuh"
#include "tilegemm/prim/swizzle.cuh"
#include "tilegemm/prim/sync.cuh"
#include "tilegemm/prim/tma.cuh"
#include "tilegemm/shared_enums.hpp"
#include "tilegemm/wq_params.hpp"

namespace tilegemm {

namespace wq {

// Named barriers (0 is __syncthreads): set 0's consumer warps (the store), every consumer warp (the K groups' sum).
enum class Barrier : u32 { kConsumers = 1, kKGroups = 2 };

}  // namespace wq

// kFormat / kGroup / kHasZeros: the weight's packing (kGroup 0 for int8). kHalf: A is fp16 (else bf16).
// kBlockM: tokens per CTA (8..64). kStages: ring depth. kKGroups: sets of consumer warps (1, 2, 4). kOut: D's dtype.
// kReduce: splits summed in the kernel (dense only). kType: dense (kNormal), or M-grouped over experts: contiguous
// (each token block's expert from grouped_layout) or masked (blockIdx.y's expert, its token blocks walked by the CTA up
// to masked_m).
template <WeightFormat kFormat, int kGroup, bool kHasZeros, bool kHalf, int kBlockM, int kStages, int kKGroups,
          DType kOut, bool kReduce, GemmType kType = GemmType::kNormal>
TG_DEVICE void sm90_wq_gemm(const WqGemmParams& p) {
  using namespace wq;
  constexpr bool kInt4 = kFormat == WeightFormat::kInt4, kInt8 = kFormat == WeightFormat::kInt8;
  constexpr bool kMx = kFormat == WeightFormat::kMxfp4;
  constexpr bool kMasked = kType == GemmType::kMGroupedMasked;
  static_assert(!kInt4 || kGroup == 32 || kGroup == 64 || kGroup == 128, "int4 groups are 32, 64 or 128 k");
  static_assert(!kMx || (kGroup == kMxGroup && !kHalf), "MXFP4 has groups of 32 and bf16 activations");
  static_assert(!kInt8 || kGroup == 0, "int8 weights have per-row scales");
  static_assert(!kHasZeros || kInt4, "only int4 weights have zero points");
  static_assert(kBlockM % 8 == 0 && kBlockM >= 8 && kBlockM <= 64, "BLOCK_M is 8..64 tokens, whole n-tiles");
  static_assert(kStages >= 2, "the ring needs at least two stages");
  static_assert(kKGroups == 1 || kKGroups == 2 || kKGroups == 4, "1, 2 or 4 sets of consumer warps");
  // A slot shared by two sets would let one wait on a fill two phases ahead, which a parity wait reads as done.
  static_assert(kStages % kKGroups == 0, "each ring slot serves one set of consumer warps");
  static_assert(kOut == DType::kBFloat16 || kOut == DType::kFloat16 || kOut == DType::kFloat32, "D is 16- or 32-bit");
  static_assert(kType == GemmType::kNormal || kType == GemmType::kMGroupedContiguous || kMasked,
                "dense, M-grouped contiguous or M-grouped masked");
  static_assert(!kReduce || kType == GemmType::kNormal, "splits are summed in the kernel for dense GEMMs only");
  constexpr int kNTiles = kBlockM / 8;
  constexpr int kGroupK = kMx ? kMxGroup : kGroup;
  constexpr int kGroupsPerStage = groups_per_stage(kFormat, kGroup);
  constexpr int kCodeBytes = code_bytes_per_block(kFormat);
  constexpr int kBoxBytes = kBlockM * 128;  // one chunk's [BLOCK_M][64] activations
  constexpr int kActBytes = act_stage_bytes(kBlockM);
  constexpr int kCodesPerRb = kChunksPerStage * kCodeBytes;
  constexpr int kEntryBytes = scale_entry_bytes(kFormat);  // int4 scales: 2 bytes; MXFP4 exponents: 1
  constexpr int kScalesPerRb = kGroupsPerStage * kRowBlock * kEntryBytes;
  constexpr int kZerosPerRb = kHasZeros ? kGroupsPerStage * kRowBlock : 0;
  constexpr int kScaleOffset = kActBytes + kConsumerWarps * kCodesPerRb;
  constexpr int kZeroOffset = kScaleOffset + kConsumerWarps * kScalesPerRb;
  constexpr int kStageBytes = stage_bytes(kFormat, kGroup, kHasZeros, kBlockM);
  // int4 groups of >= 64 k cover a whole chunk: its products sum unscaled in fp32 and are scaled once (fewer
  // multiplies than scaling each decoded weight while the accumulators are few).
  constexpr bool kScaleOnAccum = kInt4 && kGroup >= kChunkK && kBlockM <= 16;
  constexpr int kComputeWarps = kConsumerWarps * kKGroups;
  using SetSum = KGroupSum<kConsumerWarps, kKGroups, kNTiles>;

  extern __shared__ u8 smem_raw[];
  // Aligned by an offset (not an integer round trip) so the compiler still knows these are shared-memory loads.
  u8* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  auto* barriers = reinterpret_cast<prim::StageBarriers<kStages>*>(smem + kStages * kStageBytes);
  int* last_flag = reinterpret_cast<int*>(barriers + 1);
  float* set_scratch = reinterpret_cast<float*>(reinterpret_cast<u8*>(last_flag) + 16);  // [set - 1][warp][float][lane]

  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32));
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int tile = static_cast<int>(blockIdx.x) / p.num_splits;
  const int split = static_cast<int>(blockIdx.x) % p.num_splits;
  const int n_block = tile / p.m_blocks;
  const int row_blocks = ceil_div(p.n, kRowBlock);
  const int first_rb = n_block * kConsumerWarps;
  // Balanced K slices in whole stages: split s takes stages [s·S/splits, (s+1)·S/splits).
  const int total_stages = ceil_div(p.k_chunks, kChunksPerStage);
  const int stage_begin = split * total_stages / p.num_splits;
  const int stage_end = (split + 1) * total_stages / p.num_splits;

  if (threadIdx.x == 0) {
    barriers->init(kConsumerWarps);
    prim::fence_barrier_init();
    prim::tma_prefetch_descriptor(&p.tma_a);
  }
  __syncthreads();
  // NOTE: after the dependency wait: masked_m and grouped_layout may come from the previous kernel.
  prim::pdl_prologue_done();

  // The CTA's expert and token blocks: m0 from m_first while below m_end, one block apart (one block unless masked).
  int expert = 0, m_first = (tile % p.m_blocks) * kBlockM, m_end = min(p.m, m_first + kBlockM);
  if constexpr (kMasked) {
    expert = static_cast<int>(blockIdx.y);
    m_first = 0, m_end = min(p.m, p.masked_m[expert]);
  } else if constexpr (kType == GemmType::kMGroupedContiguous) {
    expert = p.grouped_layout[m_first];  // each group's rows are aligned to whole token blocks
    if (expert < 0) return;              // padding rows: D's rows there are left as they are
  }
  const u8* data = p.data + expert * p.data_group_bytes;
  const u8* scales_g = static_cast<const u8*>(p.scales) + expert * p.scale_group_bytes;
  const u8* zeros_g = p.zeros + expert * p.zero_group_bytes;
  const float* channel = p.channel_scales + static_cast<long long>(expert) * p.channel_group;
  void* d = static_cast<char*>(p.d) + expert * p.d_group_bytes;
  const int a_batch = kMasked ? expert : 0;

  if (warp == kComputeWarps) {  // producer: one lane issues every stage's copies
    if (prim::elect_one_sync()) {
      const int rbs = min(kConsumerWarps, row_blocks - first_rb);  // row blocks of this CTA inside the weight
      prim::PipelineState<kStages> st;
      for (int m0 = m_first; m0 < m_end; m0 += kBlockM) {
        for (int ks = stage_begin; ks < stage_end; ++ks, st.advance()) {
          const int c0 = ks * kChunksPerStage;
          const int chunks = min(kChunksPerStage, p.k_chunks - c0);  // the last stage may be short
          const int groups = kGroupsPerStage * chunks / kChunksPerStage;
          int g0 = 0;  // first group of the stage
          if constexpr (kGroupK > 0) g0 = c0 * kChunkK / kGroupK;
          const u32 bytes = static_cast<u32>(
              chunks * kBoxBytes + rbs * (chunks * kCodeBytes + groups * kRowBlock * (kEntryBytes + kHasZeros)));
          barriers->producer_acquire(st);
          u64* full = &barriers->inputs_arrived[st.index];
          prim::mbarrier_arrive_expect_tx(full, bytes);
          u8* stage = smem + st.index * kStageBytes;
          for (int c = 0; c < chunks; ++c)
            prim::tma_load_3d(&p.tma_a, full, stage + c * kBoxBytes, (c0 + c) * kChunkK, m0, a_batch);
          for (int rb = 0; rb < rbs; ++rb) {
            const long long rb_index = first_rb + rb;
            prim::bulk_load(stage + kActBytes + rb * kCodesPerRb, data + (rb_index * p.k_chunks + c0) * kCodeBytes,
                            static_cast<u32>(chunks * kCodeBytes), full);
            if constexpr (kGroupsPerStage > 0) {
              const long long entry = (rb_index * p.groups + g0) * kRowBlock;
              prim::bulk_load(stage + kScaleOffset + rb * kScalesPerRb, scales_g + entry * kEntryBytes,
                              static_cast<u32>(groups * kRowBlock * kEntryBytes), full);
              if constexpr (kHasZeros)
                prim::bulk_load(stage + kZeroOffset + rb * kZerosPerRb, zeros_g + entry,
                                static_cast<u32>(groups * kRowBlock), full);
            }
          }
        }
      }
    }
    return;
  }

  // Consumers: warp `rbw` of set `set`. Lane (g, t): rows g and g + 8 of this warp's row block, k [16t, 16t + 16) of
  // every chunk, token 8j + g of n-tile j (as the mma's B) and tokens 8j + 2t, 8j + 2t + 1 of its accumulators.
  const int g = lane / 4, t = lane % 4;
  const int set = warp / kConsumerWarps, rbw = warp % kConsumerWarps;
  const bool active = first_rb + rbw < row_blocks;  // warps past the last row block only keep the ring turning
  // Per-row factors: int8's channel scales, MXFP4's exponent shift (channel scales have n_pad entries per expert).
  const int row_lo = (first_rb + rbw) * kRowBlock + g, row_hi = row_lo + 8;
  const float f_lo = active ? row_factor<kFormat>(channel, p.exp_shift, row_lo) : 0.f;
  const float f_hi = active ? row_factor<kFormat>(channel, p.exp_shift, row_hi) : 0.f;
  prim::PipelineState<kStages> st;
  for (int m0 = m_first; m0 < m_end; m0 += kBlockM) {
    float acc[kNTiles][4] = {};
    for (int ks = stage_begin; ks < stage_end; ++ks, st.advance()) {
      if (!SetSum::owns(st.index, set)) continue;  // another set's stage
      barriers->consumer_wait(st);
      const int chunks = min(kChunksPerStage, p.k_chunks - ks * kChunksPerStage);
      const u8* stage = smem + st.index * kStageBytes;
      const u8* codes = stage + kActBytes + rbw * kCodesPerRb;
      const u8* scales = stage + kScaleOffset + rbw * kScalesPerRb;
      const u8* zeros = stage + kZeroOffset + rbw * kZerosPerRb;
#pragma unroll
      for (int c = 0; c < kChunksPerStage; ++c) {
        if (!active || c >= chunks) break;
        const u8* box = stage + c * kBoxBytes;
        uint4 act[kNTiles][2];
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          act[j][0] = prim::lds128(prim::swizzled128(box, 8 * j + g, 2 * t));
          act[j][1] = prim::lds128(prim::swizzled128(box, 8 * j + g, 2 * t + 1));
        }
        LaneCodes<kFormat, kGroup, kHasZeros, kHalf, !kScaleOnAccum> w;
        w.load_codes(codes + c * kCodeBytes, lane);
        if constexpr (!kInt8) w.load_entries(scales, zeros, lane_entry<kGroupK>(c, t, g), p.exp_shift);

        float part[kNTiles][4] = {};  // kScaleOnAccum: this chunk's unscaled products
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          u32 a[4];
          w.step(s, a);
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) {
            // k 16t + 4s .. 16t + 4s + 3: words 2(s % 2) and 2(s % 2) + 1 of the lane's 16-byte load s / 2.
            const u32 b[2] = {prim::word_of(act[j][s / 2], 2 * (s % 2)), prim::word_of(act[j][s / 2], 2 * (s % 2) + 1)};
            prim::mma_m16n8k16<kHalf>(kScaleOnAccum ? part[j] : acc[j], a, b);
          }
        }
        if constexpr (kScaleOnAccum) {
          const float s_lo = w.scale_lo(), s_hi = w.scale_hi();
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) {
            acc[j][0] = fmaf(s_lo, part[j][0], acc[j][0]), acc[j][1] = fmaf(s_lo, part[j][1], acc[j][1]);
            acc[j][2] = fmaf(s_hi, part[j][2], acc[j][2]), acc[j][3] = fmaf(s_hi, part[j][3], acc[j][3]);
          }
        }
      }
      __syncwarp();
      if (lane == 0) barriers->consumer_release(st.index);
    }

    if (!SetSum::sum(acc, set_scratch, set, rbw, lane, static_cast<u32>(Barrier::kKGroups)))
      continue;  // set 0 stores the tile
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) acc[j][0] *= f_lo, acc[j][1] *= f_lo, acc[j][2] *= f_hi, acc[j][3] *= f_hi;

    const TransposedTileStore<kBlockM, kConsumerWarps, kOut> out{d,   p.ldd, m0,  m_end, first_rb * kRowBlock,
                                                                 p.n, rbw,   lane};
    if constexpr (!kReduce) {
      if (active) out.store(acc);
    } else {
      out.reduce(acc, active, p.partials, p.counters, tile, split, p.num_splits, last_flag,
                 static_cast<u32>(Barrier::kConsumers));
    }
  }
}

}  // namespace tilegemm
