// tilegemm command line: ledger, plan, bench, ladder, jit. Subcommands register themselves (command.hpp).
// Any user error ends with one line on stderr and exit status 2; never a stack trace.
#include <cstdio>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "shared_checks.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::cli {
std::vector<CommandAdder>& command_adders() {
  static std::vector<CommandAdder> adders;
  return adders;
}
}  // namespace tilegemm::cli

int main(int argc, char** argv) {
  CLI::App app{"tilegemm: a JIT GEMM library for NVIDIA Hopper, its performance ledger and benchmarks"};
  app.require_subcommand(1);
  try {
    for (auto& add : tilegemm::cli::command_adders()) add(app);
    tilegemm::cli::require_decimal_integers(app);  // every integer option of every command, in one place
    // A first word that names no command gets the list of commands (CLI11 would only ask for a subcommand).
    if (argc > 1 && argv[1][0] != '-') {
      std::string names;
      bool known = false;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        known = known || sub->check_name(argv[1]);
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      if (!known) throw tilegemm::InvalidArgument("command", "one of " + names, fmt::format("'{}'", argv[1]));
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "tilegemm: error: {}\n", e.what());
    return 2;
  } catch (const tilegemm::InvalidArgument& e) {
    fmt::print(stderr, "tilegemm: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilegemm: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
