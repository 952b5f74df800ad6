#pragma once
// Runs independent pieces of host work (JIT compiles, kernel selections) on a few threads: each thread takes the
// next index until none is left; the calling thread is one of them.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tilegemm {

// Threads for `items` pieces of work: `jobs` (0 = every core), at least 1, at most one per piece.
inline std::size_t worker_threads(int jobs, std::size_t items) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::min<std::size_t>(jobs > 0 ? static_cast<std::size_t>(jobs) : cores, std::max<std::size_t>(1, items));
}

// fn(i) for every i in [0, count) on `threads` threads. fn must not throw (catch inside and record).
template <typename Fn>
void parallel_for(std::size_t count, std::size_t threads, Fn&& fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) fn(i);
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
}

}  // namespace tilegemm
