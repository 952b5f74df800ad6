// bf16 rows: our bf16 GEMMs (dense, M-grouped contiguous, M-grouped masked) against cuBLASLt bf16 on the same
// random operands. cuBLASLt has no M-grouped GEMM, so grouped rows are timed against one cuBLASLt call per
// group on slices of A, B and D (the same FLOPs).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "bench/host_data.hpp"
#include "bench/shape_run.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/gemm.hpp"
#include "tilegemm/heuristics.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm::bench_detail {

namespace {

// Storage views in the convention of gemm.hpp: A viewed as [M,K], B as [N,K], the strides saying which
// dimension is contiguous.
TensorView operand_view(void* data, std::int64_t rows, std::int64_t k, Major major) {
  return major == Major::kKMajor ? TensorView::matrix(data, DType::kBFloat16, rows, k, k, 1)
                                 : TensorView::matrix(data, DType::kBFloat16, rows, k, 1, rows);
}

DeviceBuffer random_bf16_buffer(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint16_t> host(count);
  fill_random_bf16(host.data(), count, seed);
  return upload(host.data(), count * kBf16Bytes, "cudaMemcpy(random operand)");
}

GemmDesc desc_of(const BenchShape& shape, const SuiteOptions& options) {
  GemmDesc desc;
  desc.type = shape.type;
  // Masked: m is each group's M_max (the kernel's view); the others count every row.
  desc.m = shape.type == GemmType::kMGroupedMasked ? shape.m : shape.total_m();
  desc.n = shape.n;
  desc.k = shape.k;
  desc.num_groups = shape.groups;
  if (shape.type == GemmType::kMGroupedMasked) desc.expected_m = shape.m;
  desc.d_dtype = options.out_dtype;
  desc.major_a = layout_major_a(options.layout);
  desc.major_b = layout_major_b(options.layout);
  return desc;
}

// The kernel family and the variant axes the compact config leaves out.
std::string variant_of(const BenchShape& shape, const GemmConfig& config) {
  const char* multicast = config.multicast == MulticastSide::kB ? "B" : "none";
  return fmt::format("sm90_bf16 {}, multicast {}", gemm_type_name(shape.type), multicast);
}

}  // namespace

TensorView int32_vector(void* data, std::int64_t size) {
  TensorView v;
  v.data = data, v.dtype = DType::kInt32, v.ndim = 1;
  v.shape = {size, 0, 0, 0};
  v.strides = {1, 0, 0, 0};
  return v;
}

DeviceBuffer upload(const void* host, std::size_t bytes, const char* what) {
  DeviceBuffer buffer(bytes);
  if (bytes > 0) cuda_check(cudaMemcpy(buffer.get(), host, bytes, cudaMemcpyHostToDevice), what);
  return buffer;
}

