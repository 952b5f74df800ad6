// `tilegemm ledger`: the performance ledger of a GEMM (or of the DeepSeek or decode suite) on a hardware model —
// FLOPs, bytes, intensity, bound class and floors; with a tile: traffic, shared memory, registers,
// occupancy and waves; with --time-us: achieved TFLOP/s and GB/s against the floors. No GPU needed.
#include <climits>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "input_file.hpp"
#include "mqa_report.hpp"
#include "shared_checks.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm_config.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm::cli {
namespace {

struct LedgerArgs {
  std::optional<std::int64_t> m, n, k;
  std::int64_t batch = 1;
  bool grouped = false;
  double extra_bytes = 0;
  std::string dtype = "bf16";
  std::optional<std::string> a_dtype, b_dtype, out_dtype, c_dtype, math_dtype;
  bool with_c = false;
  std::string sf_a, sf_b;
  int sf_bits = 32;
  std::string hw = "h200";
  std::string hw_json;
  std::optional<double> hbm_gbps, sm_clock_mhz;
  std::optional<int> num_sms;
  std::string tile;
  std::optional<int> block_m, block_n, block_k, stages, threads, split_k, regs, l0_k;
  std::optional<double> time_us;
  std::string suite;
  bool json = false;
  std::string op = "gemm";
  MqaArgs mqa;  // --op mqa_logits / paged_mqa_logits
};

// "128x128x64" → {128, 128, 64}; `count` numbers separated by 'x', each a positive integer.
std::vector<int> parse_dims(const std::string& text, int count, const std::string& argument, const char* example) {
  std::vector<int> dims;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    try {
      size_t used = 0;
      const int v = std::stoi(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument(part);
      dims.push_back(v);
    } catch (const std::exception&) {
      throw InvalidArgument(argument, fmt::format("{} positive integers joined by 'x' such as {}", count, example),
                            fmt::format("'{}'", text));
    }
  }
  if (static_cast<int>(dims.size()) != count)
    throw InvalidArgument(argument, fmt::format("{} positive integers joined by 'x' such as {}", count, example),
                          fmt::format("'{}'", text));
  return dims;
}

HardwareModel hardware_from(const LedgerArgs& a) {
  HardwareModel hw;
  if (a.hw == "device") {
    if (!gpu_available())
      throw InvalidArgument("--hw", "a preset name when no GPU is present", "'device' (no CUDA GPU found)");
    hw = hardware_from_device(0);
  } else {
    hw = hardware_preset(a.hw, "--hw");
  }
  if (!a.hw_json.empty())
    apply_hardware_overrides_json(hw, read_input_file(a.hw_json, "--hw-json", "a readable JSON file"), "--hw-json");
  if (a.hbm_gbps) {
    TILEGEMM_REQUIRE(std::isfinite(*a.hbm_gbps) && *a.hbm_gbps > 0, "--hbm-gbps", "a finite bandwidth > 0 GB/s",
                     fmt::format("{}", *a.hbm_gbps));
    hw.hbm_gbps = *a.hbm_gbps;
  }
  if (a.sm_clock_mhz) {
    TILEGEMM_REQUIRE(std::isfinite(*a.sm_clock_mhz) && *a.sm_clock_mhz > 0, "--sm-clock-mhz", "a finite clock > 0 MHz",
                     fmt::format("{}", *a.sm_clock_mhz));
    hw.sm_clock_mhz = *a.sm_clock_mhz;
  }
  if (a.num_sms) {
    TILEGEMM_REQUIRE(*a.num_sms > 0, "--num-sms", "a positive SM count", std::to_string(*a.num_sms));
    hw.num_sms = *a.num_sms;
  }
  return hw;
}

OperandDtypes dtypes_from(const LedgerArgs& a) {
  const DType base = parse_dtype(a.dtype, "--dtype");
  OperandDtypes d = OperandDtypes::uniform(base);
  if (a.a_dtype) d.a = parse_dtype(*a.a_dtype, "--a-dtype");
  if (a.b_dtype) d.b = parse_dtype(*a.b_dtype, "--b-dtype");
  if (a.out_dtype) d.d = parse_dtype(*a.out_dtype, "--out-dtype");
  d.with_c = a.with_c || a.c_dtype.has_value();
  d.c = a.c_dtype ? parse_dtype(*a.c_dtype, "--c-dtype") : d.d;
  if (a.math_dtype) d.math = parse_dtype(*a.math_dtype, "--math-dtype");
  TILEGEMM_REQUIRE(a.sf_bits == 8 || a.sf_bits == 32, "--sf-bits", "8 (UE8M0) or 32 (fp32)", std::to_string(a.sf_bits));
  if (!a.sf_a.empty()) {
    const auto g = parse_dims(a.sf_a, 2, "--sf-a", "1x128");
    d.sf_a = ScaleFactors{g[0], g[1], a.sf_bits};
  }
  if (!a.sf_b.empty()) {
    const auto g = parse_dims(a.sf_b, 2, "--sf-b", "128x128");
    d.sf_b = ScaleFactors{g[0], g[1], a.sf_bits};
  }
  return d;
}

std::optional<TileShape> tile_from(const LedgerArgs& a, const OperandDtypes& d) {
  // --l0-k only refines a tile (Ascend), it does not ask for one.
  const bool any =
      !a.tile.empty() || a.block_m || a.block_n || a.block_k || a.stages || a.threads || a.split_k || a.regs;
  if (!any) return std::nullopt;
  TileShape t;
  t.block_k = dtype_bits(d.a) >= 16 ? 64 : 128;  // 128 bytes of K per row, the TMA swizzle width
  t.stages = 1;
  if (!a.tile.empty()) {
    const auto dims = parse_dims(a.tile, 3, "--tile", "128x128x64");
    t.block_m = dims[0], t.block_n = dims[1], t.block_k = dims[2];
  }
  if (a.block_m) t.block_m = *a.block_m;
  if (a.block_n) t.block_n = *a.block_n;
  if (a.block_k) t.block_k = *a.block_k;
  if (a.stages) t.stages = *a.stages;
  if (a.threads) t.threads = *a.threads;
  if (a.split_k) t.split_k = *a.split_k;
  if (a.regs) {
    // TileShape's 0 means "estimate"; a --regs 0 typed by the user would silently mean the same.
    TILEGEMM_REQUIRE(*a.regs > 0, "--regs",
                     "a register count > 0 (leave --regs out for the estimate: accumulators + 32)",
                     std::to_string(*a.regs));
    t.regs_per_thread = *a.regs;
  }
  return t;
}

// --grouped: --m is rows per group, as in `tilegemm plan` and DeepGEMM's M-grouped calls; the ledger's problem holds
// the rows of all groups.
std::int64_t all_rows(std::int64_t m, const LedgerArgs& a) {
  if (!a.grouped || m <= 0 || a.batch <= 0) return m;  // validate_problem_shape names the bad size
  constexpr std::int64_t kMaxRows = (std::int64_t{1} << 31) - 1;
  TILEGEMM_REQUIRE(m <= kMaxRows && a.batch <= kMaxRows / m, "--batch",
                   fmt::format("at most {} groups of --m = {} rows (all groups' rows at most 2^31 - 1)",
                               m <= kMaxRows ? kMaxRows / m : 0, m),
                   std::to_string(a.batch));
  return m * a.batch;
}

std::vector<ProblemShape> shapes_from(const LedgerArgs& a) {
  if (!a.suite.empty()) {
    TILEGEMM_REQUIRE(a.suite == "deepseek" || a.suite == "decode", "--suite", "'deepseek' or 'decode'",
                     fmt::format("'{}'", a.suite));
    TILEGEMM_REQUIRE(!a.m && !a.n && !a.k, "--suite", "no --m/--n/--k alongside a suite",
                     fmt::format("'{}' with a shape", a.suite));
    TILEGEMM_REQUIRE(!a.time_us, "--time-us", "a single shape (one time cannot belong to a whole suite)",
                     fmt::format("--suite {}", a.suite));
    std::vector<ProblemShape> shapes = a.suite == "decode" ? deepseek_decode_suite() : deepseek_suite();
    for (auto& s : shapes)
      s.m = all_rows(s.m, a), s.batch = a.batch, s.grouped = a.grouped, s.extra_bytes = a.extra_bytes;
    return shapes;
  }
  auto size = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("(missing)"); };
  TILEGEMM_REQUIRE(a.m && a.n && a.k, "--m/--n/--k", "all three sizes (or --suite deepseek)",
                   fmt::format("--m {} --n {} --k {}", size(a.m), size(a.n), size(a.k)));
  ProblemShape s;
  s.m = all_rows(*a.m, a), s.n = *a.n, s.k = *a.k;
  s.batch = a.batch, s.grouped = a.grouped, s.extra_bytes = a.extra_bytes;
  return {s};
}

