#pragma once
// The on-disk cache contract (docs/jit.md):
//   <root>/kernels/<entry>/kernel.cubin   the artifact, loaded only after its checksum matches
//   <root>/kernels/<entry>/kernel.meta    "tilegemm-cubin 1", size, fnv1a64 of the cubin, name, compiler
//   <root>/kernels/<entry>/kernel.cu      the generated source (for humans; plus kernel.ptx/.sass dumps)
//   <root>/tmp/<entry>.<pid>.<n>/        private build dirs; a whole entry dir is renamed into kernels/
//   <root>/failed/<entry>.cu             sources that failed to compile, named in CompileError
// Publishing is one rename(2) of a fully written and fsync'ed directory, so a reader sees either no entry or a
// complete one; when several processes publish the same entry, the first rename wins and the others discard
// their copies. An entry whose checksum fails is moved aside and rebuilt.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilegemm::jit {

class DiskCache {
 public:
  explicit DiskCache(std::string root);

  const std::string& root() const { return root_; }
  // False once creating a directory or publishing failed; the runtime then keeps kernels in memory only.
  bool writable() const { return writable_.load(); }

  // The verified cubin of `entry`, or nullopt when it is absent or was corrupt (then it is removed).
  std::optional<std::vector<char>> load(const std::string& entry, std::string* cubin_path) const;

  // A fresh private directory to compile in: under <root>/tmp when writable, else under the system temp dir.
  std::string make_work_dir(const std::string& entry);

  // Writes the artifact files into `work_dir` and renames it to the entry. Returns the published cubin path,
  // or "" when the cache is not writable (the caller still has the cubin in memory). Removes `work_dir`
  // in every case except a successful rename.
  std::string publish(const std::string& work_dir, const std::string& entry, const std::vector<char>& cubin,
                      const std::string& name, const std::string& compiler_identity);

  // Keeps a failed kernel's source where a human can find it; returns its path.
  std::string save_failed_source(const std::string& entry, const std::string& source);

  std::string entry_dir(const std::string& entry) const;

 private:
  void degrade(const std::string& why);

  std::string root_;
  std::atomic<bool> writable_{true};
  std::atomic<bool> warned_{false};
};

// Checksums of the artifact, exposed for tests.
std::string artifact_meta(const std::vector<char>& cubin, const std::string& name, const std::string& compiler);
bool artifact_matches_meta(const std::vector<char>& cubin, const std::string& meta);

// Writes `bytes` to `path` and fsyncs it. Returns false (errno set) on failure.
bool write_file_durably(const std::string& path, const void* bytes, std::size_t size);

}  // namespace tilegemm::jit
