#include <gtest/gtest.h>

#include "tilegemm/dtype.hpp"
#include "tilegemm/errors.hpp"

using namespace tilegemm;

TEST(DType, ParsesAliasesCaseInsensitively) {
  EXPECT_EQ(parse_dtype("BF16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("e4m3"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("float32"), DType::kFloat32);
  EXPECT_EQ(dtype_name(DType::kFloat8E4M3), "fp8");
  EXPECT_EQ(dtype_bits(DType::kInt4), 4);
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kFloat4E2M1, 10), 5.0);
}

TEST(DType, UnknownNameNamesTheArgument) {
  try {
    parse_dtype("fp7", "--a-dtype");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--a-dtype");
    EXPECT_NE(std::string(e.what()).find("'fp7'"), std::string::npos);
  }
}
