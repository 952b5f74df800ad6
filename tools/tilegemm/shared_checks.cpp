#include "shared_checks.hpp"

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::cli {

std::string check_decimal_integer(const std::string& text) {
  const std::size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::string digits = text.substr(start);
  const bool all_digits =
      !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  // A leading zero is refused rather than read: CLI11 would take "010" as octal 8.
  const bool leading_zero = digits.size() > 1 && digits[0] == '0';
  if (all_digits && !leading_zero) return "";
  return fmt::format("expected a plain decimal integer such as 64 (no 0x/0 prefix, '+' or spaces), got '{}'", text);
}

void require_decimal_integers(CLI::App& app) {
  static const CLI::Validator decimal(
      [](std::string& text) { return check_decimal_integer(text); }, "", "decimal integer");
  for (CLI::Option* option : app.get_options())
    if (option->get_type_name() == "INT" || option->get_type_name() == "UINT") option->check(decimal);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) require_decimal_integers(*sub);
}

HardwareModel sm90_preset(const std::string& name, const std::string& argument) {
  const HardwareModel hw = hardware_preset(name, argument);
  if (hw.ascend_l1_bytes == 0) return hw;  // NVIDIA presets leave the Ascend buffers at 0
  std::string hopper;
  for (const std::string& preset : hardware_preset_names())
    if (hardware_preset(preset, argument).ascend_l1_bytes == 0) hopper += (hopper.empty() ? "" : ", ") + preset;
  throw InvalidArgument(argument, fmt::format("an NVIDIA Hopper preset ({}) for the SM90 heuristics and kernels", hopper),
                        fmt::format("'{}' (not NVIDIA; tilegemm ledger models it)", name));
}

}  // namespace tilegemm::cli
