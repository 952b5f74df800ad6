#pragma once
// Reading TMA boxes written with the 128-byte swizzle: rows of 128 bytes whose 16-byte chunk c of row r sits at
// position c ^ (r % 8) (the box 1024-byte aligned, as the swizzle atom of 8 rows needs).
#include "tilegemm/prim/common.cuh"

namespace tilegemm::prim {

// Address of the 16-byte chunk `chunk` of row `row` in a 128-byte-swizzled box.
TG_DEVICE const u8* swizzled128(const u8* box, int row, int chunk) {
  return box + row * 128 + ((chunk ^ (row & 7)) << 4);
}

// ld.shared.v4.b32: 16 bytes from shared memory (16-byte aligned).
TG_DEVICE uint4 lds128(const u8* p) {
  return *reinterpret_cast<const uint4*>(p);
}

// Word i (0..3) of a 16-byte load; i must be a compile-time constant after unrolling to stay in registers.
TG_DEVICE u32 word_of(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

}  // namespace tilegemm::prim