std::string dtype_label(const OperandDtypes& d) {
  if (d.a == d.b && d.b == d.d && !d.math) return std::string(dtype_name(d.a));
  std::string label = fmt::format("{}x{}->{}", dtype_name(d.a), dtype_name(d.b), dtype_name(d.d));
  if (d.math) label += fmt::format(" ({})", dtype_name(*d.math));
  return label;
}

// What `tilegemm plan` launches for the same problem: the selector's config and its cost model's floors, which use
// derated peaks (measured HBM efficiency, tensor-core efficiency ceiling, the power model) where the ledger's use
// the datasheet's.
struct Selection {
  GemmConfig config;
  CostBreakdown cost;
};

// Everything computed for one shape; `tile`, `timing`, `ascend` and `selection` only when asked for or when the
// SM90 kernels run the problem.
struct Row {
  ProblemLedger problem;
  VariantDecision variant;
  TileShape variant_tile;  // the tile the textbook rule assumed
  std::optional<Selection> selection;
  std::optional<TileLedger> tile;
  std::optional<TimingLedger> timing;
  std::optional<AscendTilingCheck> ascend;
};

bool is_ascend(const HardwareModel& hw) {
  return hw.ascend_l1_bytes > 0;
}

// The SM90 kernels' problem for a ledger row (K-major operands), when they run it: bf16 or e4m3 A and B of one
// dtype, bf16 or fp32 D, on an NVIDIA preset; nothing otherwise.
std::optional<GemmDesc> sm90_desc(const ProblemShape& s, const OperandDtypes& d, const HardwareModel& hw) {
  const bool inputs = d.a == d.b && (d.a == DType::kBFloat16 || d.a == DType::kFloat8E4M3) && !d.math;
  const bool output = d.d == DType::kBFloat16 || d.d == DType::kFloat32;
  if (is_ascend(hw) || !inputs || !output || (d.with_c && d.c != d.d) || s.extra_bytes > 0) return std::nullopt;
  GemmDesc desc;
  desc.type = s.grouped ? GemmType::kMGroupedContiguous : s.batch > 1 ? GemmType::kBatched : GemmType::kNormal;
  desc.m = static_cast<int>(s.m), desc.n = static_cast<int>(s.n), desc.k = static_cast<int>(s.k);
  desc.num_groups = static_cast<int>(s.batch);
  desc.a_dtype = desc.b_dtype = d.a;
  desc.d_dtype = d.d;
  desc.with_c = d.with_c;
  try {
    validate_desc(desc);
  } catch (const InvalidArgument&) {
    return std::nullopt;  // e.g. an FP8 recipe the kernels do not have (1D2D with C)
  }
  return desc;
}

