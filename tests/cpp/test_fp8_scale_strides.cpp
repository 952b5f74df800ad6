// The FP8 GEMMs take per-token and per-block scales in any non-negative strides (through TMA when MN-major, else
// element by element), so DeepGEMM's row-major quantiser output needs no layout pass. With N = 0 the calls
// validate every argument and return before any device access, so these views point at a host buffer never read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/scale_layout.hpp"
#include "kernels/tma_views.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/fp8_gemm.hpp"

using namespace tilegemm;

namespace {

constexpr std::int64_t kM = 64, kK = 256, kKb = 2;

struct Views {
  std::vector<float> storage = std::vector<float>(1 << 14);
  void* base() { return storage.data(); }
  TensorView a = TensorView::matrix(base(), DType::kFloat8E4M3, kM, kK, kK);
  TensorView b = TensorView::matrix(base(), DType::kFloat8E4M3, 0, kK, kK);  // N = 0: nothing to launch
  TensorView d_bf16 = TensorView::matrix(base(), DType::kBFloat16, kM, 0, 8);
  TensorView d_f32 = TensorView::matrix(base(), DType::kFloat32, kM, 0, 4);
  TensorView sfb_block = TensorView::matrix(base(), DType::kFloat32, 0, kKb, kKb);
  TensorView sfb_token = TensorView::matrix(base(), DType::kFloat32, 0, kKb, kKb);
};

// The argument the call rejects, or "(accepted)".
template <class Call>
std::string rejected(Call&& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "(accepted)";
}

TEST(Fp8ScaleStrides, RowMajorPerTokenScalesAreAccepted) {
  Views v;
  // [M, kb] row-major, as per_token_cast_to_fp8 returns them (was refused: "MN-major scales").
  const TensorView row_major = TensorView::matrix(v.base(), DType::kFloat32, kM, kKb, kKb);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, row_major, v.b, v.sfb_block, v.d_bf16); }), "(accepted)");
  EXPECT_EQ(rejected([&] { fp8_gemm_1d1d(v.a, row_major, v.b, v.sfb_token, v.d_f32, nullptr); }), "(accepted)");
  // MN-major and TMA-aligned still reads.
  const TensorView mn_major = TensorView::matrix(v.base(), DType::kFloat32, kM, kKb, 1, kM);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, mn_major, v.b, v.sfb_block, v.d_bf16); }), "(accepted)");
  // A column of a wider buffer: rows strided, K blocks strided, neither TMA-aligned.
  const TensorView strided = TensorView::matrix(v.base(), DType::kFloat32, kM, kKb, 7, 3);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, strided, v.b, v.sfb_block, v.d_bf16); }), "(accepted)");
}

TEST(Fp8ScaleStrides, NegativeStridesAndMisalignedPointersAreRefused) {
  Views v;
  TensorView negative = TensorView::matrix(v.base(), DType::kFloat32, kM, kKb, kKb);
  negative.strides[0] = -kKb;
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, negative, v.b, v.sfb_block, v.d_bf16); }), "sfa");
  TensorView misaligned = TensorView::matrix(static_cast<char*>(v.base()) + 2, DType::kFloat32, kM, kKb, kKb);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, misaligned, v.b, v.sfb_block, v.d_bf16); }), "sfa");
  TensorView block_negative = v.sfb_block;
  block_negative.strides[1] = -1;
  EXPECT_EQ(rejected([&] {
              fp8_gemm_1d2d(v.a, TensorView::matrix(v.base(), DType::kFloat32, kM, kKb, kKb), v.b, block_negative,
                            v.d_bf16);
            }),
            "sfb");
}

