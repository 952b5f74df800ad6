// The ladder's rungs on the GPU (F9): every rung computes D = A·Bᵀ correctly on ragged shapes — every
// element of D written, nothing outside it (guard bands, row padding), calc_diff < 1e-5 against float64 —
// and `run_ladder` checks and times all five on one problem.
#include <tuple>

#include "dense_case.hpp"
#include "ladder/ladder.hpp"

namespace gpu_test {
namespace {

struct LadderCase {
  int rung = 0;
  DenseCase dense;
};

std::string ladder_case_name(const LadderCase& c) {
  return fmt::format("rung{}_{}", c.rung, case_name(c.dense));
}
void PrintTo(const LadderCase& c, std::ostream* os) {
  *os << ladder_case_name(c);
}

DenseCase nt(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t d_pad = 0) {
  DenseCase c;
  c.m = m, c.n = n, c.k = k, c.d_pad = d_pad;
  return c;
}

// The shapes for every rung (one row; tiles cut in M, N and K; a long K), plus, for the JIT rungs
// 0-3, odd N and an odd D row stride (the epilogue's scalar-store path) and K not a multiple of 32.
std::vector<LadderCase> ladder_cases() {
  std::vector<LadderCase> cases;
  for (int rung = 0; rung < tilegemm::ladder::kNumRungs; ++rung) {
    for (const DenseCase& c : {nt(1, 8, 8), nt(129, 200, 72), nt(256, 256, 4096)}) cases.push_back({rung, c});
    if (rung != tilegemm::ladder::kProductionRung)
      for (const DenseCase& c : {nt(129, 200, 72, 1), nt(33, 131, 40), nt(300, 7, 16)}) cases.push_back({rung, c});
  }
  return cases;
}

class LadderRung : public ::testing::TestWithParam<LadderCase> {};

TEST_P(LadderRung, MatchesReference) {
  GPU_TEST_REQUIRE_SM90();
  const LadderCase& c = GetParam();
  run_dense_case(
      fmt::format("ladder rung {}", c.rung), c.dense,
      [rung = c.rung](const TensorView& a, const TensorView& b, const TensorView& d, const TensorView*) {
        tilegemm::ladder::run_rung(rung, a, b, d);
      },
      /*storage_operands=*/false, /*expect_accepted=*/true);
}

INSTANTIATE_TEST_SUITE_P(Ladder, LadderRung, ::testing::ValuesIn(ladder_cases()),
                         [](const ::testing::TestParamInfo<LadderCase>& info) { return ladder_case_name(info.param); });

// The whole ladder on one problem with short timing budgets: every rung checked, measured and passed.
TEST(LadderRun, EveryRungPassesAndIsTimed) {
  GPU_TEST_REQUIRE_SM90();
  tilegemm::ladder::LadderOptions options;
  options.m = 512, options.n = 384, options.k = 1024;
  options.warmup_ms = 2, options.rep_ms = 10;
  const tilegemm::ladder::LadderReport report = tilegemm::ladder::run_ladder(options);
  std::printf("%s", tilegemm::ladder::report_to_markdown(report).c_str());
  ASSERT_EQ(report.rows.size(), 5u);
  EXPECT_EQ(report.checked_rows, 512);  // small enough for the full reference
  for (const auto& row : report.rows) {
    SCOPED_TRACE(fmt::format("rung {}: {}", row.rung.index, row.error));
    EXPECT_TRUE(row.measured);
    EXPECT_TRUE(row.passed);
    EXPECT_GE(row.calc_diff, 0.0);
    EXPECT_LT(row.calc_diff, kMaxDiff);
    EXPECT_GT(row.tflops, 0.0);
  }
  EXPECT_TRUE(report.all_passed());
}

}  // namespace
}  // namespace gpu_test
