// The shapes a suite measures, layout names, and each shape's FLOPs and minimum DRAM bytes.
#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "tilegemm/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {
constexpr std::array<std::string_view, 4> kLayoutNames{"nt", "nn", "tn", "tt"};

// MoE expert GEMMs (the anchors' M-grouped table): groups × rows per group, then (N, K).
constexpr std::array<std::pair<int, int>, 2> kGroupedGM{{{4, 8192}, {8, 4096}}};
constexpr std::array<std::pair<int, int>, 2> kGroupedNK{{{4096, 7168}, {7168, 2048}}};

// DeepSeek-V3 projection shapes: the ledger owns the list (the anchors' dense table).
std::vector<BenchShape> deepseek_shapes() {
  std::vector<BenchShape> shapes;
  for (const ProblemShape& p : deepseek_suite())
    shapes.push_back(
        {GemmType::kNormal, 1, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k)});
  return shapes;
}

std::vector<BenchShape> grouped_shapes() {
  std::vector<BenchShape> shapes;
  for (auto [g, m] : kGroupedGM)
    for (auto [n, k] : kGroupedNK) shapes.push_back({GemmType::kMGroupedContiguous, g, m, n, k});
  return shapes;
}
}  // namespace

std::string_view layout_name(Layout layout) {
  return kLayoutNames.at(static_cast<int>(layout));
}

Layout parse_layout(std::string_view name, const std::string& argument) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::size_t i = 0; i < kLayoutNames.size(); ++i)
    if (kLayoutNames[i] == lower) return static_cast<Layout>(i);
  throw InvalidArgument(argument, "one of nt, nn, tn, tt", fmt::format("'{}'", name));
}

Major layout_major_a(Layout layout) {
  return layout == Layout::kNT || layout == Layout::kNN ? Major::kKMajor : Major::kMNMajor;
}
Major layout_major_b(Layout layout) {
  // DeepGEMM's names: the second letter is 't' when b is stored [N,K] (K-major).
  return layout == Layout::kNT || layout == Layout::kTT ? Major::kKMajor : Major::kMNMajor;
}

std::vector<std::string> suite_names() {
  return {"deepseek", "grouped", "all"};
}

std::vector<BenchShape> suite_shapes(std::string_view suite, const std::string& argument) {
  if (suite == "deepseek") return deepseek_shapes();
  if (suite == "grouped") return grouped_shapes();
  if (suite == "all") {
    auto shapes = deepseek_shapes();
    auto grouped = grouped_shapes();
    shapes.insert(shapes.end(), grouped.begin(), grouped.end());
    return shapes;
  }
  throw InvalidArgument(argument, "one of deepseek, grouped, all", fmt::format("'{}'", suite));
}

ProblemShape ledger_shape(const BenchShape& shape) {
  ProblemShape p;
  p.m = shape.total_m();
  p.n = shape.n;
  p.k = shape.k;
  if (shape.type == GemmType::kMGroupedContiguous) {
    p.batch = shape.groups;
    p.grouped = true;
    p.extra_bytes = dtype_bytes(DType::kInt32, static_cast<double>(p.m));
  }
  return p;
}

ProblemLedger bench_ledger(const BenchShape& shape, DType out_dtype, const HardwareModel& hw) {
  OperandDtypes dtypes = OperandDtypes::uniform(DType::kBFloat16);
  dtypes.d = out_dtype;
  return problem_ledger(ledger_shape(shape), dtypes, hw);
}

}  // namespace tilegemm
