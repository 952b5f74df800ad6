#pragma once
// Argument checks that several commands share, so that each rule is written once.
#include <string>

#include <CLI/CLI.hpp>

#include "tilegemm/hw.hpp"

namespace tilegemm::cli {

// "" when `text` is a plain decimal integer ("64", "-5", "0"), else the reason. CLI11 reads integers with
// base prefixes ("0x40" = 64, "010" = 8 in octal, "+64"), so a size typed by mistake would be taken silently.
std::string check_decimal_integer(const std::string& text);

// Adds that check to every integer option (CLI11 type INT or UINT) of `app` and of all its subcommands, so a
// new integer option is covered without remembering to ask. Call once, after every command is added.
void require_decimal_integers(CLI::App& app);

// The preset `name` for the SM90 (Hopper) heuristics and JIT kernels; InvalidArgument naming `argument` for a
// preset of other hardware (ascend-950dt), which would otherwise get an sm_90 kernel config planned for it.
HardwareModel sm90_preset(const std::string& name, const std::string& argument);

}  // namespace tilegemm::cli
