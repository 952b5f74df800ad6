#include "heuristics/selector_offer.hpp"

#include <numeric>

#include <fmt/format.h>

#include "heuristics/sm90_cost.hpp"        // sm90_problem_shape, sm90_output_tiles
#include "heuristics/sm90_tile_rules.hpp"  // reject
#include "tilegemm/heuristics.hpp"

namespace tilegemm {
namespace {

// Whether 256x128 tiles of `desc` leave at least a third of the persistent CTAs' slots idle over their waves (few,
// unevenly filled waves): there 64-wide 256-row tiles, which fill them, are worth their lower efficiency. Tiles and
// waves counted as the cost model counts them.
bool wide_tall_tiles_leave_sms_idle(const GemmDesc& desc, int num_sms) {
  if (num_sms <= 0) return false;
  const std::int64_t tiles = sm90_output_tiles(sm90_problem_shape(desc), 256, kSm90Fp8TallTileMinBlockN);
  return wave_stats(tiles, num_sms).efficiency <= 2.0 / 3.0;
}

}  // namespace

bool sm90_offered(const GemmDesc& desc, const GemmConfig& c, const ConfigFilter& filter, std::string* why) {
  const bool fp8 = is_fp8_desc(desc);
  if (fp8 && desc.type == GemmType::kMGroupedMasked && c.block_m > 128 && !kSm90Fp8MaskedTallTilesSelected &&
      !filter.names({"block_m"}))
    return reject(why,
                  "256-row tiles of masked problems are not offered by the FP8 selector "
                  "(kSm90Fp8MaskedTallTilesSelected = false: measured slower than 128-row ones; "
                  "TILEGEMM_CONFIG_FILTER=block_m=256 forces them)");
  if (fp8 && c.block_m > 128 && c.block_n < kSm90Fp8TallTileMinBlockN && !filter.names({"block_n"}) &&
      !(c.block_n == kSm90Fp8TallFillerBlockN && wide_tall_tiles_leave_sms_idle(desc, c.num_sms)))
    return reject(why, [&] {
      return fmt::format(
          "256-row FP8 tiles narrower than {} are not offered by the selector (measured slower than "
          "wider ones), {}-wide ones only where 256x{} tiles leave a third of the SMs idle; here {} "
          "wide; TILEGEMM_CONFIG_FILTER=block_n={} forces them",
          kSm90Fp8TallTileMinBlockN, kSm90Fp8TallFillerBlockN, kSm90Fp8TallTileMinBlockN, c.block_n, c.block_n);
    });
  if (fp8 && c.block_k == 512 && c.block_n > kSm90Fp8FourBlockStagesMaxBlockN && !filter.names({"block_k"}))
    return reject(why, [&] {
      return fmt::format(
          "FP8 stages of four K blocks are not offered for tiles wider than {} (measured faster on "
          "narrower ones only), here {}; TILEGEMM_CONFIG_FILTER=block_k=512 forces them",
          kSm90Fp8FourBlockStagesMaxBlockN, c.block_n);
    });
  if (fp8 && c.block_k >= 256 && !filter.names({"block_k"})) {
    // Masked problems: the caller's expected rows per group when given (expected_m = 0: up to m).
    const long long rows = desc.type == GemmType::kMGroupedMasked && desc.expected_m > 0 ? desc.expected_m : desc.m;
    if (rows > kSm90Fp8TwoBlockStagesMaxRows || desc.k < kSm90Fp8TwoBlockStagesMinK)
      return reject(why, [&] {
        return fmt::format(
            "FP8 stages of several K blocks are not offered beyond {} rows or below K = {} (measured "
            "faster there only), here {} rows and K = {}; TILEGEMM_CONFIG_FILTER=block_k={} forces "
            "them",
            kSm90Fp8TwoBlockStagesMaxRows, kSm90Fp8TwoBlockStagesMinK, rows, desc.k, c.block_k);
      });
  }
  if (!fp8 && c.block_k == 256 && !kSm90Bf16FourAtomStagesSelected && !filter.names({"block_k"}))
    return reject(why,
                  "BF16 stages of four K atoms (block_k 256) are not offered by the selector "
                  "(kSm90Bf16FourAtomStagesSelected = false; TILEGEMM_CONFIG_FILTER=block_k=256 forces them)");
  // Head splits whose left and right share only odd multiples of 8 (gcd 24, 40, ...) leave the selector no other width.
  const bool heads_need_odd_eighths =
      desc.head_splits.any() && std::gcd(desc.head_splits.left, desc.head_splits.right) % 16 != 0;
  if (c.block_n % 16 == 8 && !kSm90OddEighthBlockNSelected && !filter.names({"block_n"}) && !heads_need_odd_eighths)
    return reject(why,
                  "block_n an odd multiple of 8 is not offered by the selector (kSm90OddEighthBlockNSelected = "
                  "false: measured slower; TILEGEMM_CONFIG_FILTER=block_n=56 forces such a width)");
  return true;
}

std::string sm90_offer_problem(const GemmDesc& desc, const GemmConfig& c, const ConfigFilter& filter) {
  std::string why;
  sm90_offered(desc, c, filter, &why);
  return why;
}

}  // namespace tilegemm
