#include "input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::cli {

std::string read_input_file(const std::string& path, const std::string& argument, const std::string& what,
                            std::size_t max_bytes) {
  const std::string expected = fmt::format("{}, a regular file of at most {} MiB", what, max_bytes >> 20);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw InvalidArgument(argument, expected, fmt::format("'{}' (cannot open: no such file)", path));
  if (!std::filesystem::is_regular_file(status))
    throw InvalidArgument(
        argument, expected,
        fmt::format("'{}' ({})", path, std::filesystem::is_directory(status) ? "a directory" : "not a regular file"));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InvalidArgument(argument, expected, fmt::format("'{}' (cannot open: {})", path, ec.message()));
  if (size > max_bytes) throw InvalidArgument(argument, expected, fmt::format("'{}' ({} bytes)", path, size));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument(argument, expected, fmt::format("'{}' (cannot open)", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text, const char* argument) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument(argument, "a writable file path", fmt::format("'{}'", path));
  out << text;
  if (!out.flush()) throw RuntimeError(fmt::format("{}: writing '{}' failed", argument, path));
}

}  // namespace tilegemm::cli
