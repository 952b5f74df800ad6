// The shapes a suite measures, layout names, and each shape's FLOPs and minimum DRAM bytes.
#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "bench/bench.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace {
constexpr std::array<std::string_view, 4> kLayoutNames{"nt", "nn", "tn", "tt"};

// MoE expert GEMMs (the anchors' M-grouped table): groups × rows per group, then (N, K).
constexpr std::array<std::pair<int, int>, 2> kGroupedGM{{{4, 8192}, {8, 4096}}};
constexpr std::array<std::pair<int, int>, 2> kGroupedNK{{{4096, 7168}, {7168, 2048}}};

// DeepSeek-V3 projection shapes: the ledger owns the lists (the anchors' dense table; its decode twin).
std::vector<BenchShape> dense_shapes(const std::vector<ProblemShape>& problems) {
  std::vector<BenchShape> shapes;
  for (const ProblemShape& p : problems)
    shapes.push_back({GemmType::kNormal, 1, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k)});
  return shapes;
}

// The masked suite reuses the contiguous list, so each masked shape has a contiguous twin of the same total M.
std::vector<BenchShape> grouped_shapes(GemmType type) {
  std::vector<BenchShape> shapes;
  for (auto [g, m] : kGroupedGM)
    for (auto [n, k] : kGroupedNK) shapes.push_back({type, g, m, n, k});
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
  return {"deepseek", "decode", "grouped", "masked", "all"};
}

std::vector<BenchShape> suite_shapes(std::string_view suite, const std::string& argument) {
  if (suite == "deepseek") return dense_shapes(deepseek_suite());
  if (suite == "decode") return dense_shapes(deepseek_decode_suite());
  if (suite == "grouped") return grouped_shapes(GemmType::kMGroupedContiguous);
  if (suite == "masked") return grouped_shapes(GemmType::kMGroupedMasked);
  if (suite == "all") {
    auto shapes = dense_shapes(deepseek_suite());
    for (GemmType type : {GemmType::kMGroupedContiguous, GemmType::kMGroupedMasked}) {
      const auto grouped = grouped_shapes(type);
      shapes.insert(shapes.end(), grouped.begin(), grouped.end());
    }
    return shapes;
  }
  throw InvalidArgument(argument, "one of deepseek, decode, grouped, masked, all", fmt::format("'{}'", suite));
}

ProblemShape ledger_shape(const BenchShape& shape) {
  ProblemShape p;
  p.m = shape.total_m();
  p.n = shape.n;
  p.k = shape.k;
  if (shape.type == GemmType::kMGroupedContiguous || shape.type == GemmType::kMGroupedMasked) {
    p.batch = shape.groups;
    p.grouped = true;
    // Contiguous: one group index per row; masked: one valid-row count per group.
    const double ints = shape.type == GemmType::kMGroupedContiguous ? static_cast<double>(p.m) : shape.groups;
    p.extra_bytes = dtype_bytes(DType::kInt32, ints);
  }
  return p;
}

OperandDtypes bench_operand_dtypes(DType in_dtype, DType out_dtype) {
  OperandDtypes dtypes = OperandDtypes::uniform(in_dtype);
  dtypes.d = out_dtype;
  if (in_dtype == DType::kFloat8E4M3) {
    dtypes.sf_a = {1, 128, 32};    // per token
    dtypes.sf_b = {128, 128, 32};  // per 128×128 block
  }
  return dtypes;
}

ProblemLedger bench_ledger(const BenchShape& shape, DType in_dtype, DType out_dtype, const HardwareModel& hw) {
  return problem_ledger(ledger_shape(shape), bench_operand_dtypes(in_dtype, out_dtype), hw);
}

ProblemLedger bench_ledger(const BenchShape& shape, DType out_dtype, const HardwareModel& hw) {
  return bench_ledger(shape, DType::kBFloat16, out_dtype, hw);
}

}  // namespace tilegemm
