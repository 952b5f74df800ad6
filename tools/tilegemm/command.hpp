#pragma once
// Each subcommand lives in its own file and registers itself here with a static CommandRegistrar, so
// main.cpp never changes when a command is added.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tilegemm::cli {

using CommandAdder = std::function<void(CLI::App& root)>;

std::vector<CommandAdder>& command_adders();

// `tilegemm --version`'s line (version.cpp).
std::string version_line();

struct CommandRegistrar {
  explicit CommandRegistrar(CommandAdder adder) { command_adders().push_back(std::move(adder)); }
};

}  // namespace tilegemm::cli