Row compute_row(const ProblemShape& s, const OperandDtypes& d, const std::optional<TileShape>& tile,
                const LedgerArgs& a, const HardwareModel& hw) {
  Row r;
  r.problem = problem_ledger(s, d, hw);
  r.variant_tile = tile.value_or(TileShape{128, 128, dtype_bits(d.a) >= 16 ? 64 : 128});
  r.variant = choose_variant(s, r.variant_tile.block_m, r.variant_tile.block_n, r.variant_tile.block_k, hw);
  if (const std::optional<GemmDesc> desc = sm90_desc(s, d, hw)) {
    try {
      const GemmConfig config = select_config(*desc, hw);
      r.selection = Selection{config, estimate_sm90_cost(*desc, config, hw)};
    } catch (const InvalidArgument&) {
      // No legal config (a shape the kernels refuse): the ledger stands alone, as on other hardware.
    }
  }
  if (tile) {
    r.tile = tile_ledger(s, d, *tile, hw);
    if (is_ascend(hw)) {
      const int k0 = a.l0_k.value_or(std::min(tile->block_k, 64));
      r.ascend =
          ascend_tiling_check(d, tile->block_m, tile->block_n, tile->block_k, k0, a.stages.value_or(2), hw, "--hw");
      if (!r.ascend->ok())
        throw InvalidArgument("--tile", fmt::format("a tile within the L1/L0 buffers of {}", hw.name),
                              fmt::format("{}x{}x{} with k0={}: {}", tile->block_m, tile->block_n, tile->block_k, k0,
                                          r.ascend->why_not()));
    } else if (!r.tile->fits()) {
      throw InvalidArgument("--tile", fmt::format("a tile that fits one SM of {}", hw.name),
                            fmt::format("{}x{}x{} with {} stages and {} threads: {}", tile->block_m, tile->block_n,
                                        tile->block_k, tile->stages, tile->threads, r.tile->why_not_fit()));
    }
  } else if (a.l0_k) {
    throw InvalidArgument("--l0-k", "a tile (--tile or --block-m/n/k) to check", "no tile");
  }
  if (a.time_us) r.timing = timing_ledger(r.problem, *a.time_us);
  return r;
}

