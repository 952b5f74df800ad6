#include "shared_checks.hpp"

#include <cctype>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::cli {

std::string check_decimal_integer(const std::string& text) {
  const std::size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::string digits = text.substr(start);
  const bool all_digits = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  // A leading zero is refused rather than read: CLI11 would take "010" as octal 8.
  const bool leading_zero = digits.size() > 1 && digits[0] == '0';
  if (all_digits && !leading_zero) {
    // Beyond 64 bits CLI11 saturates (99999999999999999999 became 9223372036854775807, and the range check
    // then quoted that number): refuse it here, quoted as typed.
    const std::string limit = start ? "9223372036854775808" : "9223372036854775807";
    if (digits.size() < limit.size() || (digits.size() == limit.size() && digits <= limit)) return "";
    return fmt::format("expected an integer in 64 bits (-2^63 to 2^63 - 1), got '{}'", text);
  }
  return fmt::format("expected a plain decimal integer such as 64 (no 0x/0 prefix, '+' or spaces), got '{}'", text);
}

std::string check_not_an_option(const std::string& text) {
  const bool option =
      text.size() > 2 && text[0] == '-' && text[1] == '-' && std::isalpha(static_cast<unsigned char>(text[2]));
  if (!option) return "";
  return fmt::format("expected a value, got the option '{}' (is the value missing?)", text);
}

void require_values_not_options(CLI::App& app) {
  static const CLI::Validator not_an_option([](std::string& text) { return check_not_an_option(text); }, "",
                                            "not an option");
  for (CLI::Option* option : app.get_options())
    if (option->get_items_expected_min() > 0) option->check(not_an_option);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) require_values_not_options(*sub);
}

void require_decimal_integers(CLI::App& app) {
  static const CLI::Validator decimal([](std::string& text) { return check_decimal_integer(text); }, "",
                                      "decimal integer");
  for (CLI::Option* option : app.get_options())
    if (option->get_type_name() == "INT" || option->get_type_name() == "UINT") option->check(decimal);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) require_decimal_integers(*sub);
}

namespace {
bool is_flag_of(const CLI::App& app, const std::string& long_name) {
  for (const CLI::Option* option : app.get_options())
    if (option->get_items_expected_max() == 0 && option->check_lname(long_name)) return true;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (is_flag_of(*sub, long_name)) return true;
  return false;
}
}  // namespace

void reject_flag_values(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos || eq == 2) continue;
    if (is_flag_of(app, arg.substr(2, eq - 2)))
      throw InvalidArgument(arg.substr(0, eq), "no value (a flag is given alone)",
                            fmt::format("'{}'", arg.substr(eq + 1)));
  }
}

void with_option_names(const OptionNames& options, const std::function<void()>& body) {
  try {
    body();
  } catch (const InvalidArgument& e) {
    for (const auto& [field, option] : options) {
      if (e.argument() != field) continue;
      // what() is "<argument>: expected ..., got ..."; keep all after the argument. A CLI11 ValidationError
      // prints as "<option>: <rest>" and main turns it into exit status 2.
      const std::string rest = std::string(e.what()).substr(field.size() + 2);
      throw CLI::ValidationError(option, rest);
    }
    throw;
  }
}

}  // namespace tilegemm::cli
