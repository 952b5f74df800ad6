#include "jit/cache_key.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "jit/hash.hpp"

namespace tilegemm::jit {
namespace fs = std::filesystem;

std::uint64_t hash_directory_tree(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw RuntimeError(
        fmt::format("TILEGEMM_DEVICE_INCLUDE_DIR: expected a directory of device headers, got '{}'", dir));
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(it->path());
  if (ec) throw RuntimeError(fmt::format("TILEGEMM_DEVICE_INCLUDE_DIR: cannot list '{}': {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  std::uint64_t h = kFnvOffset;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    h = fnv1a64_field(fs::relative(file, dir).generic_string(), h);
    h = fnv1a64_field(content.str(), h);
  }
  return h;
}

std::string cache_key(const KernelSpec& spec, const std::string& compiler_identity,
                      const std::vector<std::string>& flags, std::uint64_t include_tree_hash) {
  std::uint64_t h = fnv1a64_field("tilegemm-jit-key 1", kFnvOffset);
  h = fnv1a64_field(spec.name, h);
  h = fnv1a64_field(spec.entry, h);
  h = fnv1a64_field(compiler_identity, h);
  h = fnv1a64_field(std::to_string(flags.size()), h);
  for (const auto& f : flags) h = fnv1a64_field(f, h);
  h = fnv1a64_field(spec.source, h);
  h = fnv1a64_field(hex64(include_tree_hash), h);
  return hex64(h);
}

std::string entry_name(const KernelSpec& spec, const std::string& key) {
  return "kernel." + spec.name + "." + key;
}

void validate_spec(const KernelSpec& spec) {
  const bool name_ok = !spec.name.empty() && spec.name.size() <= 160 && spec.name[0] != '.' &&
                       std::all_of(spec.name.begin(), spec.name.end(),
                                   [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
  TILEGEMM_REQUIRE(name_ok, "KernelSpec.name", "1-160 characters of [A-Za-z0-9_.-], not starting with '.'",
                   "'" + spec.name + "'");
  const bool entry_ok =
      !spec.entry.empty() && !std::isdigit(static_cast<unsigned char>(spec.entry[0])) &&
      std::all_of(spec.entry.begin(), spec.entry.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  TILEGEMM_REQUIRE(entry_ok, "KernelSpec.entry", "a C identifier", "'" + spec.entry + "'");
  TILEGEMM_REQUIRE(!spec.source.empty(), "KernelSpec.source", "generated CUDA source", "an empty string");
}

}  // namespace tilegemm::jit
