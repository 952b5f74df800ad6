#pragma once
// -inf around each logits row's window (DeepGEMM's clean_logits): row i of logits [rows, cols] gets -inf in
// [0, cols) outside [ks, ke) clamped to [0, cols), where ks = ks[i / next_n] (0 without ks) and
// ke = ke[i / next_n] - next_n + i % next_n + 1 (next_n = 1: ke[i]). The MQA-logits kernel writes exactly the window,
// so between them every element of [0, cols) is written once.
//
// A memory-bound fill: each warp takes a row (grid-stride over rows) and writes its two ranges with 16-byte stores,
// scalar stores only for the few elements before the first 16-byte boundary and after the last.
#include "tilegemm/mqa_logits_params.hpp"
#include "tilegemm/prim/common.cuh"
#include "tilegemm/prim/sync.cuh"

namespace tilegemm {

namespace clean_logits {

// Elements [begin, end) of a row of kElem-byte elements (the row pointer element-aligned), -inf, by one warp.
template <int kElem>
TG_DEVICE void fill_neg_inf(u8* row, int begin, int end, int lane) {
  constexpr int kVec = 16 / kElem;
  constexpr u32 kWord = kElem == 4 ? 0xff800000u : 0xff80ff80u;  // -inf in fp32, two -inf in bf16
  if (begin >= end) return;
  const auto first = reinterpret_cast<unsigned long long>(row) + static_cast<unsigned long long>(begin) * kElem;
  const int head = min(static_cast<int>((16 - first % 16) % 16) / kElem, end - begin);
  const int body = begin + head;
  const int vectors = (end - body) / kVec;
  const int tail = body + vectors * kVec;
  const auto scalar = [&](int e) {
    if constexpr (kElem == 4)
      reinterpret_cast<u32*>(row)[e] = kWord;
    else
      reinterpret_cast<u16*>(row)[e] = static_cast<u16>(kWord);
  };
  if (lane < head) scalar(begin + lane);
  if (lane < end - tail) scalar(tail + lane);
  uint4* vec = reinterpret_cast<uint4*>(row + static_cast<long long>(body) * kElem);
  for (int v = lane; v < vectors; v += 32) vec[v] = make_uint4(kWord, kWord, kWord, kWord);
}

}  // namespace clean_logits

// kBf16: bf16 logits (else fp32).
template <bool kBf16>
TG_DEVICE void sm90_clean_logits(const CleanLogitsParams& p) {
  constexpr int kElem = kBf16 ? 2 : 4;
  prim::pdl_prologue_done();
  const int warp = static_cast<int>(warp_uniform(threadIdx.x / 32)), lane = static_cast<int>(threadIdx.x % 32);
  const int stride = static_cast<int>(gridDim.x) * mqa_logits::kCleanWarps;
  for (int i = static_cast<int>(blockIdx.x) * mqa_logits::kCleanWarps + warp; i < p.rows; i += stride) {
    const int b = i / p.next_n;
    const int ks = p.ks != nullptr ? __ldg(p.ks + b) : 0;
    const long long ke = static_cast<long long>(__ldg(p.ke + b)) - p.next_n + i % p.next_n + 1;
    const int lo = min(max(ks, 0), p.cols);
    const int hi = static_cast<int>(min(max(ke, static_cast<long long>(lo)), static_cast<long long>(p.cols)));
    u8* row = static_cast<u8*>(p.logits) + static_cast<long long>(i) * p.logits_stride * kElem;
    clean_logits::fill_neg_inf<kElem>(row, 0, lo, lane);
    clean_logits::fill_neg_inf<kElem>(row, hi, p.cols, lane);
  }
}

}  // namespace tilegemm
