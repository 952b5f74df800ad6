// `tilegemm jit info` / `clear`: what the disk cache holds and how to empty it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tilegemm/env.hpp"
#include "tilegemm/jit.hpp"

namespace tilegemm::jit {
namespace fs = std::filesystem;

namespace {

// Whether new files can be made in `dir`: a probe file is created and removed (access(W_OK) says yes for root on
// /proc, where nothing can be created).
bool accepts_new_files(const fs::path& dir) {
  const fs::path probe = dir / (".tilegemm-write-probe-" + std::to_string(::getpid()));
  bool ok = static_cast<bool>(std::ofstream(probe));
  std::error_code ec;
  fs::remove(probe, ec);
  return ok;
}

}  // namespace

CacheInfo cache_info() {
  CacheInfo info;
  info.directory = env().jit_cache_dir;
  std::error_code ec;
  for (auto it = fs::directory_iterator(fs::path(info.directory) / "kernels", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) ++info.entries;
  ec.clear();
  for (auto it = fs::recursive_directory_iterator(info.directory, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) info.bytes += it->file_size(ec);
  // Writable = the directory (or the nearest existing ancestor it would be created in) accepts new files.
  fs::path probe = info.directory;
  while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
  info.writable = !probe.empty() && fs::is_directory(probe, ec) && accepts_new_files(probe);
  return info;
}

std::size_t clear_disk_cache() {
  const fs::path root = env().jit_cache_dir;
  std::error_code ec;
  std::size_t removed = 0;
  for (auto it = fs::directory_iterator(root / "kernels", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) ++removed;
  // Only our own subdirectories: the cache root may be a directory the user shares with other tools.
  for (const char* sub : {"kernels", "tmp", "failed"}) {
    fs::remove_all(root / sub, ec);
    if (ec) throw RuntimeError("jit clear: cannot remove " + (root / sub).string() + ": " + ec.message());
  }
  return removed;
}

}  // namespace tilegemm::jit
