// The TMA boxes the SM90 kernels load and store through: a tile taller than the tensor is cut to the tensor's rows
// (decode, M < BLOCK_M), so TMA never zero-fills rows past the end.
#include <gtest/gtest.h>

#include "kernels/tma_views.hpp"

using namespace tilegemm;
using namespace tilegemm::kernels;

TEST(TmaViews, BoxRowsAreTheTileOrTheTensorsRowsWhenFewer) {
  EXPECT_EQ(fitted_box_rows(64, 1), 1);
  EXPECT_EQ(fitted_box_rows(64, 33), 33);
  EXPECT_EQ(fitted_box_rows(64, 64), 64);
  EXPECT_EQ(fitted_box_rows(64, 65), 64);
  EXPECT_EQ(fitted_box_rows(128, 4096), 128);
  EXPECT_EQ(fitted_box_rows(64, 0), 1);  // an empty masked group's tensor still needs a valid box
}

TEST(TmaViews, FittedRowsReachTheBoxesOfAAndD) {
  int dummy = 0;
  const TensorView a = as_3d(TensorView::matrix(&dummy, DType::kBFloat16, 5, 7168, 7168));
  const TmaView a_view = operand_view(a, Major::kKMajor, fitted_box_rows(64, a.size(1)), 128);
  EXPECT_EQ(a_view.box[0], 64u);  // one 128-byte K atom of bf16
  EXPECT_EQ(a_view.box[1], 5u);
  EXPECT_EQ(a_view.dims[1], 5u);

  const TensorView d = as_3d(TensorView::matrix(&dummy, DType::kBFloat16, 5, 2112, 2112));
  const TmaView d_view = output_view(d, 16, fitted_box_rows(64, d.size(1)));
  EXPECT_EQ(d_view.box[1], 5u);
}
