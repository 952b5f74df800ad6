#pragma once
// FP8 GPU-test machinery: random operands quantised on the host (per token 1x128 or per block 128x128), their
// device copies in the layouts include/tilegemm/fp8_gemm.hpp asks for, and the two float64 references a result
// is held against — from the dequantised operands (tight: catches any wrong scale or tile) and from the
// original unquantised values (the accuracy bound, calc_diff < 1e-3).
#include <span>

#include "gpu_harness.hpp"
#include "tilegemm/fp8_quant.hpp"

namespace gpu_test {

// Kernel vs the reference of the dequantised operands: only accumulation order and D rounding differ.
constexpr double kFp8KernelDiff = 2e-5;
// Kernel vs the reference of the unquantised data (DeepGEMM's FP8 bound).
constexpr double kFp8QuantisedDiff = 1e-3;

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    cuda_check(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 16)), "cudaMalloc");
  }
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    cuda_check(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// [batch, rows, K] random values quantised to e4m3. batch == 0 means a 2-D operand.
struct QuantisedOperand {
  std::int64_t batch, rows, k;
  bool per_block;
  std::vector<float> original, dequantised;  // [max(batch,1) * rows, K] row-major
  std::unique_ptr<DeviceBuffer> data, sf;
  TensorView data_view, sf_view;  // device views in the kernel's layouts

  std::int64_t batches() const { return std::max<std::int64_t>(batch, 1); }
  std::int64_t k_blocks() const { return (k + 127) / 128; }
  // Host fp32 views of one batch's rows, for reference_gemm_rows.
  TensorView original_host(std::int64_t b) const { return host_matrix(original, b); }
  TensorView dequantised_host(std::int64_t b) const { return host_matrix(dequantised, b); }

 private:
  TensorView host_matrix(const std::vector<float>& v, std::int64_t b) const {
    return TensorView::matrix(const_cast<float*>(v.data()) + b * rows * k, DType::kFloat32, rows, k, k);
  }
};

// Per-token scales as the kernels may receive them: MN-major and TMA-aligned (get_mn_major_tma_aligned_tensor), or
// row-major [rows, kb] exactly as the quantiser returns them (DeepGEMM's per_token_cast_to_fp8).
enum class PerTokenLayout { kMnMajor, kRowMajor };

inline QuantisedOperand make_quantised(std::int64_t batch, std::int64_t rows, std::int64_t k, bool per_block,
                                       std::uint64_t seed, bool ue8m0 = false,
                                       PerTokenLayout layout = PerTokenLayout::kMnMajor) {
  QuantisedOperand q{batch, rows, k, per_block, {}, {}, nullptr, nullptr, {}, {}};
  const std::int64_t batches = q.batches(), kb = q.k_blocks();
  q.original.resize(static_cast<std::size_t>(batches * rows * k));
  parallel_for(batches * rows, [&](std::int64_t r) {
    for (std::int64_t c = 0; c < k; ++c)
      q.original[r * k + c] = random_value(seed, static_cast<std::uint64_t>(r * k + c));
  });
  std::vector<std::uint8_t> bytes;
  std::vector<float> sf_rowmajor;  // [batches, scale rows, kb]
  const std::int64_t scale_rows = per_block ? (rows + 127) / 128 : rows;
  for (std::int64_t b = 0; b < batches; ++b) {
    const float* x = q.original.data() + b * rows * k;
    const tilegemm::Fp8Quantized part =
        per_block ? tilegemm::quantize_per_block_128x128(x, static_cast<int>(rows), static_cast<int>(k), ue8m0)
                  : tilegemm::quantize_per_token_1x128(x, static_cast<int>(rows), static_cast<int>(k), ue8m0);
    bytes.insert(bytes.end(), part.data.begin(), part.data.end());
    sf_rowmajor.insert(sf_rowmajor.end(), part.scales.begin(), part.scales.end());
    const std::vector<float> deq = tilegemm::dequantize(part, per_block);
    q.dequantised.insert(q.dequantised.end(), deq.begin(), deq.end());
  }
  q.data = std::make_unique<DeviceBuffer>(bytes);
  q.data_view = batch == 0 ? TensorView::matrix(q.data->get(), DType::kFloat8E4M3, rows, k, k)
                           : TensorView::batched(q.data->get(), DType::kFloat8E4M3, batch, rows, k, rows * k, k);
  if (per_block || layout == PerTokenLayout::kRowMajor) {
    // [.., ceil(rows/128) or rows, kb], K blocks contiguous.
    q.sf = std::make_unique<DeviceBuffer>(sf_rowmajor);
    q.sf_view = batch == 0
                    ? TensorView::matrix(q.sf->get(), DType::kFloat32, scale_rows, kb, kb)
                    : TensorView::batched(q.sf->get(), DType::kFloat32, batch, scale_rows, kb, scale_rows * kb, kb);
  } else {
    // MN-major, TMA-aligned: per batch [kb][align(rows, 4)].
    const std::vector<float> sf = tilegemm::to_mn_major_tma_aligned(sf_rowmajor.data(), static_cast<int>(batches),
                                                                    static_cast<int>(rows), static_cast<int>(kb));
    const std::int64_t aligned = tilegemm::get_tma_aligned_size(static_cast<int>(rows), 4);
    q.sf = std::make_unique<DeviceBuffer>(sf);
    q.sf_view = batch == 0
                    ? TensorView::matrix(q.sf->get(), DType::kFloat32, rows, kb, 1, aligned)
                    : TensorView::batched(q.sf->get(), DType::kFloat32, batch, rows, kb, kb * aligned, 1, aligned);
  }
  return q;
}

// Both references for rows `sample` of one product block: D[rows] = C + A[a_batch] · B[b_batch]ᵀ over K columns
// [k0, k0 + k_len) (K-grouped groups); appends kernel results and references.
struct Fp8Comparison {
  std::vector<double> got, want_dequantised, want_original;
  double kernel_diff() const { return tilegemm::calc_diff(got, want_dequantised); }
  double quantised_diff() const { return tilegemm::calc_diff(got, want_original); }
};

inline void compare_rows(const QuantisedOperand& a, std::int64_t a_batch, std::int64_t a_row0, std::int64_t rows,
                         const QuantisedOperand& b, std::int64_t b_batch, const GuardedTensor& d, std::int64_t d_batch,
                         std::int64_t d_row0, const GuardedTensor* c, std::int64_t k0, std::int64_t k_len,
                         std::uint64_t seed, Fp8Comparison& out) {
  if (rows == 0) return;
  const std::int64_t n = d.cols();
  auto slice = [&](const TensorView& m, std::int64_t r0, std::int64_t r1) {
    TensorView v = m;
    v.data = static_cast<float*>(m.data) + r0 * m.stride(0) + k0;
    v.shape[0] = r1 - r0, v.shape[1] = k_len;
    return v;
  };
  const auto sample = rows_to_check(rows, static_cast<double>(rows) * n * k_len, seed);
  TensorView c_view;
  if (c != nullptr) c_view = c->host_slice(d_batch, d_row0, d_row0 + rows);
  const TensorView* c_ptr = c != nullptr ? &c_view : nullptr;
  const auto deq = tilegemm::reference_gemm_rows(slice(a.dequantised_host(a_batch), a_row0, a_row0 + rows),
                                                 slice(b.dequantised_host(b_batch), 0, b.rows), c_ptr, sample);
  const auto orig = tilegemm::reference_gemm_rows(slice(a.original_host(a_batch), a_row0, a_row0 + rows),
                                                  slice(b.original_host(b_batch), 0, b.rows), c_ptr, sample);
  out.want_dequantised.insert(out.want_dequantised.end(), deq.begin(), deq.end());
  out.want_original.insert(out.want_original.end(), orig.begin(), orig.end());
  for (std::int64_t r : sample)
    for (std::int64_t j = 0; j < n; ++j) out.got.push_back(d.get(d_batch, d_row0 + r, j));
}

inline std::string diff_text(const Fp8Comparison& cmp) {
  return fmt::format("calc_diff {:.3e} (vs dequantised {:.3e})", cmp.quantised_diff(), cmp.kernel_diff());
}

inline void expect_fp8_accuracy(const Fp8Comparison& cmp) {
  EXPECT_LT(cmp.kernel_diff(), kFp8KernelDiff) << "against the float64 product of the dequantised operands";
  EXPECT_LT(cmp.quantised_diff(), kFp8QuantisedDiff) << "against the float64 product of the unquantised data";
}

}  // namespace gpu_test