nlohmann::ordered_json row_json(const Row& r) {
  const ProblemLedger& p = r.problem;
  nlohmann::ordered_json j;
  j["m"] = p.shape.m, j["n"] = p.shape.n, j["k"] = p.shape.k, j["batch"] = p.shape.batch;
  j["grouped"] = p.shape.grouped;
  j["a_dtype"] = dtype_name(p.dtypes.a), j["b_dtype"] = dtype_name(p.dtypes.b);
  j["out_dtype"] = dtype_name(p.dtypes.d);
  j["c_dtype"] = p.dtypes.with_c ? nlohmann::ordered_json(dtype_name(p.dtypes.c)) : nlohmann::ordered_json();
  j["math_dtype"] = dtype_name(p.math);
  j["flops"] = p.flops;
  j["bytes"] = {{"a", p.bytes.a}, {"b", p.bytes.b}, {"sf_a", p.bytes.sf_a},   {"sf_b", p.bytes.sf_b},
                {"c", p.bytes.c}, {"d", p.bytes.d}, {"extra", p.bytes.extra}, {"total", p.min_bytes}};
  j["intensity_ab"] = p.intensity_ab, j["intensity_all"] = p.intensity_all;
  j["peak_tflops"] = p.peak_flops / 1e12, j["bandwidth_gbps"] = p.bandwidth / 1e9;
  j["machine_balance"] = p.machine_balance;
  j["bound"] = bound_name(p.bound);
  j["compute_floor_us"] = p.compute_floor_s * 1e6, j["memory_floor_us"] = p.memory_floor_s * 1e6;
  j["time_floor_us"] = p.time_floor_s * 1e6;
  j["naive_ab_bytes"] = p.naive_ab_bytes;
  j["variant"] = {
      {"variant", variant_name(r.variant.variant)},
      {"tiles", r.variant.tiles},
      {"k_iters", r.variant.k_iters},
      {"suggested_split_k", r.variant.suggested_split_k},
      {"reason", r.variant.reason},
      {"rule_tile", fmt::format("{}x{}x{}", r.variant_tile.block_m, r.variant_tile.block_n, r.variant_tile.block_k)}};
  if (r.selection) {
    const GemmConfig& c = r.selection->config;
    j["selector"] = {{"block_m", c.block_m},
                     {"block_n", c.block_n},
                     {"block_k", c.block_k},
                     {"scheme", scheme_name(c.scheme)},
                     {"split_k", c.split_k},
                     {"tiles", r.selection->cost.tiles},
                     {"dram_floor_us", r.selection->cost.dram_floor_us},
                     {"compute_floor_us", r.selection->cost.compute_floor_us},
                     {"dram_bytes", r.selection->cost.dram_bytes}};
  }
  if (r.tile) {
    const TileLedger& t = *r.tile;
    j["tile"] = {{"block_m", t.tile.block_m},
                 {"block_n", t.tile.block_n},
                 {"block_k", t.tile.block_k},
                 {"stages", t.tile.stages},
                 {"threads", t.tile.threads},
                 {"split_k", t.tile.split_k},
                 {"ab_bytes", t.ab_bytes},
                 {"output_bytes", t.output_bytes},
                 {"dram_bytes", t.dram_bytes},
                 {"traffic_over_minimum", t.traffic_over_minimum},
                 {"smem_per_stage", t.smem_per_stage},
                 {"smem_total", t.smem_total},
                 {"smem_limit", t.smem_limit},
                 {"accum_regs_per_thread", t.accum_regs_per_thread},
                 {"regs_per_thread", t.occupancy.regs_per_thread},
                 {"blocks_per_sm", t.occupancy.blocks_per_sm},
                 {"occupancy_limiter", t.occupancy.limiter},
                 {"tiles_m", t.tiles_m},
                 {"tiles_n", t.tiles_n},
                 {"tiles", t.tiles},
                 {"waves", t.waves.waves},
                 {"last_wave_units", t.waves.last_wave_units},
                 {"last_wave_utilisation", t.waves.last_wave_utilisation},
                 {"wave_efficiency", t.waves.efficiency},
                 {"splitk_extra_write_bytes", t.splitk_extra_write_bytes},
                 {"splitk_extra_read_bytes", t.splitk_extra_read_bytes}};
  }
  if (r.ascend) {
    const AscendTilingCheck& c = *r.ascend;
    j["ascend"] = {{"m1", c.m1},
                   {"n1", c.n1},
                   {"k1", c.k1},
                   {"k0", c.k0},
                   {"l1_stages", c.l1_stages},
                   {"l1_bytes", c.l1_bytes},
                   {"l1_limit", c.l1_limit},
                   {"l0a_bytes", c.l0a_bytes},
                   {"l0a_limit", c.l0a_limit},
                   {"l0b_bytes", c.l0b_bytes},
                   {"l0b_limit", c.l0b_limit},
                   {"l0c_bytes", c.l0c_bytes},
                   {"l0c_limit", c.l0c_limit},
                   {"ok", c.ok()}};
  }
  if (r.timing) {
    const TimingLedger& t = *r.timing;
    j["timing"] = {{"time_us", t.time_s * 1e6},
                   {"tflops", t.tflops},
                   {"gbps", t.gbps},
                   {"fraction_of_peak", t.fraction_of_peak},
                   {"fraction_of_bandwidth", t.fraction_of_bandwidth},
                   {"fraction_of_floor", t.fraction_of_floor}};
  }
  return j;
}

