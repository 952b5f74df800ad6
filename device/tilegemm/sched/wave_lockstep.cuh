#pragma once
// Lockstep waves (experiment, TILEGEMM_WAVE_LOCKSTEP): in a long persistent kernel the CTAs drift apart in K,
// and CTAs that share an operand panel then read it from DRAM at different times instead of from L2 at about
// the same time. Here each CTA's producer counts the indices it has walked (sched::TileScheduler::walked) in
// a grid-wide counter once their loads are issued, and before the loads of its wave-p tile waits until every
// CTA has counted its wave p-1. The consumers keep working through the stages already loaded meanwhile.
// Every CTA must be resident at once: the launch is cooperative. Direct-indexed schedulers only.
#include "tilegemm/prim/common.cuh"

namespace tilegemm::sched {

struct WaveLockstep {
  int* counters;       // GemmParams::wave_counters: [0] indices walked by all producers, [1] producers finished
  int full_waves = 0;  // waves every CTA takes part in (TileScheduler::full_waves)
  int counted = 0;     // indices of this CTA counted so far

  template <class Scheduler>
  TG_DEVICE void start(const Scheduler& scheduler) {
    full_waves = scheduler.full_waves();
  }

  // Before the loads of the tile the scheduler just returned (its wave is walked - 1): the padding blocks it
  // skipped on the way pass as empty waves, then wait until every CTA has counted the previous wave.
  template <class Scheduler>
  TG_DEVICE void before_tile(const Scheduler& scheduler) {
    const int wave = scheduler.walked - 1;
    while (counted < wave) pass_empty_wave();
    wait_for(wave);
  }

  // Once the tile's loads are issued.
  TG_DEVICE void after_tile() {
    arrive(1);
    ++counted;
  }

  // After the scheduler's last tile: padding blocks skipped at the end pass as empty waves (others may wait
  // for them); then the last producer to finish (it has seen every other one pass all its waits) zeroes both
  // counters for the next launch on the stream.
  template <class Scheduler>
  TG_DEVICE void finish(const Scheduler& scheduler) {
    while (counted < scheduler.walked) pass_empty_wave();
    __threadfence();  // this producer's last count lands before its finish does
    if (atomicAdd(counters + 1, 1) == static_cast<int>(gridDim.x) - 1) {
      *reinterpret_cast<volatile int*>(counters) = 0;
      *reinterpret_cast<volatile int*>(counters + 1) = 0;
    }
  }

  // Wait until every CTA has counted wave - 1. Sound because no CTA counts a wave before passing this wait
  // for it: the first CTA through finds every count at `wave` exactly, so the sum reaching wave x CTAs
  // means each has. Waves past the last full one wait for nothing (some CTAs never walk them).
  TG_DEVICE void wait_for(int wave) const {
    if (wave < 1 || wave > full_waves) return;
    const int target = wave * static_cast<int>(gridDim.x);
    while (*reinterpret_cast<volatile int*>(counters) < target) __nanosleep(32);
  }

  // A skipped index is a wave without loads: it waits and counts like any other.
  TG_DEVICE void pass_empty_wave() {
    wait_for(counted);
    arrive(1);
    ++counted;
  }

  TG_DEVICE void arrive(int n) const {
    if (n > 0) atomicAdd(counters, n);
  }
};

}  // namespace tilegemm::sched
