#pragma once
// Weight-only quantised GEMM on SM90: D = A·Wᵀ with A bf16/fp16 [M, K] and W [N, K] stored as int4 (group scales,
// optional zero points), int8 (per-row scales) or MXFP4 (e2m1 codes, UE8M0 exponents per 32 k), D bf16/fp16/fp32.
// Small M decodes W in registers between the load and the tensor core (bound by reading the packed bytes); large M
// with bf16 activations decodes W once into a bf16 scratch and runs the dense BF16 GEMM (fp16 activations always take
// the fused path: there is no fp16 dense GEMM). The packed layout is in wq_params.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "tilegemm/gemm.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/jit.hpp"
#include "tilegemm/tensor_view.hpp"
#include "tilegemm/wq_params.hpp"

namespace tilegemm {

std::string_view weight_format_name(WeightFormat f);  // "int4", "int8", "mxfp4"
WeightFormat parse_weight_format(std::string_view name, const std::string& argument = "format");

// The shape of a packed weight: everything but the arrays.
struct WeightLayout {
  WeightFormat format = WeightFormat::kInt4;
  DType act_dtype = DType::kBFloat16;  // the activations' dtype the weight is packed for (int4 scales are stored in it)
  int n = 0, k = 0;                    // logical rows (output features) and K
  int group_size = 0;                  // int4: 32, 64 or 128; mxfp4: 32; int8: 0 (per row)
  bool has_zeros = false;              // int4 only
  int exp_shift = 0;                   // mxfp4: max(0, max exponent - 128), see wq_params.hpp
  int n_pad = 0, k_pad = 0;            // n rounded up to 16; k to 64 and to the group size

