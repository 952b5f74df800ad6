// Weight-only rows (--weight): our wq_gemm_nt on a packed weight against cuBLASLt bf16 on the same weight
// dequantised to bf16. Both see exactly the same weight values (an int4 weight is its scale times q - z rounded to
// bf16 once, as the kernel decodes it; int8's channel scale is applied to the fp32 accumulator by ours and to the
// bf16 weight by the baseline, hence the loose sanity threshold). --read-b reads the packed codes.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "bench/host_data.hpp"
#include "bench/shape_run.hpp"
#include "tilegemm/reference.hpp"
#include "tilegemm/weight_quant.hpp"

namespace tilegemm::bench_detail {

namespace {

// Random codes and group data of `layout` (scales of either sign about 2^-6, MXFP4 exponents around 2^-4).
WeightCodes random_codes(const WeightLayout& layout, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  WeightCodes w;
  w.layout = layout;
  const std::int64_t n = layout.n, k = layout.k;
  w.codes.resize(static_cast<std::size_t>(n * k));
  const int top = layout.format == WeightFormat::kInt8 ? 255 : 15;
  for (auto& q : w.codes) q = static_cast<std::uint8_t>(rng() % (top + 1));
  if (layout.format == WeightFormat::kInt4) {
    const std::size_t entries = static_cast<std::size_t>(n * (k / layout.group_size));
    for (std::size_t i = 0; i < entries; ++i) {
      const float s = std::ldexp(static_cast<float>(64 + rng() % 64), -12) * (rng() % 2 ? 1.f : -1.f);
      std::uint32_t bits;
      std::memcpy(&bits, &s, 4);
      w.scales.push_back(static_cast<std::uint16_t>(bits >> 16));  // exact: 7 significant bits
      if (layout.has_zeros) w.zeros.push_back(static_cast<std::uint8_t>(rng() % 16));
    }
  } else if (layout.format == WeightFormat::kMxfp4) {
    w.exponents.resize(static_cast<std::size_t>(n * ((k + 31) / 32)));
    for (auto& e : w.exponents) e = static_cast<std::uint8_t>(120 + rng() % 6);
  } else {
    for (std::int64_t i = 0; i < n; ++i) w.channel_scales.push_back(std::ldexp(1.f + (rng() % 256) / 256.f, -10));
  }
  return w;
}

}  // namespace

ShapeRun prepare_wq_run(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                        std::uint64_t seed) {
  const std::int64_t m = shape.total_m(), n = shape.n, k = shape.k;
  const WeightFormat format = *options.weight;
  const int group = format == WeightFormat::kInt4 ? options.weight_group_size : format == WeightFormat::kMxfp4 ? 32 : 0;
  const WeightLayout layout = make_weight_layout(format, static_cast<int>(n), static_cast<int>(k), group,
                                                 options.weight_zeros, DType::kBFloat16);
  const WeightCodes codes = random_codes(layout, seed + 1);
  const PackedWeight packed = pack_weight(codes);
  const std::size_t d_elem = dtype_bits(options.out_dtype) / 8;

  ShapeRun run;
  run.d_dtype = options.out_dtype;
  std::vector<std::uint16_t> a_host(static_cast<std::size_t>(m * k));
  fill_random_bf16(a_host.data(), a_host.size(), seed);
  void* a_data = run.buffers.emplace_back(upload(a_host.data(), a_host.size() * kBf16Bytes, "cudaMemcpy(A)")).get();
  // The baseline's B: the weight's values as bf16 (each is one: rounded once where the kernel rounds it).
  std::vector<std::uint16_t> w_bf16(static_cast<std::size_t>(n * k));
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < k; ++c)
      w_bf16[r * k + c] =
          float_to_bf16(static_cast<float>(dequantized_weight(codes, static_cast<int>(r), static_cast<int>(c))));
  void* b_data = run.buffers.emplace_back(upload(w_bf16.data(), w_bf16.size() * kBf16Bytes, "cudaMemcpy(W)")).get();
  void* codes_data =
      run.buffers.emplace_back(upload(packed.data.data(), packed.data.size(), "cudaMemcpy(packed codes)")).get();
  void* scales_data =
      packed.scales.empty()
          ? nullptr
          : run.buffers.emplace_back(upload(packed.scales.data(), packed.scales.size(), "scales")).get();
  void* zeros_data = packed.zeros.empty()
                         ? nullptr
                         : run.buffers.emplace_back(upload(packed.zeros.data(), packed.zeros.size(), "zeros")).get();
  void* channel_data =
      packed.channel_scales.empty()
          ? nullptr
          : run.buffers
                .emplace_back(upload(packed.channel_scales.data(), packed.channel_scales.size() * 4, "channel scales"))
                .get();
  run.b_data = codes_data;
  run.b_bytes = packed.data.size();
  run.d_ours = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);
  run.d_cublas = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);

  const TensorView a = TensorView::matrix(a_data, DType::kBFloat16, m, k, k, 1);
  const TensorView b = TensorView::matrix(b_data, DType::kBFloat16, n, k, k, 1);
  const TensorView d_ours = TensorView::matrix(run.d_ours.get(), options.out_dtype, m, n, n, 1);
  const TensorView d_cublas = TensorView::matrix(run.d_cublas.get(), options.out_dtype, m, n, n, 1);
  const PackedWeightView w{packed.layout, codes_data, scales_data, zeros_data, static_cast<const float*>(channel_data)};
  GemmOptions gemm_options;
  gemm_options.num_sms = options.num_sms;
  run.ours = [=](cudaStream_t s) {
    GemmOptions o = gemm_options;
    o.stream = s;
    wq_gemm_nt(a, w, d_ours, o);
  };
  run.cublas = [=](cudaStream_t s) { cublaslt_gemm(a, b, d_cublas, nullptr, s); };
  run.cublas_method = "cublasLt bf16 on the dequantised weight, 1 call";
  run.describe_ours = [=, out = options.out_dtype](BenchRow& row) {
    const int num_sms = options.num_sms > 0 ? std::min(options.num_sms, hw.num_sms) : hw.num_sms;
    const WqGemmConfig c = select_wq_gemm_config(static_cast<int>(m), packed.layout, out, hw, num_sms);
    row.config = fmt::format("{} m{} s{} x{}", c.fused ? "fused" : "dequant+bf16", c.block_m, c.stages, c.num_splits);
    row.config_full = format_wq_gemm_config(static_cast<int>(m), packed.layout, c);
    row.variant = fmt::format("sm90_wq {}", weight_format_name(format));
  };
  return run;
}

}  // namespace tilegemm::bench_detail
