#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "jit/hash.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::jit {
namespace fs = std::filesystem;
namespace {

std::atomic<std::uint64_t> g_unique{0};

// pid + a per-process counter + a clock reading: unique across threads, processes and hosts sharing a disk.
std::string unique_suffix() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("{}.{}.{:x}", ::getpid(), g_unique.fetch_add(1), static_cast<std::uint64_t>(now) & 0xffffff);
}

std::optional<std::string> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

bool write_file_durably(const std::string& path, const void* bytes, std::size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const char* p = static_cast<const char*>(bytes);
  std::size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const bool ok = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

std::string artifact_meta(const std::vector<char>& cubin, const std::string& name, const std::string& compiler) {
  return fmt::format("tilegemm-cubin 1\nsize {}\nfnv1a64 {}\nname {}\ncompiler {}\n", cubin.size(),
                     hex64(fnv1a64(std::string_view(cubin.data(), cubin.size()))), name, compiler);
}

bool artifact_matches_meta(const std::vector<char>& cubin, const std::string& meta) {
  std::istringstream lines(meta);
  std::string line;
  if (!std::getline(lines, line) || line != "tilegemm-cubin 1") return false;
  std::string size, checksum;
  while (std::getline(lines, line)) {
    if (line.rfind("size ", 0) == 0) size = line.substr(5);
    if (line.rfind("fnv1a64 ", 0) == 0) checksum = line.substr(8);
  }
  return !cubin.empty() && size == std::to_string(cubin.size()) &&
         checksum == hex64(fnv1a64(std::string_view(cubin.data(), cubin.size())));
}

DiskCache::DiskCache(std::string root) : root_(std::move(root)) {}

std::string DiskCache::entry_dir(const std::string& entry) const {
  return (fs::path(root_) / "kernels" / entry).string();
}

std::optional<std::vector<char>> DiskCache::load(const std::string& entry, std::string* cubin_path) const {
  const fs::path dir = entry_dir(entry);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  const auto meta = read_all(dir / "kernel.meta");
  const auto bytes = read_all(dir / "kernel.cubin");
  if (meta && bytes) {
    std::vector<char> cubin(bytes->begin(), bytes->end());
    if (artifact_matches_meta(cubin, *meta)) {
      if (cubin_path) *cubin_path = (dir / "kernel.cubin").string();
      return cubin;
    }
  }
  // Truncated, corrupted or half-deleted: never load it. Move it aside first (one rename, so a concurrent
  // reader sees either the bad entry, which it also rejects, or nothing) and rebuild.
  if (env().jit_debug)
    fmt::print(stderr, "tilegemm: jit: cache entry {} failed its checksum; rebuilding\n", dir.string());
  const fs::path trash = fs::path(root_) / "tmp" / (entry + ".corrupt." + unique_suffix());
  fs::create_directories(trash.parent_path(), ec);
  if (!ec) fs::rename(dir, trash, ec);
  fs::remove_all(ec ? dir : trash, ec);
  return std::nullopt;
}

void DiskCache::degrade(const std::string& why) {
  writable_ = false;
  if (!warned_.exchange(true))
    fmt::print(stderr,
               "tilegemm: warning: JIT cache directory '{}' is not writable ({}); compiled kernels are kept in "
               "memory for this process only (set DG_JIT_CACHE_DIR to a writable directory)\n",
               root_, why);
}

std::string DiskCache::make_work_dir(const std::string& entry) {
  std::error_code ec;
  if (writable_) {
    const fs::path dir = fs::path(root_) / "tmp" / (entry + "." + unique_suffix());
    if (fs::create_directories(dir, ec) && !ec) return dir.string();
    degrade(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  }
  const fs::path dir = fs::temp_directory_path() / ("tilegemm-jit." + entry + "." + unique_suffix());
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(fmt::format("JIT: cannot create a work directory {}: {}", dir.string(), ec.message()));
  return dir.string();
}

std::string DiskCache::publish(const std::string& work_dir, const std::string& entry, const std::vector<char>& cubin,
                               const std::string& name, const std::string& compiler_identity) {
  std::error_code ec;
  const fs::path work = work_dir;
  const fs::path final_dir = entry_dir(entry);
  auto give_up = [&](const std::string& why) {
    degrade(why);
    fs::remove_all(work, ec);
    return std::string();
  };
  if (!writable_ || work.parent_path() != fs::path(root_) / "tmp") {
    fs::remove_all(work, ec);
    return {};
  }
  const std::string meta = artifact_meta(cubin, name, compiler_identity);
  if (!write_file_durably((work / "kernel.cubin").string(), cubin.data(), cubin.size()) ||
      !write_file_durably((work / "kernel.meta").string(), meta.data(), meta.size()))
    return give_up(fmt::format("cannot write into {}: {}", work.string(), std::strerror(errno)));
  fsync_dir(work);
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) return give_up(fmt::format("cannot create {}: {}", final_dir.parent_path().string(), ec.message()));
  if (::rename(work.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      // Another process published the same key first; its artifact is byte-for-byte what we built.
      fs::remove_all(work, ec);
      return (final_dir / "kernel.cubin").string();
    }
    return give_up(fmt::format("cannot rename into {}: {}", final_dir.string(), std::strerror(err)));
  }
  fsync_dir(final_dir.parent_path());
  return (final_dir / "kernel.cubin").string();
}

std::string DiskCache::save_failed_source(const std::string& entry, const std::string& source) {
  std::error_code ec;
  fs::path dir = fs::path(root_) / "failed";
  if (!writable_ || (fs::create_directories(dir, ec), ec)) dir = fs::temp_directory_path();
  const fs::path path = dir / (entry + ".cu");
  if (!write_file_durably(path.string(), source.data(), source.size())) return "(source could not be saved)";
  return path.string();
}

}  // namespace tilegemm::jit