void print_ledger_detail(const Row& r, const HardwareModel& hw) {
  const ProblemLedger& p = r.problem;
  fmt::print("GEMM M={} N={} K={}{}  {}  on {} ({} SMs, {:.0f} MHz, {:.0f} GB/s)\n", p.shape.m, p.shape.n, p.shape.k,
             p.shape.batch <= 1 ? ""
             : p.shape.grouped  ? fmt::format(" ({} groups of {} rows)", p.shape.batch, p.shape.m / p.shape.batch)
                                : fmt::format(" x{} batch", p.shape.batch),
             dtype_label(p.dtypes), hw.name, hw.num_sms, hw.sm_clock_mhz, hw.hbm_gbps);
  fmt::print("  FLOPs              {:.6g} ({:.3f} GFLOP)\n", p.flops, p.flops / 1e9);
  fmt::print(
      "  minimum bytes      {:.6g} ({:.2f} MB): A {:.4g}  B {:.4g}  SF {:.4g}  C {:.4g}  D {:.4g}  extra {:.4g}\n",
      p.min_bytes, p.min_bytes / 1e6, p.bytes.a, p.bytes.b, p.bytes.sf_a + p.bytes.sf_b, p.bytes.c, p.bytes.d,
      p.bytes.extra);
  fmt::print("  intensity          {:.1f} FLOP/B over all operands, {:.1f} over A+B\n", p.intensity_all,
             p.intensity_ab);
  fmt::print("  machine balance    {:.1f} FLOP/B ({:.1f} TFLOP/s {} / {:.0f} GB/s) -> {}-bound\n", p.machine_balance,
             p.peak_flops / 1e12, dtype_name(p.math), p.bandwidth / 1e9, bound_name(p.bound));
  fmt::print("  floors             compute {:.2f} us, memory {:.2f} us, time floor {:.2f} us\n",
             p.compute_floor_s * 1e6, p.memory_floor_s * 1e6, p.time_floor_s * 1e6);
  fmt::print("  naive (rung 0)     {:.4g} B of A+B reads ({:.0f}x the minimum)\n", p.naive_ab_bytes,
             p.naive_ab_bytes / p.min_bytes);
  if (r.timing) {
    const TimingLedger& t = *r.timing;
    fmt::print(
        "  at {:<15} {:.1f} TFLOP/s ({:.1f}% of peak), {:.0f} GB/s ({:.1f}% of HBM), {:.1f}% of "
        "the time floor\n",
        fmt::format("{:.2f} us", t.time_s * 1e6), t.tflops, 100 * t.fraction_of_peak, t.gbps,
        100 * t.fraction_of_bandwidth, 100 * t.fraction_of_floor);
  }
  if (r.tile) {
    const TileLedger& t = *r.tile;
    fmt::print("  tile {}x{}x{}, {} stages, {} threads, split-K {}\n", t.tile.block_m, t.tile.block_n, t.tile.block_k,
               t.tile.stages, t.tile.threads, t.tile.split_k);
    fmt::print("    DRAM traffic     {:.4g} B (A+B {:.4g}, out {:.4g}, split-K {:.4g}) = {:.2f}x the minimum\n",
               t.dram_bytes, t.ab_bytes, t.output_bytes, t.splitk_extra_write_bytes + t.splitk_extra_read_bytes,
               t.traffic_over_minimum);
    fmt::print("    shared memory    {:.0f} B/stage, {:.0f} B total of {} B per block\n", t.smem_per_stage,
               t.smem_total, t.smem_limit);
    if (hw.regs_per_sm > 0)
      fmt::print("    registers        {} fp32 accumulators/thread, ~{} allocated/thread\n", t.accum_regs_per_thread,
                 t.occupancy.regs_per_thread);
    else
      fmt::print("    registers        not modelled on {} (the accumulator lives in L0C)\n", hw.name);
    fmt::print("    occupancy        {} blocks/SM (limited by {})\n", t.occupancy.blocks_per_sm, t.occupancy.limiter);
    fmt::print("    tiles            {} x {} = {}; {} work units in {} waves on {} SMs, last wave {}/{} ({:.1f}%)\n",
               t.tiles_m, t.tiles_n, t.tiles, t.waves.work_units, t.waves.waves, t.waves.slots, t.waves.last_wave_units,
               t.waves.slots, 100 * t.waves.last_wave_utilisation);
  }
  if (r.ascend) {
    const AscendTilingCheck& c = *r.ascend;
    fmt::print(
        "    CATLASS L1/L0    L1 {:.0f}/{}  L0A {:.0f}/{}  L0B {:.0f}/{}  L0C {:.0f}/{} B (k0={}, {} L1 stages): "
        "ok\n",
        c.l1_bytes, c.l1_limit, c.l0a_bytes, c.l0a_limit, c.l0b_bytes, c.l0b_limit, c.l0c_bytes, c.l0c_limit, c.k0,
        c.l1_stages);
  }
  fmt::print("  variant            {} (textbook rule, tile {}x{}x{}): {}\n", variant_name(r.variant.variant),
             r.variant_tile.block_m, r.variant_tile.block_n, r.variant_tile.block_k, r.variant.reason);
  if (r.selection) {
    const GemmConfig& c = r.selection->config;
    const CostBreakdown& cost = r.selection->cost;
    fmt::print("  selector           {}x{}x{} {}{}, {} tiles: what `tilegemm plan` launches\n", c.block_m, c.block_n,
               c.block_k, scheme_name(c.scheme), c.split_k > 1 ? fmt::format(" split_k={}", c.split_k) : "",
               cost.tiles);
    fmt::print(
        "  planner floors     DRAM {:.2f} us ({:.2f} MB its tiles read and write, at the measured HBM efficiency), "
        "compute {:.2f} us (derated tensor peak); the floors above use the datasheet's peaks and the minimum "
        "bytes\n",
        cost.dram_floor_us, cost.dram_bytes / 1e6, cost.compute_floor_us);
  }
}

