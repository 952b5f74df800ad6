// Lockstep waves (device/tilegemm/sched/wave_lockstep.cuh) run on the host, one thread per CTA walking the real
// TileScheduler: no CTA starts the loads of a wave before every CTA has issued the previous one, padding
// blocks skipped on the way count, nobody deadlocks, and the counters are zero again at the end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "host_scheduler_shim.hpp"

namespace {
std::chrono::steady_clock::time_point g_deadline;
}  // namespace
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned) {
  // A deadlocked protocol fails the test instead of hanging it.
  if (std::chrono::steady_clock::now() > g_deadline) {
    std::fprintf(stderr, "wave lockstep: a CTA waited more than 20 s (deadlock)\n");
    std::abort();
  }
  std::this_thread::yield();
}
#include "tilegemm/sched/gemm_scheduler.cuh"
#include "tilegemm/sched/wave_lockstep.cuh"

using namespace tilegemm;

namespace {

constexpr int kBlockM = 128, kBlockN = 64;

template <GemmType kType, int kClusterM>
void run_grid(GemmParams p, int grid, unsigned seed) {
  SCOPED_TRACE(::testing::Message() << "m=" << p.m << " n=" << p.n << " groups=" << p.num_groups
                                    << " cluster=" << kClusterM << " grid=" << grid);
  using Scheduler = sched::TileScheduler<kType, kBlockM, kBlockN, 4, false, 64, kClusterM>;
  int counters[2] = {0, 0};
  p.wave_counters = counters;
  gridDim.x = static_cast<unsigned>(grid);
  g_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // progress[c]: leading indices of CTA c whose loads are issued or that it skipped as padding.
  std::vector<std::atomic<int>> progress(static_cast<std::size_t>(grid));
  std::atomic<int> early_starts{0}, tiles{0}, full_waves{-1};
  std::vector<std::thread> ctas;
  for (int c = 0; c < grid; ++c)
    ctas.emplace_back([&, c] {
      blockIdx.x = static_cast<unsigned>(c);
      std::mt19937 rng(seed + static_cast<unsigned>(c));
      Scheduler scheduler(p);
      sched::WaveLockstep lockstep{counters};
      lockstep.start(scheduler);
      full_waves = lockstep.full_waves;
      sched::Tile tile;
      auto& mine = progress[static_cast<std::size_t>(c)];
      while (scheduler.next(tile)) {
        // Published before the lockstep counts them, so the check below can only be too strict.
        const int wave = scheduler.walked - 1;
        mine = wave;  // every earlier index is issued or skipped
        lockstep.before_tile(scheduler);
        if (wave >= 1 && wave <= lockstep.full_waves)
          for (const auto& other : progress)
            if (other.load() < wave) ++early_starts;
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));  // the tile's loads
        ++tiles;
        mine = wave + 1;
        lockstep.after_tile();
      }
      mine = scheduler.walked;
      lockstep.finish(scheduler);
    });
  for (auto& t : ctas) t.join();
  EXPECT_EQ(early_starts.load(), 0) << "a CTA started a wave before another had issued the previous one";
  EXPECT_GT(full_waves.load(), 1) << "the case has waves to keep in step";
  EXPECT_GT(tiles.load(), 0);
  EXPECT_EQ(counters[0], 0) << "the last producer zeroes the counters for the next launch";
  EXPECT_EQ(counters[1], 0);
}

GemmParams params(int m, int n, int groups, const int* layout = nullptr) {
  GemmParams p{};
  p.m = m, p.n = n, p.k = 512, p.num_groups = groups, p.grouped_layout = layout;
  return p;
}

}  // namespace

TEST(WaveLockstep, DenseAndBatchedWavesStayInStep) {
  for (int grid : {2, 5, 12}) {
    run_grid<GemmType::kNormal, 1>(params(1000, 700, 1), grid, 1);
    run_grid<GemmType::kBatched, 1>(params(300, 400, 3), grid, 2);
  }
  run_grid<GemmType::kNormal, 2>(params(1000, 700, 1), 6, 3);
}

TEST(WaveLockstep, SkippedPaddingBlocksCountSoNobodyWaitsForThem) {
  // Groups of 3, 1 and 2 blocks of 128 rows with padding blocks (-1) between and after them.
  std::vector<int> rows;
  for (int g : {0, 0, 0, -1, 1, -1, -1, 2, 2, -1}) rows.insert(rows.end(), kBlockM, g);
  const int m = static_cast<int>(rows.size());
  for (int grid : {3, 8}) {
    run_grid<GemmType::kMGroupedContiguous, 1>(params(m, 500, 3, rows.data()), grid, 4);
    run_grid<GemmType::kMGroupedContiguous, 2>(params(m, 500, 3, rows.data()), grid, 5);
  }
}
