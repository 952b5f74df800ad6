#pragma once
// The schedule of the paged MQA-logits kernel (get_paged_mqa_logits_metadata), computed on the device from
// context_lens so the host never waits for them.
//
// Work units are (batch item b, KV block k) with k < kv_blocks(max_i context_lens[b, i]): all next_n rows of an
// item share each block. Laid end to end in (b, k) order they number `total`; partition s (one CTA of the logits
// kernel) takes units [partition_start(s), partition_start(s + 1)), so partitions differ by at most one block.
// The schedule [partitions + 1][2] holds where each partition starts as (b, k), always with k < the item's blocks
// (an empty item never holds a start); a partition starting at the end of the work (row `partitions`, and idle
// partitions when there are fewer units than partitions) holds (B, 0).
//
// One CTA: each thread sums the blocks of a contiguous run of items, a block-wide scan gives every run its first
// unit, and each thread then writes the starts that fall inside its run (each start falls in exactly one item).
#include "tilegemm/paged_mqa_logits_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"

namespace tilegemm {

namespace paged_mqa {

// Blocks of item b: its longest row's context.
TG_DEVICE int item_blocks(const int* context_lens, int next_n, int b) {
  int longest = 0;
  for (int i = 0; i < next_n; ++i) {
    const int len = __ldg(context_lens + static_cast<long long>(b) * next_n + i);
    longest = len > longest ? len : longest;
  }
  return kv_blocks(longest);
}

}  // namespace paged_mqa

template <int kThreads>
TG_DEVICE void sm90_paged_mqa_logits_metadata(const PagedMqaMetadataParams& p) {
  using namespace paged_mqa;
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one CTA");
  constexpr int kWarps = kThreads / 32;
  __shared__ long long warp_totals[kWarps];

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const long long parts = p.partitions;
  const auto write = [&](long long s, int b, int k) {
    p.schedule[2 * s] = b;
    p.schedule[2 * s + 1] = k;
  };
  prim::pdl_prologue_done();  // context_lens may come from the previous kernel

  // Thread tid owns items [b0, b1).
  const int per_thread = (p.batch + kThreads - 1) / kThreads;
  const int b0 = tid * per_thread < p.batch ? tid * per_thread : p.batch;
  const int b1 = b0 + per_thread < p.batch ? b0 + per_thread : p.batch;
  long long mine = 0;
  for (int b = b0; b < b1; ++b) mine += item_blocks(p.context_lens, p.next_n, b);

  // Exclusive scan of the runs' block counts: within each warp, then over the warps' totals.
  long long inclusive = mine;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const long long other = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  long long before_warp = 0, total = 0;
  for (int w = 0; w < kWarps; ++w) {
    before_warp += w < warp ? warp_totals[w] : 0;
    total += warp_totals[w];
  }
  const long long first_unit = before_warp + inclusive - mine;

  // Partitions starting at the end of the work (fewer units than partitions, and the end row itself).
  const long long idle_from = total == 0 ? 0 : first_partition_at(total, total, parts);
  for (long long s = idle_from + tid; s <= parts; s += kThreads) write(s, p.batch, 0);
  if (total == 0) return;
  long long unit = first_unit;  // the first unit of item b
  for (int b = b0; b < b1; ++b) {
    const int blocks = item_blocks(p.context_lens, p.next_n, b);
    for (long long s = first_partition_at(unit, total, parts);
         s < parts && partition_start(s, total, parts) < unit + blocks; ++s)
      write(s, b, static_cast<int>(partition_start(s, total, parts) - unit));
    unit += blocks;
  }
}

}  // namespace tilegemm
