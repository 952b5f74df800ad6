#pragma once
// Argument checks that several commands share, so that each rule is written once.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tilegemm/hw.hpp"

namespace tilegemm::cli {

// "" when `text` is a plain decimal integer ("64", "-5", "0"), else the reason. CLI11 reads integers with
// base prefixes ("0x40" = 64, "010" = 8 in octal, "+64"), so a size typed by mistake would be taken silently.
std::string check_decimal_integer(const std::string& text);

// "" unless `text` looks like an option ("--hw", "--m=1"): then the reason. CLI11 hands an option that needs a
// value the next argument whatever it is, so "--suite --hw h800" read '--hw' as the suite and then refused the
// stray 'h800' without naming --suite.
std::string check_not_an_option(const std::string& text);

// Adds check_not_an_option to every option of `app` and of its subcommands that takes a value. Call once, after every
// command is added and before require_decimal_integers (so a missing integer is reported as missing).
void require_values_not_options(CLI::App& app);

// Adds check_decimal_integer to every integer option (CLI11 type INT or UINT) of `app` and of all its subcommands, so a
// new integer option is covered without remembering to ask. Call once, after every command is added.
void require_decimal_integers(CLI::App& app);
// A flag of `app` or of a subcommand given a value (`--grouped=2`, which CLI11 would read as true): InvalidArgument
// naming the flag.
void reject_flag_values(const CLI::App& app, int argc, char** argv);

// Library checks name the field they check ("n", "num_sms", "d_dtype", "math dtype"), not the option the user
// typed. Runs `body`; an InvalidArgument whose argument is a key of `options` is rethrown (exit status 2, one
// line) with that argument replaced by the option ("--n", "--num-sms", "--out-dtype"). Others pass unchanged.
using OptionNames = std::vector<std::pair<std::string, std::string>>;
void with_option_names(const OptionNames& options, const std::function<void()>& body);

}  // namespace tilegemm::cli
