#pragma once
// A process-wide map from the raw bytes of the fields a kernel's source depends on to the compiled kernel, so
// that the launch path formats and hashes the generated source once per distinct kernel, not once per call.
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tilegemm/jit.hpp"

namespace tilegemm::kernels {

class KernelCache {
 public:
  // The kernel for `key`; on a miss make_spec() builds the spec and the JIT compiles it (outside the lock).
  template <class MakeSpec>
  std::shared_ptr<const jit::CompiledKernel> get(const std::string& key, MakeSpec make_spec) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    }
    auto kernel = jit::get_kernel(make_spec());
    std::lock_guard lock(mutex_);
    return kernels_.emplace(key, std::move(kernel)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const jit::CompiledKernel>> kernels_;
};

// The raw bytes of a few ints, as a cache key.
template <std::size_t N>
std::string raw_key(const int (&fields)[N]) {
  return std::string(reinterpret_cast<const char*>(fields), sizeof(fields));
}

}  // namespace tilegemm::kernels