TEST(Fp8ScaleStrides, ShapesAreStillChecked) {
  Views v;
  const TensorView short_rows = TensorView::matrix(v.base(), DType::kFloat32, kM - 1, kKb, kKb);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, short_rows, v.b, v.sfb_block, v.d_bf16); }), "sfa");
  const TensorView wrong_blocks = TensorView::matrix(v.base(), DType::kFloat32, kM, kKb + 1, kKb + 1);
  EXPECT_EQ(rejected([&] { fp8_gemm_1d2d(v.a, wrong_blocks, v.b, v.sfb_block, v.d_bf16); }), "sfa");
}

// Which way the kernel reads a per-token scale view: TMA for MN-major, TMA-aligned columns, element-wise copies else.
TEST(Fp8ScaleStrides, LayoutFollowsStridesAndAlignment) {
  using kernels::as_3d;
  using kernels::per_token_scale_layout;
  alignas(16) static float buffer[4096];
  // MN-major and TMA-aligned, as get_mn_major_tma_aligned_tensor returns (rows padded to 4).
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 65, 3, 1, 68))),
            ScaleLayout::kMnMajor);
  // A single K block, and a single row whose K-block stride is 16-byte aligned: TMA columns too.
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 64, 1, 1))),
            ScaleLayout::kMnMajor);
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 1, 56, 8, 4))),
            ScaleLayout::kMnMajor);
  // Grouped MN-major with 16-byte group strides.
  EXPECT_EQ(per_token_scale_layout(TensorView::batched(buffer, DType::kFloat32, 3, 10, 8, 96, 1, 12)),
            ScaleLayout::kMnMajor);
  // Row-major [M, kb], per_token_cast_to_fp8's output (kb 56 for K = 7168: 16-byte rows), and one such row: TMA
  // boxes of four K blocks; grouped row-major with 16-byte group strides likewise.
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 64, 56, 56))),
            ScaleLayout::kRowMajor);
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 1, 56, 56))),
            ScaleLayout::kRowMajor);
  EXPECT_EQ(per_token_scale_layout(TensorView::batched(buffer, DType::kFloat32, 3, 10, 8, 80, 8, 1)),
            ScaleLayout::kRowMajor);
  // Row-major rows that are not 16-byte aligned (kb 3 for K = 272; kb 58 for K = 7424): copied.
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 64, 3, 3))),
            ScaleLayout::kStrided);
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 64, 58, 58))),
            ScaleLayout::kStrided);
  // MN-major columns not 16-byte aligned (65 rows unpadded), and a base 4 bytes off 16.
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer, DType::kFloat32, 65, 3, 1, 65))),
            ScaleLayout::kStrided);
  EXPECT_EQ(per_token_scale_layout(as_3d(TensorView::matrix(buffer + 1, DType::kFloat32, 64, 3, 1, 64))),
            ScaleLayout::kStrided);
  // Row-major boxes only where they measured faster than the copies, in the GEMM types the GPU tests ran them in.
  using kernels::preferred_sfa_layout;
  constexpr ScaleLayout kRow = ScaleLayout::kRowMajor, kCopy = ScaleLayout::kStrided;
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kNormal, 64, 7168), kRow);     // long K, any M
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kNormal, 4096, 2048), kRow);   // medium K, large M
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kNormal, 128, 2048), kCopy);   // medium K, small M
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kBatched, 4096, 512), kCopy);  // short K
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kMGroupedContiguous, 32768, 7168), kRow);
  EXPECT_EQ(preferred_sfa_layout(kRow, GemmType::kMGroupedMasked, 4096, 7168), kCopy);  // not GPU-tested with boxes
  EXPECT_EQ(preferred_sfa_layout(ScaleLayout::kMnMajor, GemmType::kNormal, 64, 512), ScaleLayout::kMnMajor);
  EXPECT_EQ(preferred_sfa_layout(kCopy, GemmType::kNormal, 4096, 7168), kCopy);
  // A group stride that is not a multiple of 16 bytes.
  EXPECT_EQ(per_token_scale_layout(TensorView::batched(buffer, DType::kFloat32, 3, 10, 8, 97, 1, 12)),
            ScaleLayout::kStrided);
}

}  // namespace