ShapeRun prepare_bf16_run(const BenchShape& shape, const SuiteOptions& options, const HardwareModel& hw,
                          std::uint64_t seed) {
  const std::int64_t m = shape.total_m(), n = shape.n, k = shape.k, g = shape.groups;
  const Major major_a = layout_major_a(options.layout), major_b = layout_major_b(options.layout);
  const std::size_t d_elem = dtype_bits(options.out_dtype) / 8;
  ShapeRun run;
  run.d_dtype = options.out_dtype;
  DeviceBuffer& a_buf = run.buffers.emplace_back(random_bf16_buffer(static_cast<std::size_t>(m * k), seed));
  void* a_data = a_buf.get();
  void* b_data = run.buffers.emplace_back(random_bf16_buffer(static_cast<std::size_t>(g * n * k), seed + 1)).get();
  run.b_data = b_data;
  run.b_bytes = static_cast<std::size_t>(g * n * k) * kBf16Bytes;
  run.d_ours = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);
  run.d_cublas = DeviceBuffer(static_cast<std::size_t>(m * n) * d_elem);
  const TensorView a = operand_view(a_data, m, k, major_a);
  const TensorView d_ours = TensorView::matrix(run.d_ours.get(), options.out_dtype, m, n, n, 1);
  const TensorView d_cublas = TensorView::matrix(run.d_cublas.get(), options.out_dtype, m, n, n, 1);
  GemmOptions gemm_options;
  gemm_options.num_sms = options.num_sms;
  run.describe_ours = [shape, options, hw](BenchRow& row) {
    // The same choice the entry points make (src/api/gemm.cpp): num_sms clamped to the device, smem filled in.
    const GemmDesc desc = desc_of(shape, options);
    const int num_sms = options.num_sms > 0 ? std::min(options.num_sms, hw.num_sms) : hw.num_sms;
    GemmConfig config = select_config(desc, hw, num_sms);
    if (config.smem_bytes == 0) config.smem_bytes = sm90_bf16_smem_bytes(desc, config);
    row.config = compact_config(config);
    row.config_full = to_string(config);
    row.variant = variant_of(shape, config);
  };

  if (shape.type == GemmType::kNormal) {
    const TensorView b = operand_view(b_data, n, k, major_b);
    run.ours = [=](cudaStream_t s) {
      GemmOptions o = gemm_options;
      o.stream = s;
      bf16_gemm(a, b, d_ours, nullptr, o);
    };
    run.cublas = [=](cudaStream_t s) { cublaslt_gemm(a, b, d_cublas, nullptr, s); };
    run.cublas_method = "cublasLt, 1 call per GEMM";
    return run;
  }

  // M-grouped: group i owns rows [i·mg, (i+1)·mg) of A and D — for masked shapes too, whose [G, M_max, K]
  // A and [G, M_max, N] D have the same memory layout as the contiguous [G·M_max, K] and [G·M_max, N].
  const std::int64_t mg = shape.m;
  const TensorView b_all = major_b == Major::kKMajor
                               ? TensorView::batched(b_data, DType::kBFloat16, g, n, k, n * k, k, 1)
                               : TensorView::batched(b_data, DType::kBFloat16, g, n, k, n * k, 1, n);
  if (shape.type == GemmType::kMGroupedContiguous) {
    std::vector<std::int32_t> group_of_row(static_cast<std::size_t>(m));
    for (std::int64_t r = 0; r < m; ++r) group_of_row[r] = static_cast<std::int32_t>(r / mg);
    void* index =
        run.buffers.emplace_back(upload(group_of_row.data(), group_of_row.size() * 4, "cudaMemcpy(grouped_layout)"))
            .get();
    const TensorView layout = int32_vector(index, m);
    run.ours = [=](cudaStream_t s) {
      GemmOptions o = gemm_options;
      o.stream = s;
      m_grouped_bf16_gemm_contiguous(a, b_all, d_ours, layout, /*use_psum_layout=*/false, o);
    };
  } else {
    const std::vector<std::int32_t> masked(static_cast<std::size_t>(g), static_cast<std::int32_t>(mg));
    void* counts = run.buffers.emplace_back(upload(masked.data(), masked.size() * 4, "cudaMemcpy(masked_m)")).get();
    const TensorView masked_m = int32_vector(counts, g);
    const TensorView a3 = TensorView::batched(a_data, DType::kBFloat16, g, mg, k, mg * k, k, 1);
    const TensorView d3 = TensorView::batched(run.d_ours.get(), DType::kBFloat16, g, mg, n, mg * n, n, 1);
    run.ours = [=](cudaStream_t s) {
      GemmOptions o = gemm_options;
      o.stream = s;
      m_grouped_bf16_gemm_masked(a3, b_all, d3, masked_m, static_cast<int>(mg), o);
    };
  }
  std::vector<TensorView> a_slices, b_slices, d_slices;
  for (std::int64_t i = 0; i < g; ++i) {
    a_slices.push_back(operand_view(byte_offset(a_data, i * mg * k * kBf16Bytes), mg, k, Major::kKMajor));
    b_slices.push_back(operand_view(byte_offset(b_data, i * n * k * kBf16Bytes), n, k, major_b));
    d_slices.push_back(
        TensorView::matrix(byte_offset(run.d_cublas.get(), i * mg * n * d_elem), options.out_dtype, mg, n, n, 1));
  }
  run.cublas = [=](cudaStream_t s) {
    for (std::size_t i = 0; i < a_slices.size(); ++i) cublaslt_gemm(a_slices[i], b_slices[i], d_slices[i], nullptr, s);
  };
  run.cublas_method = fmt::format("cublasLt, {} calls (one per group)", g);
  return run;
}

}  // namespace tilegemm::bench_detail
