// enumerate → reject → score → pick, and the per-desc cache in front of it.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <span>
#include <tuple>

#include <fmt/format.h>

#include "core/config_filter.hpp"
#include "heuristics/selector_offer.hpp"
#include "heuristics/sm90_cost.hpp"
#include "heuristics/sm90_tile_rules.hpp"  // sm90_smem_fits
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm_params.hpp"  // d_chunk_bytes, d_chunk_swizzle_bytes
#include "tilegemm/heuristics.hpp"

namespace tilegemm {

namespace {
// FP8 stages hold one 128-wide scale block of K; bf16 stages one or two 128-byte (64-element) swizzle atoms.
constexpr int kBf16BlockKs[] = {64, 128, 256};
constexpr int kFp8BlockKs[] = {128, 256, 512};
constexpr int kInt8BlockKs[] = {128, 256};  // one or two 128-byte atoms, as BF16's 64 and 128
// Memory-bound tiles need many stages in flight (see kLoadLatencyUs); beyond this the ring only takes
// shared memory from nothing.
constexpr int kMaxPreferredStages = 16;
// Predicted times closer than this (relative) are a tie, settled by the fixed order in `better_order`.
constexpr double kTieTolerance = 1e-9;

// (block_m, math warpgroups): each consumer warpgroup owns 64 or 128 rows of the tile.
struct MathShape {
  int block_m, num_math_warpgroups;
};
constexpr MathShape kMathShapes[] = {{64, 1}, {128, 1}, {128, 2}, {256, 2}};
// No cluster, or a 2x1 cluster whose CTAs share (multicast) the B tile.
struct ClusterShape {
  int cluster_m;
  MulticastSide multicast;
};
constexpr ClusterShape kClusterShapes[] = {{1, MulticastSide::kNone}, {2, MulticastSide::kB}};
// Swap AB (heuristics.hpp) where it measured faster: ragged M past one 128-row block with a predicted gain of 12% or
// more (H100: 257x24576x1536 68.7 -> 43.6 us, 129x7168x2048 18.7 -> 17.3, 129x4096x7168 34.6 -> 34.2). At M <= 128
// the plain kernel's only partial row block already loads through a tail map and predicted gains did not hold
// (1x4096x7168: 15% predicted, 4% slower; 65x2112x7168: 19% slower). TILEGEMM_CONFIG_FILTER's swap_ab=1
// forces it (the cheapest swapped config), swap_ab=0 rules it out.
constexpr int kSwapAbMinRows = 129;
constexpr double kSwapAbMinGain = 0.12;

enum class SwapAb { kNo, kWeigh, kForced };

SwapAb swap_ab_mode(const GemmDesc& desc, const ConfigFilter& filter) {
  if (!sm90_swap_ab_runs(desc)) return SwapAb::kNo;
  if (const std::optional<int> pin = filter.pinned("swap_ab")) return *pin == 1 ? SwapAb::kForced : SwapAb::kNo;
  return desc.m >= kSwapAbMinRows ? SwapAb::kWeigh : SwapAb::kNo;
}

int resolve_num_sms(const HardwareModel& hw, int num_sms) {
  TILEGEMM_REQUIRE(num_sms >= 0 && num_sms <= hw.num_sms, "num_sms",
                   fmt::format("0 (all) or a count in [1, {}] ({})", hw.num_sms, hw.name), std::to_string(num_sms));
  return num_sms == 0 ? hw.num_sms : num_sms;
}

// The D swizzle the epilogue and D's tensor map use: that of the widest chunk (128/64/32 B) dividing a D tile row,
// none for 16-byte chunks (bf16 D with block_n an odd multiple of 8). Recorded in the config for printing.
int d_swizzle_bytes(const GemmDesc& desc, int block_n) {
  return d_chunk_swizzle_bytes(d_chunk_bytes(block_n, dtype_bits(desc.d_dtype) / 8));
}

// The fixed tie-break order: larger block_n (a wider wgmma reads less shared memory per FLOP: 128x256 over
// 256x128, as DeepGEMM's heuristic also prefers), larger block_m, more math warpgroups, FP8 stages of more K blocks
// where offered (block_k 512 over 256 over 128: the cost model does not count FP8 stage handshakes; they measured
// faster where the selector offers them. The BF16 issue floor extended to FP8 does not bind there, the load term
// does, and with a per-block promotion cost added it moved picks to unmeasured tiles, e.g. 64x2112x7168 to 64x32x512
// on 66 CTAs: replacing this needs a device-calibrated FP8 term), narrower BF16 stages (block_k 64 or 128), more
// stages, no cluster, data-parallel before split-K before stream-K, fewer K slices.
bool better_order(const GemmConfig& a, const GemmConfig& b) {
  const auto key = [](const GemmConfig& c) {
    const int fp8_multi_block_k = c.block_k >= 256 ? c.block_k : 0;  // BF16 256-wide stages are not offered
    return std::make_tuple(c.block_n, c.block_m, c.num_math_warpgroups, fp8_multi_block_k, -c.block_k, c.stages,
                           -c.cluster_m, -static_cast<int>(c.scheme), -c.split_k);
  };
  return key(a) > key(b);
}

// A candidate the selector may pick: the kernel runs it (legality) and the selector offers it (or the filter asks).
bool selectable(const GemmDesc& desc, const GemmConfig& c, const HardwareModel& hw, const ConfigFilter& filter,
                std::string* why) {
  if (!sm90_config_legal(desc, c, hw, why)) return false;
  *why = sm90_offer_problem(desc, c, filter);
  return why->empty();
}

bool differs(double a, double b) {
  return std::abs(a - b) > kTieTolerance * std::max(a, b);
}

// Busy fraction of the persistent slots: work units (tiles, or tiles × K slices) over waves × SMs.
double slot_utilisation(const CostBreakdown& c) {
  return static_cast<double>(c.work_units) / (static_cast<double>(c.waves) * c.num_sms);
}

// Predicted time first. When a whole-problem floor (DRAM, compute) hides the differences between tilings,
// prefer the tiling that keeps more SMs busy (more loads in flight, more headroom if the floor is
// optimistic), then the faster tile schedule, then the fixed order.
bool cheaper(const Candidate& a, const Candidate& b) {
  if (differs(a.cost.predicted_us, b.cost.predicted_us)) return a.cost.predicted_us < b.cost.predicted_us;
  const double ua = slot_utilisation(a.cost), ub = slot_utilisation(b.cost);
  if (differs(ua, ub)) return ua > ub;
  if (differs(a.cost.mainloop_us, b.cost.mainloop_us)) return a.cost.mainloop_us < b.cost.mainloop_us;
  return better_order(a.config, b.config);
}

// Whether the cheapest swapped candidate replaces the cheapest plain one (see kSwapAbMinGain).
bool swap_ab_pays(const Candidate& swapped, const Candidate& plain, SwapAb mode) {
  if (mode == SwapAb::kForced) return cheaper(swapped, plain);
  return swapped.cost.predicted_us <= (1.0 - kSwapAbMinGain) * plain.cost.predicted_us;
}

// The raw bytes of everything the selection depends on: the desc, the hardware numbers the legality rules
// and the cost model read, and the SM count. Built without formatting so a cache hit costs well under a µs.
template <typename T>
void append_raw(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Appends the split-K / stream-K variants of the data-parallel candidate at out.back() that the ledger's
// wave analysis proposes (sm90_scheme.cpp). TILEGEMM_GEMM_SCHEME may rule out the data-parallel one.
void add_scheme_variants(const GemmDesc& desc, const HardwareModel& hw, const ProblemLedger& problem,
                         const ConfigFilter& filter, std::vector<Candidate>& out) {
  const bool base_legal = out.back().legal;
  const GemmConfig base = out.back().config;
  if (env().force_scheme > 0 && base_legal) {
    out.back().legal = false;
    out.back().reject_reason = "TILEGEMM_GEMM_SCHEME excludes data-parallel";
  }
  if (!base_legal) return;
  for (SchemeChoice& choice : sm90_scheme_choices(desc, base, hw)) {
    if (choice.scheme == GemmScheme::kDataParallel) continue;
    Candidate cand;
    cand.config = base;
    cand.config.scheme = choice.scheme;
    cand.config.split_k = choice.split_k;
    cand.legal = selectable(desc, cand.config, hw, filter, &cand.reject_reason);
    if (cand.legal) cand.cost = sm90_cost(desc, cand.config, hw, problem);
    cand.scheme_reason = std::move(choice.why);
    out.push_back(std::move(cand));
  }
}

// The DG_PRINT_CONFIGS explanation of a choice: the scheme and the wave analysis behind it, the prediction.
std::string scheme_explanation(const GemmDesc& desc, const Candidate& best) {
  const CostBreakdown& c = best.cost;
  std::string why = best.scheme_reason.empty()
                        ? fmt::format("data-parallel: {} tiles on {} SMs = {} wave(s)", c.tiles, c.num_sms, c.waves)
                        : best.scheme_reason;
  if (best.config.scheme != GemmScheme::kDataParallel)
    why += desc.deterministic ? ", deterministic fix-up" : ", fp32 atomics in L2";
  return fmt::format("{}; predicted {:.1f} us ({}-bound)", why, c.predicted_us, c.bound);
}

std::string cache_key(const GemmDesc& d, const HardwareModel& hw, int num_sms) {
  std::string key;
  key.reserve(160 + hw.name.size());
  for (int v : {static_cast<int>(d.type),
                d.m,
                d.n,
                d.k,
                d.num_groups,
                d.expected_m,
                static_cast<int>(d.a_dtype),
                static_cast<int>(d.b_dtype),
                static_cast<int>(d.d_dtype),
                static_cast<int>(d.major_a),
                static_cast<int>(d.major_b),
                static_cast<int>(d.with_c),
                num_sms,
                hw.num_sms,
                hw.smem_per_block_bytes,
                hw.regs_per_sm,
                hw.max_regs_per_thread,
                hw.max_threads_per_sm,
                hw.max_cluster_size,
                static_cast<int>(d.deterministic),
                static_cast<int>(d.use_psum_layout),
                static_cast<int>(d.sfa_layout),
                static_cast<int>(d.sfb_strided),
                d.head_splits.left,
                d.head_splits.mid,
                d.head_splits.right,
                static_cast<int>(d.d_transposed),
                env().force_scheme,
                env().force_split_k})
    append_raw(key, v);
  for (double v : {hw.sm_clock_mhz, hw.flop_per_cycle_bf16, hw.hbm_gbps}) append_raw(key, v);
  key += hw.name;
  key += '\0';
  key += env().config_filter;
  return key;
}

// What both searches walk: the SMs, the problem's ledger, the filter and the stage widths of the dtype family.
struct SearchSpace {
  int sms = 0;
  ProblemShape shape;
  ProblemLedger problem;
  ConfigFilter filter;
  int forced_raster = 0;  // 0: derive it per tile shape
  std::span<const int> block_ks;
};

SearchSpace search_space(const GemmDesc& desc, const HardwareModel& hw, int num_sms) {
  validate_desc(desc);
  SearchSpace s;
  s.sms = resolve_num_sms(hw, num_sms);
  s.shape = sm90_problem_shape(desc);
  s.problem = problem_ledger(s.shape, sm90_operand_dtypes(desc), hw);
  s.filter = env_config_filter();  // read once: each read locks the environment
  s.forced_raster = s.filter.value_of("raster");
  const bool fp8 = is_fp8_desc(desc);
  s.block_ks = fp8                            ? std::span<const int>(kFp8BlockKs)
               : desc.a_dtype == DType::kInt8 ? std::span<const int>(kInt8BlockKs)
                                              : std::span<const int>(kBf16BlockKs);
  return s;
}

int max_stages(const GemmDesc& desc, int block_k) {
  return std::max(2, std::min(kMaxPreferredStages, static_cast<int>(ceil_div(desc.k, block_k))));
}

// The data-parallel config of one tile shape, before its raster group and stages (so its shared memory) are set.
GemmConfig tile_config(const GemmDesc& desc, const SearchSpace& s, int block_k, const ClusterShape& cluster,
                       const MathShape& math, int block_n) {
  GemmConfig c;
  c.block_m = math.block_m;
  c.num_math_warpgroups = math.num_math_warpgroups;
  c.block_n = block_n;
  c.block_k = block_k;
  c.cluster_m = cluster.cluster_m;
  c.multicast = cluster.multicast;
  c.swizzle_a_bytes = c.swizzle_b_bytes = 128;
  c.swap_ab = desc.d_transposed;  // swapped, D is staged in 128-byte rows of 64 columns
  c.swizzle_d_bytes = c.swap_ab ? 128 : d_swizzle_bytes(desc, block_n);
  c.num_sms = s.sms;
  c.split_k = 1;
  return c;
}

int raster_group(const SearchSpace& s, const GemmConfig& c) {
  return s.forced_raster > 0 ? s.forced_raster : choose_raster_group(s.shape, c.block_m, c.block_n, s.sms);
}

// rank_candidates(...).front() in one pass, for the selector: the cheapest by `cheaper`, without reasons, without
// costing what is rejected and without the sort. A tile shape the selector does not offer is skipped whole, its
// stages stop at the first ring that overflows shared memory (every deeper one does too), and its scheme choices
// (a function of the tile shape) are asked for once. nullopt when no candidate is legal and matches the filter:
// rank_candidates then throws the error that says why.
std::optional<Candidate> cheapest_candidate(const GemmDesc& desc, const HardwareModel& hw, int num_sms) {
  const SearchSpace s = search_space(desc, hw, num_sms);
  const bool data_parallel_excluded = env().force_scheme > 0;  // TILEGEMM_GEMM_SCHEME
  std::optional<Candidate> best;
  Candidate cand;
  cand.legal = true;
  const auto consider = [&](const GemmConfig& c, const std::string* scheme_reason) {  // c is legal
    if (!s.filter.matches(c)) return;
    cand.config = c;
    cand.cost = sm90_cost(desc, c, hw, s.problem);
    if (best && !cheaper(cand, *best)) return;
    best = cand;
    if (scheme_reason) best->scheme_reason = *scheme_reason;
  };
  for (const int block_k : s.block_ks) {
    const int stages_limit = max_stages(desc, block_k);
    for (const ClusterShape& cluster : kClusterShapes)
      for (const MathShape& math : kMathShapes)
        for (int block_n = 16; block_n <= 256; block_n += 8) {
          GemmConfig c = tile_config(desc, s, block_k, cluster, math, block_n);
          if (!sm90_offered(desc, c, s.filter, nullptr)) continue;
          c.raster_group = raster_group(s, c);
          std::optional<std::vector<SchemeChoice>> choices;
          for (c.stages = 2; c.stages <= stages_limit; ++c.stages) {
            c.smem_bytes = sm90_smem_bytes(desc, c);
            if (!sm90_smem_fits(c.smem_bytes, hw)) break;
            if (!sm90_config_legal(desc, c, hw, nullptr)) continue;
            if (!data_parallel_excluded) consider(c, nullptr);
            // The scheme variants of a legal data-parallel config, as add_scheme_variants.
            if (!choices) choices = sm90_scheme_choices(desc, c, hw);
            for (const SchemeChoice& choice : *choices) {
              if (choice.scheme == GemmScheme::kDataParallel) continue;
              GemmConfig variant = c;
              variant.scheme = choice.scheme;
              variant.split_k = choice.split_k;
              if (sm90_config_legal(desc, variant, hw, nullptr)) consider(variant, &choice.why);
            }
          }
        }
  }
  return best;
}
}  // namespace

std::vector<Candidate> enumerate_candidates(const GemmDesc& desc, const HardwareModel& hw, int num_sms) {
  const SearchSpace s = search_space(desc, hw, num_sms);
  std::vector<Candidate> out;
  for (const int block_k : s.block_ks) {
    const int stages_limit = max_stages(desc, block_k);
    for (const ClusterShape& cluster : kClusterShapes)
      for (const MathShape& math : kMathShapes)
        for (int block_n = 16; block_n <= 256; block_n += 8) {
          GemmConfig tile = tile_config(desc, s, block_k, cluster, math, block_n);
          tile.raster_group = raster_group(s, tile);
          for (int stages = 2; stages <= stages_limit; ++stages) {
            Candidate cand;
            GemmConfig& c = cand.config;
            c = tile;
            c.stages = stages;
            c.smem_bytes = sm90_smem_bytes(desc, c);
            cand.legal = selectable(desc, c, hw, s.filter, &cand.reject_reason);
            if (cand.legal) cand.cost = sm90_cost(desc, c, hw, s.problem);
            out.push_back(std::move(cand));
            add_scheme_variants(desc, hw, s.problem, s.filter, out);
          }
        }
  }
  return out;
}

std::vector<Candidate> rank_candidates(const GemmDesc& desc, const HardwareModel& hw, int num_sms) {
  const ConfigFilter& filter = env_config_filter();
  const SwapAb swap = swap_ab_mode(desc, filter);
  std::vector<Candidate> all = enumerate_candidates(desc, hw, num_sms);
  if (swap != SwapAb::kNo)
    for (Candidate& c : enumerate_candidates(swapped_problem(desc), hw, num_sms)) all.push_back(std::move(c));
  std::vector<Candidate> legal, swapped;
  std::string first_reason;
  bool any_legal = false;
  for (auto& c : all) {
    any_legal = any_legal || c.legal;
    if (c.legal && filter.matches(c.config))
      (c.config.swap_ab ? swapped : legal).push_back(std::move(c));
    else if (first_reason.empty() && !c.legal)
      first_reason = c.reject_reason;
  }
  // The selector's order: the swapped configs ahead of the plain ones where swap AB pays, else only the plain ones.
  std::sort(legal.begin(), legal.end(), cheaper);
  std::sort(swapped.begin(), swapped.end(), cheaper);
  if (!swapped.empty() && (legal.empty() || swap_ab_pays(swapped.front(), legal.front(), swap)))
    legal.insert(legal.begin(), std::make_move_iterator(swapped.begin()), std::make_move_iterator(swapped.end()));
  if (legal.empty() && any_legal)
    throw InvalidArgument("TILEGEMM_CONFIG_FILTER", "fields some legal config of this problem matches",
                          fmt::format("'{}' for {}", env().config_filter, to_string(desc)));
  if (legal.empty())
    throw InvalidArgument(
        "desc",
        is_fp8_desc(desc) ? "a problem some SM90 FP8 config can run" : "a problem some SM90 BF16 config can run",
        fmt::format("{} (every candidate rejected, e.g. {})", to_string(desc), first_reason));
  return legal;
}

GemmConfig ConfigSelector::select(const GemmDesc& desc, const HardwareModel& hw, int num_sms, bool print,
                                  std::FILE* sink) {
  const std::string key = cache_key(desc, hw, num_sms);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  // Selection runs outside the lock: two threads racing on a new desc both compute the same (deterministic)
  // answer and only the first insert prints.
  std::optional<Candidate> best = cheapest_candidate(desc, hw, num_sms);
  if (const SwapAb swap = swap_ab_mode(desc, env_config_filter()); swap != SwapAb::kNo) {
    std::optional<Candidate> swapped = cheapest_candidate(swapped_problem(desc), hw, num_sms);
    if (swapped && (!best || swap_ab_pays(*swapped, *best, swap))) best = std::move(swapped);
  }
  if (!best) best = rank_candidates(desc, hw, num_sms).front();  // throws the error that says why
  const GemmConfig config = best->config;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [it, inserted] = cache_.emplace(key, config);
  if (inserted && print && sink) {
    fmt::print(sink, "tilegemm: config {} -> {} | {}\n", to_string(desc), to_string(config),
               scheme_explanation(desc, *best));
    std::fflush(sink);
  }
  return it->second;
}

std::size_t ConfigSelector::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

void ConfigSelector::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.clear();
}

GemmConfig select_config(const GemmDesc& desc, const HardwareModel& hw, int num_sms) {
  static ConfigSelector selector;
  // DG_JIT_DEBUG implies printing, as in DeepGEMM.
  return selector.select(desc, hw, num_sms, env().print_configs || env().jit_debug, stderr);
}

}  // namespace tilegemm