void print_table(const std::vector<Row>& rows, const HardwareModel& hw) {
  const bool tiled = rows.front().tile.has_value();
  fmt::print("ledger on {} ({} SMs, {:.0f} MHz, {:.0f} GB/s)\n", hw.name, hw.num_sms, hw.sm_clock_mhz, hw.hbm_gbps);
  fmt::print("{:>6} {:>6} {:>6} {:>14} {:>9} {:>9} {:>8} {:>8} {:>10}", "M", "N", "K", "dtype", "GFLOP", "MB", "FLOP/B",
             "bound", "floor_us");
  if (tiled) fmt::print(" {:>6} {:>5} {:>10}", "tiles", "waves", "last_wave");
  fmt::print(" {:>13} {:>22}\n", "variant", "selector (plan)");
  for (const Row& r : rows) {
    const ProblemLedger& p = r.problem;
    fmt::print("{:>6} {:>6} {:>6} {:>14} {:>9.2f} {:>9.2f} {:>8.1f} {:>8} {:>10.2f}", p.shape.m, p.shape.n, p.shape.k,
               dtype_label(p.dtypes), p.flops / 1e9, p.min_bytes / 1e6, p.intensity_all, bound_name(p.bound),
               p.time_floor_s * 1e6);
    if (tiled)
      fmt::print(" {:>6} {:>5} {:>10}", r.tile->tiles, r.tile->waves.waves,
                 fmt::format("{}/{}", r.tile->waves.last_wave_units, r.tile->waves.slots));
    std::string selector = "-";
    if (r.selection) {
      const GemmConfig& c = r.selection->config;
      selector = fmt::format("{}x{}x{} {}", c.block_m, c.block_n, c.block_k, scheme_name(c.scheme));
    }
    fmt::print(" {:>13} {:>22}\n", variant_name(r.variant.variant), selector);
  }
}

