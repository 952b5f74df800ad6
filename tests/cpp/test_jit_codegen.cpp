// Codegen with named fields (src/jit/codegen.hpp).
#include <gtest/gtest.h>

#include "jit/codegen.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::jit {
namespace {

TEST(JitCodegen, SubstitutesNamedFieldsAsCppLiterals) {
  CodeFields f;
  f.set("BLOCK_M", 128)
      .set("STAGES", 4u)
      .set("SWAP", true)
      .set("D_TYPE", DType::kBFloat16)
      .set("MAJOR", Major::kMNMajor)
      .set("TYPE", GemmType::kMGroupedMasked);
  const std::string out =
      substitute("f<${BLOCK_M}, ${STAGES}, ${SWAP}, ${D_TYPE}, ${MAJOR}, ${TYPE}>(){ return {}; }", f);
  EXPECT_EQ(out,
            "f<128, 4u, true, ::tilegemm::DType::kBFloat16, ::tilegemm::Major::kMNMajor, "
            "::tilegemm::GemmType::kMGroupedMasked>(){ return {}; }");
}

TEST(JitCodegen, DesignatedInitializerKeepsInsertionOrder) {
  CodeFields f;
  f.set("block_m", 64).set("block_n", 256).set_raw("epilogue", "Epilogue::kStore");
  EXPECT_EQ(designated_init(f), "{.block_m = 64, .block_n = 256, .epilogue = Epilogue::kStore}");
}

TEST(JitCodegen, UnknownPlaceholderIsAnError) {
  CodeFields f;
  f.set("BLOCK_M", 128);
  try {
    substitute("${BLOCK_M} ${BLOCK_N}", f);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("${BLOCK_N}"), std::string::npos) << e.what();
  }
}

TEST(JitCodegen, UnusedFieldIsAnError) {
  CodeFields f;
  f.set("BLOCK_M", 128).set("BLOCK_MM", 64);
  EXPECT_THROW(substitute("${BLOCK_M}", f), InvalidArgument);
}

TEST(JitCodegen, RejectsBadOrRepeatedNames) {
  CodeFields f;
  EXPECT_THROW(f.set("1abc", 1), InvalidArgument);
  EXPECT_THROW(f.set("a-b", 1), InvalidArgument);
  f.set("a", 1);
  EXPECT_THROW(f.set("a", 2), InvalidArgument);
  EXPECT_THROW(substitute("${a", f), InvalidArgument);
}

}  // namespace
}  // namespace tilegemm::jit
