#pragma once
// The assertion every bad-input test makes: the call throws tilegemm::InvalidArgument naming `argument`, and
// its message contains `fragment` (by default "expected", which every such message carries).
#include <gtest/gtest.h>

#include <string>

#include "tilegemm/errors.hpp"

namespace test_util {

template <class F>
void expect_invalid(F&& f, const std::string& argument, const std::string& fragment = "expected") {
  try {
    f();
    FAIL() << "expected InvalidArgument naming " << argument;
  } catch (const tilegemm::InvalidArgument& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace test_util