// The MQA-logits operators' ledger (mqa_report.cpp): --m / --n rows and tokens (prefill), --batch items (decode).
void run_mqa_ledger(const LedgerArgs& a, const HardwareModel& hw) {
  const auto as_int = [](const std::optional<std::int64_t>& v, const char* option) -> std::optional<int> {
    if (!v) return std::nullopt;
    TILEGEMM_REQUIRE(*v >= 0 && *v <= INT_MAX, option, "a count in [0, 2^31)", fmt::format("{}", *v));
    return static_cast<int>(*v);
  };
  TILEGEMM_REQUIRE(a.batch >= 0 && a.batch <= INT_MAX, "--batch", "an item count in [0, 2^31)",
                   fmt::format("{}", a.batch));
  print_mqa_report(a.op, a.mqa, {as_int(a.m, "--m"), as_int(a.n, "--n"), static_cast<int>(a.batch)}, hw, hw.num_sms,
                   false, a.json);
}

void run_ledger(const LedgerArgs& a) {
  TILEGEMM_REQUIRE(a.op == "gemm" || a.op == "mqa_logits" || a.op == "paged_mqa_logits", "--op",
                   "gemm, mqa_logits or paged_mqa_logits", fmt::format("'{}'", a.op));
  if (a.op != "gemm") return run_mqa_ledger(a, hardware_from(a));
  const std::vector<ProblemShape> shapes = shapes_from(a);
  const OperandDtypes dtypes = dtypes_from(a);
  const HardwareModel hw = hardware_from(a);
  const std::optional<TileShape> tile = tile_from(a, dtypes);

  // The peak of the math type is looked up on the hardware model ("math dtype" in the library): the dtype
  // options chose it and --hw (with --hw-json) has no FLOP/cycle for it.
  const std::string dtype_option = a.math_dtype             ? "--math-dtype"
                                   : a.a_dtype || a.b_dtype ? "--a-dtype/--b-dtype"
                                                            : "--dtype";
  const std::string hw_option = a.hw_json.empty() ? "--hw " + a.hw : "--hw " + a.hw + " with --hw-json";
  std::vector<Row> rows;
  with_option_names({{"math dtype", fmt::format("{} (on {})", dtype_option, hw_option)}}, [&] {
    for (const ProblemShape& s : shapes) rows.push_back(compute_row(s, dtypes, tile, a, hw));
  });

  if (a.json) {
    nlohmann::ordered_json out;
    out["hardware"] = nlohmann::ordered_json::parse(hardware_to_json(hw));
    out["results"] = nlohmann::ordered_json::array();
    for (const Row& r : rows) out["results"].push_back(row_json(r));
    fmt::print("{}\n", out.dump(2));
  } else if (a.suite.empty()) {
    print_ledger_detail(rows.front(), hw);
  } else {
    print_table(rows, hw);
  }
}

