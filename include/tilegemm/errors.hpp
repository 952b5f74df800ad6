#pragma once
// Every error a user can cause is one of these exceptions. The message names the argument, what was
// expected and what was given, so a caller (CLI, Python binding) can print it as is.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tilegemm {

// Bad input: a wrong size, dtype, layout, preset name, config, ...
class InvalidArgument : public std::invalid_argument {
 public:
  InvalidArgument(const std::string& argument, const std::string& expected, const std::string& given)
      : std::invalid_argument(fmt::format("{}: expected {}, got {}", argument, expected, given)), argument_(argument) {}
  const std::string& argument() const { return argument_; }
  // The same error under another argument's name: an entry point that forwards its arguments to another under
  // that one's parameter names reports them under its own.
  InvalidArgument renamed(const std::string& argument) const {
    return InvalidArgument(Message{}, argument, argument + std::string(what()).substr(argument_.size()));
  }

 private:
  struct Message {};
  InvalidArgument(Message, const std::string& argument, const std::string& message)
      : std::invalid_argument(message), argument_(argument) {}
  std::string argument_;
};

// Something outside the caller's input failed: no GPU, a compiler error, an unreadable file.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shorthand for the checks that guard every public entry point.
#define TILEGEMM_REQUIRE(cond, argument, expected, given)                            \
  do {                                                                               \
    if (!(cond)) throw ::tilegemm::InvalidArgument((argument), (expected), (given)); \
  } while (0)

}  // namespace tilegemm
