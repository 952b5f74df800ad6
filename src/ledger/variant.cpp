// The textbook variant decision tree:
// the question is always whether the output tiles fill the device, and whether K should be cut.
#include <algorithm>

#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::kDataParallel:
      return "data-parallel";
    case Variant::kSplitK:
      return "split-K";
    case Variant::kStreamK:
      return "stream-K";
    case Variant::kGrouped:
      return "grouped";
    case Variant::kBatched:
      return "batched";
  }
  return "unknown";
}

VariantDecision choose_variant(const ProblemShape& shape, int block_m, int block_n, int block_k,
                               const HardwareModel& hw) {
  validate_problem_shape(shape);
  TILEGEMM_REQUIRE(block_m > 0, "--block-m", "a positive integer", std::to_string(block_m));
  TILEGEMM_REQUIRE(block_n > 0, "--block-n", "a positive integer", std::to_string(block_n));
  TILEGEMM_REQUIRE(block_k > 0, "--block-k", "a positive integer", std::to_string(block_k));
  TILEGEMM_REQUIRE(hw.num_sms > 0, "--num-sms", "a positive SM count", std::to_string(hw.num_sms));

  VariantDecision d;
  d.tiles = output_tiles(shape, block_m, block_n);
  d.num_sms = hw.num_sms;
  d.k_iters = ceil_div(shape.k, block_k);
  d.waves = wave_stats(d.tiles, hw.num_sms);

  // §4.3/§4.4: several problems in one launch. Same shape → batched (a third grid dimension, no lookup);
  // shapes differ (MoE experts with different token counts) → grouped (offset table).
  if (shape.batch > 1) {
    d.variant = shape.grouped ? Variant::kGrouped : Variant::kBatched;
    d.reason = shape.grouped
                   ? fmt::format("{} problems whose M differ share N={} K={}: one grouped launch, {} tiles",
                                 shape.batch, shape.n, shape.k, d.tiles)
                   : fmt::format("{} problems of identical shape: one batched launch, {} tiles", shape.batch, d.tiles);
    return d;
  }

  // §4.1: fewer output tiles than SMs leaves SMs idle; cut K so tiles × split_k approaches the SM count,
  // as long as each slice keeps kMinKItersPerSplit K steps to amortise its partial write.
  if (d.tiles < hw.num_sms) {
    const std::int64_t by_sms = hw.num_sms / d.tiles;
    const std::int64_t by_k = d.k_iters / kMinKItersPerSplit;
    const std::int64_t split = std::min(by_sms, by_k);
    if (split >= 2) {
      d.variant = Variant::kSplitK;
      d.suggested_split_k = static_cast<int>(split);
      d.reason =
          fmt::format("{} tiles < {} SMs ({:.0f}% busy) and K has {} block_k steps: split K {} ways -> {} work units",
                      d.tiles, hw.num_sms, 100.0 * d.tiles / hw.num_sms, d.k_iters, split, d.tiles * split);
      return d;
    }
    d.variant = Variant::kDataParallel;
    d.reason = fmt::format(
        "{} tiles < {} SMs but K has only {} block_k steps (< {} per slice x 2): not worth "
        "splitting",
        d.tiles, hw.num_sms, d.k_iters, kMinKItersPerSplit);
    return d;
  }

  // §4.2: enough tiles, but a partial last wave idles SMs; stream-K spreads the K iterations evenly.
  const double idle = 1.0 - d.waves.efficiency;
  if (idle > kStreamKTailWaste) {
    d.variant = Variant::kStreamK;
    d.reason = fmt::format("{} tiles on {} SMs = {} waves, last wave {}/{}: {:.1f}% of slots idle > {:.0f}%", d.tiles,
                           hw.num_sms, d.waves.waves, d.waves.last_wave_units, hw.num_sms, 100 * idle,
                           100 * kStreamKTailWaste);
    return d;
  }
  d.variant = Variant::kDataParallel;
  d.reason =
      fmt::format("{} tiles on {} SMs = {} waves, last wave {}/{}: {:.1f}% of slots idle <= {:.0f}%", d.tiles,
                  hw.num_sms, d.waves.waves, d.waves.last_wave_units, hw.num_sms, 100 * idle, 100 * kStreamKTailWaste);
  return d;
}

}  // namespace tilegemm
