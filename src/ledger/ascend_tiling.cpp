// CATLASS "Common" template tiling constraints (CATLASS docs, 04_matmul_summary.md): the
// Ascend counterpart of the shared-memory / register ledger. L1 ~ shared memory, L0A/L0B ~ Cube inputs,
// L0C ~ the fp32 accumulator; L0 does not split M or N (m0 = m1, n0 = n1).
#include "tilegemm/errors.hpp"
#include "tilegemm/ledger.hpp"

namespace tilegemm {

namespace {
constexpr double kL0Buffers = 2;            // L0A/L0B are double-buffered so MAD overlaps the next L1 -> L0 load
constexpr double kL0cAccumulatorBytes = 4;  // L0C accumulates in fp32
}  // namespace

AscendTilingCheck ascend_tiling_check(const OperandDtypes& dtypes, int m1, int n1, int k1, int k0, int l1_stages,
                                      const HardwareModel& hw, const std::string& argument) {
  TILEGEMM_REQUIRE(
      hw.ascend_l1_bytes > 0 && hw.ascend_l0a_bytes > 0 && hw.ascend_l0b_bytes > 0 && hw.ascend_l0c_bytes > 0, argument,
      "an Ascend hardware model with L1/L0A/L0B/L0C sizes (ascend-950dt)", fmt::format("'{}'", hw.name));
  TILEGEMM_REQUIRE(m1 > 0, "--block-m", "a positive integer", std::to_string(m1));
  TILEGEMM_REQUIRE(n1 > 0, "--block-n", "a positive integer", std::to_string(n1));
  TILEGEMM_REQUIRE(k1 > 0, "--block-k", "a positive integer", std::to_string(k1));
  TILEGEMM_REQUIRE(k0 > 0, "--l0-k", "a positive integer", std::to_string(k0));
  TILEGEMM_REQUIRE(l1_stages > 0, "--stages", "a positive integer", std::to_string(l1_stages));

  AscendTilingCheck c;
  c.m1 = m1, c.n1 = n1, c.k1 = k1, c.k0 = k0, c.l1_stages = l1_stages;
  c.l1_bytes = (dtype_bytes(dtypes.a, double(m1) * k1) + dtype_bytes(dtypes.b, double(k1) * n1)) * l1_stages;
  c.l0a_bytes = dtype_bytes(dtypes.a, double(m1) * k0) * kL0Buffers;
  c.l0b_bytes = dtype_bytes(dtypes.b, double(k0) * n1) * kL0Buffers;
  c.l0c_bytes = double(m1) * n1 * kL0cAccumulatorBytes;
  c.l1_limit = hw.ascend_l1_bytes, c.l0a_limit = hw.ascend_l0a_bytes;
  c.l0b_limit = hw.ascend_l0b_bytes, c.l0c_limit = hw.ascend_l0c_bytes;
  c.l1_ok = c.l1_bytes <= c.l1_limit;
  c.l0a_ok = c.l0a_bytes <= c.l0a_limit;
  c.l0b_ok = c.l0b_bytes <= c.l0b_limit;
  c.l0c_ok = c.l0c_bytes <= c.l0c_limit;
  c.k_ok = k0 <= k1 && k1 % k0 == 0;
  return c;
}

std::string AscendTilingCheck::why_not() const {
  std::string why;
  auto add = [&](bool ok, const char* what, double need, int limit) {
    if (!ok) why += fmt::format("{}{} needs {} B > {} B", why.empty() ? "" : "; ", what, need, limit);
  };
  add(l1_ok, "L1", l1_bytes, l1_limit);
  add(l0a_ok, "L0A", l0a_bytes, l0a_limit);
  add(l0b_ok, "L0B", l0b_bytes, l0b_limit);
  add(l0c_ok, "L0C", l0c_bytes, l0c_limit);
  if (!k_ok) why += fmt::format("{}k0={} must divide k1={}", why.empty() ? "" : "; ", k0, k1);
  return why;
}

}  // namespace tilegemm
