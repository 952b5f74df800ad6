// Int4 weights from the layouts quantisers write (GPTQ, AWQ) into WeightCodes (one code per byte, [n][group] scales
// and zero points), which pack_weight (wq_pack.cpp) then packs for the kernel.
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm {
namespace {

// AWQ's nibble order: nibble i of a word holds column 8c + kAwqOrder[i].
constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// Checks the arguments both importers take and returns the empty int4 weight (layout filled, arrays sized).
WeightCodes wq_import_shell(const std::int32_t* qweight, const std::int32_t* qzeros, const std::uint16_t* scales, int n,
                            int k, int group_size, DType act_dtype) {
  TILEGEMM_REQUIRE(qweight != nullptr, "qweight", "a non-null pointer to the packed codes", "nullptr");
  TILEGEMM_REQUIRE(qzeros != nullptr, "qzeros", "a non-null pointer to the packed zero points", "nullptr");
  TILEGEMM_REQUIRE(scales != nullptr, "scales", "a non-null pointer to [K / group][N] scales", "nullptr");
  WeightCodes w;
  w.layout = make_weight_layout(WeightFormat::kInt4, n, k, group_size, true, act_dtype);
  TILEGEMM_REQUIRE(n % 8 == 0, "n", "a multiple of 8 (eight codes per int32 word along N)", fmt::format("{}", n));
  const std::size_t groups = k / group_size;
  w.codes.resize(static_cast<std::size_t>(n) * k);
  w.scales.resize(static_cast<std::size_t>(n) * groups);
  w.zeros.resize(static_cast<std::size_t>(n) * groups);
  for (int gi = 0; gi < static_cast<int>(groups); ++gi)
    for (int col = 0; col < n; ++col) w.scales[col * groups + gi] = scales[static_cast<std::size_t>(gi) * n + col];
  return w;
}

int wq_nibble(std::int32_t word, int i) {
  return static_cast<int>((static_cast<std::uint32_t>(word) >> (4 * i)) & 0xF);
}

}  // namespace

WeightCodes import_gptq(const std::int32_t* qweight, const std::int32_t* qzeros, const std::uint16_t* scales, int n,
                        int k, int group_size, bool zeros_minus_one, DType act_dtype) {
  WeightCodes w = wq_import_shell(qweight, qzeros, scales, n, k, group_size, act_dtype);
  const std::size_t groups = k / group_size;
  // qweight [K / 8][N]: code (col, kk) in nibble kk % 8 of word (kk / 8, col).
  for (int kk = 0; kk < k; ++kk)
    for (int col = 0; col < n; ++col)
      w.codes[static_cast<std::size_t>(col) * k + kk] =
          static_cast<std::uint8_t>(wq_nibble(qweight[static_cast<std::size_t>(kk / 8) * n + col], kk % 8));
  // qzeros [K / g][N / 8]: zero (col, group) in nibble col % 8 of word (group, col / 8).
  for (int gi = 0; gi < static_cast<int>(groups); ++gi)
    for (int col = 0; col < n; ++col) {
      const int z = wq_nibble(qzeros[static_cast<std::size_t>(gi) * (n / 8) + col / 8], col % 8) + zeros_minus_one;
      TILEGEMM_REQUIRE(z < 16, "qzeros", "zero points that fit 4 bits (a stored 15 means 16 with zeros_minus_one)",
                       fmt::format("16 for row {}, group {}", col, gi));
      w.zeros[col * groups + gi] = static_cast<std::uint8_t>(z);
    }
  return w;
}

WeightCodes import_awq(const std::int32_t* qweight, const std::int32_t* qzeros, const std::uint16_t* scales, int n,
                       int k, int group_size, DType act_dtype) {
  WeightCodes w = wq_import_shell(qweight, qzeros, scales, n, k, group_size, act_dtype);
  const std::size_t groups = k / group_size;
  // qweight [K][N / 8] and qzeros [K / g][N / 8]: nibble i of word (row, c) holds column 8c + kAwqOrder[i].
  for (int kk = 0; kk < k; ++kk)
    for (int c = 0; c < n / 8; ++c)
      for (int i = 0; i < 8; ++i) {
        const int col = 8 * c + kAwqOrder[i];
        w.codes[static_cast<std::size_t>(col) * k + kk] =
            static_cast<std::uint8_t>(wq_nibble(qweight[static_cast<std::size_t>(kk) * (n / 8) + c], i));
      }
  for (int gi = 0; gi < static_cast<int>(groups); ++gi)
    for (int c = 0; c < n / 8; ++c)
      for (int i = 0; i < 8; ++i)
        w.zeros[(8 * c + kAwqOrder[i]) * groups + gi] =
            static_cast<std::uint8_t>(wq_nibble(qzeros[static_cast<std::size_t>(gi) * (n / 8) + c], i));
  return w;
}

}  // namespace tilegemm