const CommandRegistrar kLedgerRegistrar([](CLI::App& root) {
  auto a = std::make_shared<LedgerArgs>();
  CLI::App* cmd = root.add_subcommand("ledger",
                                      "The performance ledger of a GEMM: FLOPs, bytes, intensity, bound, "
                                      "floors, tile resources and waves (no GPU needed)");
  cmd->add_option("--m", a->m, "Rows of A and D (grouped: rows per group)");
  cmd->add_option("--n", a->n, "Columns of D");
  cmd->add_option("--k", a->k, "Reduction size");
  cmd->add_option("--batch", a->batch, "Number of problems (batched) or groups (with --grouped)")
      ->capture_default_str();
  cmd->add_flag("--grouped", a->grouped, "M-grouped: --batch groups of --m rows each, B holds --batch matrices");
  cmd->add_option("--extra-bytes", a->extra_bytes, "Other DRAM bytes the operator moves (e.g. an fp32 [M] row sum)");
  cmd->add_option("--dtype", a->dtype, "Dtype of A, B and D unless overridden")->capture_default_str();
  cmd->add_option("--a-dtype", a->a_dtype, "Dtype of A");
  cmd->add_option("--b-dtype", a->b_dtype, "Dtype of B");
  cmd->add_option("--out-dtype", a->out_dtype, "Dtype of D");
  cmd->add_option("--c-dtype", a->c_dtype, "Dtype of C (implies --with-c)");
  cmd->add_flag("--with-c", a->with_c, "D = C + A*B: C is read once");
  cmd->add_option("--math-dtype", a->math_dtype, "Tensor-core path (default: the wider of A and B; fp32 = CUDA cores)");
  cmd->add_option("--sf-a", a->sf_a, "Block scales of A as MxK granularity, e.g. 1x128");
  cmd->add_option("--sf-b", a->sf_b, "Block scales of B as NxK granularity, e.g. 128x128");
  cmd->add_option("--sf-bits", a->sf_bits, "Bits per scale: 32 (fp32) or 8 (UE8M0)")->capture_default_str();
  cmd->add_option("--hw", a->hw, "Hardware: h100-sxm, h800, h200, h20, ascend-950dt, or 'device'")
      ->capture_default_str();
  cmd->add_option("--hw-json", a->hw_json, "JSON file of HardwareModel field overrides, e.g. {\"hbm_gbps\": 4272}");
  cmd->add_option("--hbm-gbps", a->hbm_gbps, "Override the DRAM bandwidth (GB/s)");
  cmd->add_option("--num-sms", a->num_sms, "Override the SM count");
  cmd->add_option("--sm-clock-mhz", a->sm_clock_mhz, "Override the SM clock the peaks use (MHz)");
  cmd->add_option("--tile", a->tile, "Tile as BLOCK_MxBLOCK_NxBLOCK_K, e.g. 128x128x64");
  cmd->add_option("--block-m", a->block_m, "Tile rows");
  cmd->add_option("--block-n", a->block_n, "Tile columns");
  cmd->add_option("--block-k", a->block_k, "Tile depth");
  cmd->add_option("--stages", a->stages, "Pipeline stages (default 1; Ascend L1 stages default 2)");
  cmd->add_option("--threads", a->threads, "Threads per block (default 128)");
  cmd->add_option("--split-k", a->split_k, "K slices (default 1)");
  cmd->add_option("--regs", a->regs, "Registers per thread if known (default: accumulators + 32)");
  cmd->add_option("--l0-k", a->l0_k, "Ascend: L0 K step k0 (default min(block_k, 64))");
  cmd->add_option("--time-us", a->time_us, "A measured time: report TFLOP/s, GB/s and fractions of the floors");
  cmd->add_option("--suite", a->suite,
                  "Every shape of a suite: deepseek, or decode (the same weights at M = 1, 8, 16, 32)");
  cmd->add_flag("--json", a->json, "Print JSON instead of text");
  cmd->add_option("--op", a->op,
                  "gemm, mqa_logits (fp8_mqa_logits: --m query rows, --n KV tokens) or paged_mqa_logits "
                  "(fp8_paged_mqa_logits: --batch items of --context tokens)")
      ->capture_default_str();
  add_mqa_options(cmd, a->mqa);
  cmd->callback([a] { run_ledger(*a); });
});

}  // namespace
}  // namespace tilegemm::cli
