#pragma once
// What identifies a compiled artifact: the kernel's name, entry and source, the compiler's identity and
// version, every flag, and a hash of every file under the device include directory (so editing any project
// header invalidates every kernel compiled against it, without having to know which ones it included).
#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/jit.hpp"

namespace tilegemm::jit {

// FNV-1a over the sorted relative paths and contents of the regular files under `dir` (recursively).
// Throws RuntimeError when `dir` is not a readable directory.
std::uint64_t hash_directory_tree(const std::string& dir);

// 16 hex digits.
std::string cache_key(const KernelSpec& spec, const std::string& compiler_identity,
                      const std::vector<std::string>& flags, std::uint64_t include_tree_hash);

// "kernel.<name>.<key>": the cache entry (directory) name.
std::string entry_name(const KernelSpec& spec, const std::string& key);

// Throws InvalidArgument when the spec cannot be compiled into a safe file name / entry point.
void validate_spec(const KernelSpec& spec);

}  // namespace tilegemm::jit
