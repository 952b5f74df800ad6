// The tilegemm command line as a whole: a first word that is no command is refused in one line that lists them.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

namespace {

TEST(CliMain, AnUnknownCommandListsTheCommands) {
  const cli_test::CliResult r = cli_test::run_cli("foo");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tilegemm: error: command: expected one of ", 0), 0u) << r.output;
  for (const char* name : {"ledger", "plan", "bench", "jit", "ladder"})
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'foo'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
}

TEST(CliMain, KnownCommandsAndHelpStillParse) {
  EXPECT_EQ(cli_test::run_cli("--help").status, 0);
  EXPECT_EQ(cli_test::run_cli("ledger --help").status, 0);
}

}  // namespace
