// Integer options of every command take plain decimal integers only. CLI11 reads base prefixes: "--m 0x40" was
// taken as 64 and "--m 010" as 8 (octal). One validator (tools/tilegemm/shared_checks.cpp) covers every integer
// option of every command; these check the sizes of each command and a few other integer options.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cli_runner.hpp"

namespace {

// One line, exit status 2, naming the option, the expectation and the value as typed.
void expect_not_decimal(const std::string& args, const std::string& option, const std::string& value) {
  SCOPED_TRACE("tilegemm " + args);
  const cli_test::CliResult r = cli_test::run_cli(args);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tilegemm: error: " + option + ": expected a plain decimal integer", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("got '" + value + "'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
}

TEST(CliIntegers, SizesOfEveryCommandMustBePlainDecimal) {
  for (const char* value : {"0x40", "010", "+64", "0b1000000", "64.0", "1e2"}) {
    const std::string v = value;
    expect_not_decimal("ledger --m " + v + " --n 64 --k 64", "--m", v);
    expect_not_decimal("ledger --m 64 --n " + v + " --k 64", "--n", v);
    expect_not_decimal("ledger --m 64 --n 64 --k=" + v, "--k", v);
    expect_not_decimal("plan --m " + v + " --n 2112 --k 7168", "--m", v);
    expect_not_decimal("bench --m 64 --n " + v + " --k 7168", "--n", v);
    expect_not_decimal("jit precompile --m 64 --n 2112 --k " + v, "--k", v);
    expect_not_decimal("ladder --m " + v + " --n 64 --k 64", "--m", v);
  }
}

TEST(CliIntegers, OtherIntegerOptionsToo) {
  expect_not_decimal("ledger --m 64 --n 64 --k 64 --grouped --batch 0x2", "--batch", "0x2");
  expect_not_decimal("ledger --m 64 --n 64 --k 64 --tile 128x128x64 --regs 0x20", "--regs", "0x20");
  expect_not_decimal("ledger --m 64 --n 64 --k 64 --num-sms 0100", "--num-sms", "0100");
  expect_not_decimal("plan --m 64 --n 2112 --k 7168 --gemm-type m_grouped_contiguous --num-groups 0x8", "--num-groups",
                     "0x8");
  expect_not_decimal("plan --m 64 --n 2112 --k 7168 --top 0x3", "--top", "0x3");
  expect_not_decimal("jit precompile --m 64 --n 2112 --k 7168 -j 0x2", "--jobs", "0x2");
  expect_not_decimal("bench --num-sms 0x40", "--num-sms", "0x40");
}

// Plain decimals still reach each command's own range checks (their messages, not the validator's).
TEST(CliIntegers, DecimalValuesStillReachTheRangeChecks) {
  cli_test::CliResult r = cli_test::run_cli("ledger --m 64 --n -5 --k 64");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--n: expected a positive integer"), std::string::npos) << r.output;
  r = cli_test::run_cli("plan --m 0 --n 2112 --k 7168");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.find("decimal"), std::string::npos) << r.output;
  r = cli_test::run_cli("ledger --m 0 --n 64 --k 64");
  EXPECT_NE(r.output.find("got 0"), std::string::npos) << r.output;
  EXPECT_EQ(cli_test::run_cli("ledger --m 64 --n 64 --k 64 --json").status, 0);
  EXPECT_EQ(cli_test::run_cli("plan --m 64 --n 2112 --k 7168 --top 2").status, 0);
}

}  // namespace

// A decimal integer past what the option's type holds: the option, its limit and the value (CLI11 said only
// "Could not convert: --m = 99999999999").
TEST(CliIntegers, ValuesPastAThirtyTwoBitOptionNameTheLimit) {
  const std::pair<const char*, const char*> cases[] = {
      {"plan --m 99999999999 --n 2112 --k 7168",
       "--m: expected a decimal integer at most 2147483647 (2^31 - 1), "
       "got 99999999999"},
      {"plan --m 64 --n 2112 --k 7168 --gemm-type m_grouped_contiguous --num-groups 3000000000",
       "--num-groups: expected a decimal integer at most 2147483647"},
      {"bench --m 64 --n 2112 --k 7168 --num-sms -3000000000",
       "--num-sms: expected a decimal integer at least "
       "-2147483648 (-2^31), got -3000000000"},
      {"jit precompile --m 64 --n 2112 --k 4294967296", "--k: expected a decimal integer at most 2147483647"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(std::string("tilegemm ") + args);
    const cli_test::CliResult r = cli_test::run_cli(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind(std::string("tilegemm: error: ") + message, 0), 0u) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
  }
}
