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

namespace {

// The subcommands of `app`, comma-separated.
std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// "jit precompile": the words that select `app` below the root ("" for the root).
std::string command_path(const CLI::App& app) {
  if (!app.get_parent()) return "";
  const std::string above = command_path(*app.get_parent());
  return above.empty() ? app.get_name() : above + " " + app.get_name();
}

// `app` needs a subcommand and `given` (nullptr: nothing) is none of them: one line listing them.
tilegemm::InvalidArgument no_subcommand(const CLI::App& app, const char* given) {
  return tilegemm::InvalidArgument(
      app.get_parent() ? command_path(app) : "command",
      app.get_parent() ? "a subcommand, one of " + subcommand_names(app) : "one of " + subcommand_names(app),
      given ? fmt::format("'{}'", given) : "nothing");
}

// The deepest subcommand the parse reached (the root when none).
const CLI::App& deepest_parsed(const CLI::App& app) {
  const CLI::App* cur = &app;
  while (!cur->get_subcommands().empty()) cur = cur->get_subcommands().front();
  return *cur;
}

std::string quoted_list(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "'" : " '") + a + "'";
  return out;
}

}  // namespace

// CLI11's "Could not convert: --m = 99999999999": a plain decimal integer (the decimal check ran first, and it
// refuses values past 64 bits) that a 32-bit option cannot hold. One line with the option, its limit and the value.
std::string conversion_message(const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const std::size_t eq = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), eq - prefix.size()), value = what.substr(eq + 3);
  const bool negative = !value.empty() && value[0] == '-';
  return fmt::format("{}: expected a decimal integer {}, got {}", name,
                     negative ? "at least -2147483648 (-2^31)" : "at most 2147483647 (2^31 - 1)", value);
}

int main(int argc, char** argv) {
  CLI::App app{"tilegemm: a JIT GEMM library for NVIDIA Hopper, its performance ledger and benchmarks"};
  app.require_subcommand(1);
  app.footer("tilegemm --version: the version, the commit it was built from and the CUDA it uses");
  if (argc == 2 && std::string(argv[1]) == "--version") {
    fmt::print("{}\n", tilegemm::cli::version_line());
    return 0;
  }
  try {
    for (auto& add : tilegemm::cli::command_adders()) add(app);
    // Every option of every command, in one place: no option as another's value, integers in plain decimal.
    tilegemm::cli::require_values_not_options(app);
    tilegemm::cli::require_decimal_integers(app);
    // A first word that names no command (or none at all, or an option: the root takes only --help) gets the
    // list of commands; CLI11 would only say "A subcommand is required".
    const std::string first = argc > 1 ? argv[1] : "";
    if (first != "--help" && first != "-h" && first != "--help-all") {
      bool known = false;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        known = known || (argc > 1 && sub->check_name(first));
      if (!known) throw no_subcommand(app, argc > 1 ? argv[1] : nullptr);
    }
    tilegemm::cli::reject_flag_values(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11's "The following argument was not expected: 0" names neither the command nor, for an empty
    // argument, anything; the arguments are listed quoted, in the order given.
    const CLI::App& cmd = deepest_parsed(app);
    std::vector<std::string> extras = app.remaining(true);
    fmt::print(stderr,
               "tilegemm: error: {}: expected options only (each --option with its value; see tilegemm {} "
               "--help), got the unexpected argument{} {}\n",
               cmd.get_parent() ? command_path(cmd) : "command", command_path(cmd), extras.size() == 1 ? "" : "s",
               quoted_list(extras));
    return 2;
  } catch (const CLI::RequiredError& e) {
    // "A subcommand is required" (tilegemm jit without precompile/info/...): list the subcommands.
    const CLI::App& cmd = deepest_parsed(app);
    if (cmd.get_require_subcommand_min() > 0 && cmd.get_subcommands().empty()) {
      const std::vector<std::string> rest = cmd.remaining();
      fmt::print(stderr, "tilegemm: error: {}\n",
                 no_subcommand(cmd, rest.empty() ? nullptr : rest.front().c_str()).what());
    } else {
      fmt::print(stderr, "tilegemm: error: {}\n", e.what());
    }
    return 2;
  } catch (const CLI::ConversionError& e) {
    fmt::print(stderr, "tilegemm: error: {}\n", conversion_message(e.what()));
    return 2;
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