  int groups() const { return wq::groups_per_row(format, k_pad, group_size); }
  std::int64_t data_bytes() const;   // packed codes
  std::int64_t scale_bytes() const;  // group scales / exponents (0 for int8)
  std::int64_t zero_bytes() const;   // zero points (0 without)
};

// The layout of an (n, k) weight of `format` packed for `act_dtype`. Throws InvalidArgument naming the argument
// (n, k, group_size, act_dtype) the format does not take.
WeightLayout make_weight_layout(WeightFormat format, int n, int k, int group_size, bool has_zeros, DType act_dtype);

// Unpacked weights on the host, row-major, one code per byte.
struct WeightCodes {
  WeightLayout layout;                  // n_pad / k_pad / exp_shift are filled by pack_weight
  std::vector<std::uint8_t> codes;      // [n][k]: int4 0..15, int8 0..255 (value + 128), mxfp4 e2m1 codes 0..15
  std::vector<std::uint16_t> scales;    // int4: [n][k / group] bits of act_dtype values
  std::vector<std::uint8_t> exponents;  // mxfp4: [n][ceil(k / 32)] UE8M0 (0..254; 255 is NaN and refused)
  std::vector<std::uint8_t> zeros;      // int4 with zero points: [n][k / group] 0..15
  std::vector<float> channel_scales;    // int8: [n]
};

// The packed arrays on the host (layout in wq_params.hpp).
struct PackedWeight {
  WeightLayout layout;
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> scales;  // int4: act_dtype values as bytes; mxfp4: exponents
  std::vector<std::uint8_t> zeros;
  std::vector<float> channel_scales;  // [n_pad]
};

// Packs `w` (checked: sizes, code ranges, group size) into the kernel's layout. Throws InvalidArgument naming the
// field that is wrong.
PackedWeight pack_weight(const WeightCodes& w);

// The inverse of pack_weight: unpack_weight(pack_weight(w)) == w (with the layout's padded fields filled).
WeightCodes unpack_weight(const PackedWeight& p);

// Importers from the layouts quantisers write (row = output feature n, K the input features):
// GPTQ: qweight int32 [K / 8][N] (8 codes along K per word, lowest nibble first), qzeros int32 [K / g][N / 8]
// (8 codes along N per word; stored as zero - 1 when `zeros_minus_one`, GPTQ v1's convention), scales [K / g][N]
// as act_dtype bits. Act-order checkpoints (a g_idx that is not k / g) are refused by the caller.
WeightCodes import_gptq(const std::int32_t* qweight, const std::int32_t* qzeros, const std::uint16_t* scales, int n,
                        int k, int group_size, bool zeros_minus_one, DType act_dtype);
// AWQ: qweight int32 [K][N / 8] and qzeros int32 [K / g][N / 8], 8 codes along N per word in AWQ's order
// (nibble i holds column 8c + {0, 2, 4, 6, 1, 3, 5, 7}[i]), scales [K / g][N] as act_dtype bits.
WeightCodes import_awq(const std::int32_t* qweight, const std::int32_t* qzeros, const std::uint16_t* scales, int n,
                       int k, int group_size, DType act_dtype);

// float64 value of weight (row, col) of `w` (the math of wq_params.hpp, scales read from act_dtype bits).
double dequantized_weight(const WeightCodes& w, int row, int col);

// The device-side arrays of a packed weight, as the GEMM takes them.
struct PackedWeightView {
  WeightLayout layout;
  const void* data = nullptr;
  const void* scales = nullptr;
  const void* zeros = nullptr;            // null: no zero points
  const float* channel_scales = nullptr;  // int8
  // M-grouped: this many weights of `layout`, one after another in each array (MXFP4: layout.exp_shift the largest
  // of the experts' own shifts).
  int num_experts = 1;
};

// The ledger of a weight-only GEMM: where its time must go. Small M is bound by the packed bytes or by decoding
// them (lane instructions per weight, counted from the decode in device/tilegemm/prim/dequant.cuh); large M by the
// tensor cores, which the dense GEMM on a dequantised weight uses better than mma.sync does.
struct WqLedger {
  double packed_bytes = 0;        // codes, scales, zero points, channel scales
  double dense_weight_bytes = 0;  // the same weight as 16-bit values
  double act_bytes = 0, out_bytes = 0;
  double flops = 0;                  // 2·M·N·K
  double decode_ops = 0;             // lane instructions to decode the weight once
  double memory_floor_us = 0;        // (packed + A + D) at the DRAM bandwidth
  double decode_floor_us = 0;        // one decode of the weight at every SM's issue rate
  double dense_memory_floor_us = 0;  // what a 16-bit weight's GEMM must read, for the speed-up floor
};

// Lane instructions per decoded weight; `scale_each` false: int4 products scaled per chunk, not per weight.
double wq_decode_ops_per_weight(WeightFormat f, bool scale_each, DType act_dtype = DType::kBFloat16);
WqLedger wq_ledger(int m, const WeightLayout& w, DType d_dtype, const HardwareModel& hw);

// How one call runs.
struct WqGemmConfig {
  bool fused = true;  // decode in registers (else: dequantise to a scratch W, then the dense GEMM)
  int block_m = 0;    // tokens per CTA (fused)
  int stages = 0;
  int num_splits = 1;  // K slices per tile (fused)
  int k_groups = 1;    // sets of consumer warps per CTA taking turns at the stages (fused; wq_params.hpp)
  int grid = 0;        // CTAs along x (row blocks x token blocks x splits)
  int grid_y = 1;      // masked M-grouped: one row of CTAs per expert
  int smem_bytes = 0;
  double packed_bytes = 0;  // codes + scales + zeros
  double fused_us = 0;      // model time of the fused kernel
  double dequant_us = 0;    // model time of dequantise + dense GEMM
};

// `m`: the GEMM's rows (dense), all experts' rows (contiguous) or the expected rows per expert (masked). Grouped
// GEMMs run fused without a split.
WqGemmConfig select_wq_gemm_config(int m, const WeightLayout& w, DType d_dtype, const HardwareModel& hw, int num_sms,
                                   GemmType type = GemmType::kNormal, int num_experts = 1);
std::string format_wq_gemm_config(int m, const WeightLayout& w, const WqGemmConfig& config);

// D = A·Wᵀ. A [M, K] of w.act_dtype (K contiguous), D [M, N] bf16, fp16 or fp32 (N contiguous).
void wq_gemm_nt(const TensorView& a, const PackedWeightView& w, const TensorView& d, const GemmOptions& options = {});

// M-grouped over experts (MoE): `w` holds w.num_experts weights of one layout one after another.
// Contiguous: a [M, K] with each expert's rows together, grouped_layout int32 [M] the expert of each row (-1: padding
// rows, whose D rows are left unspecified); every expert's rows start on a multiple of the M alignment
// (get_mk_alignment_for_contiguous_layout, a multiple of 64 here), M a multiple of it. d [M, N].
void wq_m_grouped_gemm_nt_contiguous(const TensorView& a, const PackedWeightView& w, const TensorView& d,
                                     const TensorView& grouped_layout, const GemmOptions& options = {});
// Masked: a [E, M_max, K], d [E, M_max, N], masked_m int32 [E] the valid rows of each expert (read on the device; rows
// past it are not written), expected_m the caller's estimate of rows per expert (picks the token block).
void wq_m_grouped_gemm_nt_masked(const TensorView& a, const PackedWeightView& w, const TensorView& d,
                                 const TensorView& masked_m, int expected_m, const GemmOptions& options = {});

// W decoded into `out` [N, K] of w.act_dtype (K contiguous): the scratch of the large-M path, also a user's
// dequantise.
void wq_dequantize(const PackedWeightView& w, const TensorView& out, const GemmOptions& options = {});

}  // namespace tilegemm
