// The tail maps' rows (kernels/tail_maps.hpp): the last, partial block of rows of A or D gets a box of just its rows,
// so TMA never zero-fills rows past a tensor's end (decode, M < BLOCK_M, and ragged M).
#include <gtest/gtest.h>

#include "kernels/tail_maps.hpp"

using namespace tilegemm::kernels;

TEST(TailMaps, TheLastPartialBlockOfRows) {
  auto expect_tail = [](std::int64_t rows, int block, int row0, int count) {
    const RowTail t = row_tail(rows, block);
    EXPECT_EQ(t.row0, row0) << rows << " rows in blocks of " << block;
    EXPECT_EQ(t.rows, count) << rows << " rows in blocks of " << block;
  };
  expect_tail(1, 64, 0, 1);  // decode: the only block is the tail
  expect_tail(63, 64, 0, 63);
  expect_tail(64, 64, 0, 0);   // whole blocks: no tail
  expect_tail(65, 64, 64, 1);  // one row past a whole block
  expect_tail(129, 128, 128, 1);
  expect_tail(4095, 256, 3840, 255);
  expect_tail(8192, 128, 0, 0);
}
