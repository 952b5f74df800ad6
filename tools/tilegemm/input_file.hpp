#pragma once
// Files the CLI reads (--hw-json, bench reports) and writes (reports). Reads take files whole, but only regular files
// and only up to a size bound, so that a device, a FIFO or an endless stream (/dev/zero) is refused with a message
// instead of hanging.
#include <cstddef>
#include <string>

namespace tilegemm::cli {

// Far above any hardware JSON or bench report the CLI writes (a few hundred KB).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

// The text of `path`; InvalidArgument naming `argument` (expected "<what>, a regular file of at most 64 MiB") when
// it cannot be opened, is not a regular file or is larger.
std::string read_input_file(const std::string& path, const std::string& argument, const std::string& what,
                            std::size_t max_bytes = kMaxInputFileBytes);

// Writes `text` to `path` (--md, --json outputs); InvalidArgument naming `argument` when it cannot be opened,
// RuntimeError when writing fails.
void write_file(const std::string& path, const std::string& text, const char* argument);

}  // namespace tilegemm::cli
