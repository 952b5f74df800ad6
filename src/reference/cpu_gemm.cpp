// The float64 CPU GEMM the tests trust: D = C + A·Bᵀ over strided host views, rows spread over threads.
#include <algorithm>
#include <array>
#include <thread>

#include "reference/host_view.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/reference.hpp"

namespace tilegemm {

using reference_detail::load_float;
using reference_detail::require_host_matrix;
using reference_detail::rows_as_floats;
using reference_detail::view_string;

namespace {

struct CpuProblem {
  std::int64_t batch, m, n, k;
};

CpuProblem check_problem(const TensorView& a, const TensorView& b, const TensorView* c) {
  require_host_matrix(a, "a");
  require_host_matrix(b, "b");
  TILEGEMM_REQUIRE(b.ndim == a.ndim, "b", fmt::format("{} dimensions like a", a.ndim), view_string(b));
  const CpuProblem p{a.ndim == 3 ? a.shape[0] : 1, a.size(-2), b.size(-2), a.size(-1)};
  TILEGEMM_REQUIRE(b.size(-1) == p.k, "b", fmt::format("K = {} columns (a is {})", p.k, view_string(a)),
                   view_string(b));
  if (a.ndim == 3) TILEGEMM_REQUIRE(b.shape[0] == p.batch, "b", fmt::format("batch {}", p.batch), view_string(b));
  if (c) {
    require_host_matrix(*c, "c");
    const bool same =
        c->ndim == a.ndim && c->size(-2) == p.m && c->size(-1) == p.n && (a.ndim == 2 || c->shape[0] == p.batch);
    TILEGEMM_REQUIRE(same, "c",
                     fmt::format("shape [{}{}, {}]", a.ndim == 3 ? fmt::format("{}, ", p.batch) : "", p.m, p.n),
                     view_string(*c));
  }
  return p;
}

unsigned thread_count(unsigned requested, std::int64_t rows) {
  unsigned n = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<std::int64_t>(n, std::max<std::int64_t>(rows, 1)));
}

// One output row: out[j] = C[row, j] + Σ_k a_row[k]·B[j, k]. Four partial sums keep the FMA chains
// independent; every product of two floats from bf16/fp16/fp32 is exact in double.
void gemm_row(const float* a_row, const std::vector<float>& b_dense, const CpuProblem& p, double* out) {
  for (std::int64_t j = 0; j < p.n; ++j) {
    const float* b_row = b_dense.data() + j * p.k;
    std::array<double, 4> acc{};
    std::int64_t k = 0;
    for (; k + 4 <= p.k; k += 4)
      for (int u = 0; u < 4; ++u) acc[u] += static_cast<double>(a_row[k + u]) * b_row[k + u];
    for (; k < p.k; ++k) acc[0] += static_cast<double>(a_row[k]) * b_row[k];
    out[j] += (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
}

// Computes rows `rows` of matrix `batch` into out[r * N ...] (out pre-filled with C or zeros).
void gemm_rows(const TensorView& a, const TensorView& b, std::int64_t batch, const CpuProblem& p,
               std::span<const std::int64_t> rows, double* out, unsigned num_threads) {
  const std::vector<float> b_dense = rows_as_floats(b, batch, 0, p.n);  // [N, K]
  const unsigned threads = thread_count(num_threads, static_cast<std::int64_t>(rows.size()));
  auto work = [&](unsigned t) {
    // Interleaved rows balance the threads whatever the row order.
    for (std::size_t r = t; r < rows.size(); r += threads) {
      const std::vector<float> a_row = rows_as_floats(a, batch, rows[r], rows[r] + 1);
      gemm_row(a_row.data(), b_dense, p, out + static_cast<std::int64_t>(r) * p.n);
    }
  };
  if (threads == 1) return work(0);
  std::vector<std::jthread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
}

void load_c_rows(const TensorView* c, std::int64_t batch, const CpuProblem& p, std::span<const std::int64_t> rows,
                 double* out) {
  if (!c) return;
  const int r = c->ndim - 2;
  const std::int64_t base = r == 1 ? batch * c->strides[0] : 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t j = 0; j < p.n; ++j)
      out[i * p.n + j] = load_float(c->data, c->dtype, base + rows[i] * c->strides[r] + j * c->strides[r + 1]);
}

}  // namespace

std::vector<double> reference_gemm(const TensorView& a, const TensorView& b, const TensorView* c,
                                   unsigned num_threads) {
  const CpuProblem p = check_problem(a, b, c);
  std::vector<double> d(static_cast<std::size_t>(p.batch * p.m * p.n), 0.0);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(p.m));
  for (std::int64_t i = 0; i < p.m; ++i) rows[i] = i;
  for (std::int64_t g = 0; g < p.batch; ++g) {
    double* out = d.data() + g * p.m * p.n;
    load_c_rows(c, g, p, rows, out);
    gemm_rows(a, b, g, p, rows, out, num_threads);
  }
  return d;
}

std::vector<double> reference_gemm_rows(const TensorView& a, const TensorView& b, const TensorView* c,
                                        std::span<const std::int64_t> rows, unsigned num_threads) {
  const CpuProblem p = check_problem(a, b, c);
  TILEGEMM_REQUIRE(a.ndim == 2, "a", "a 2-D view (row sampling works on one matrix)", view_string(a));
  for (std::int64_t row : rows)
    TILEGEMM_REQUIRE(row >= 0 && row < p.m, "rows", fmt::format("indices in [0, {})", p.m), fmt::format("{}", row));
  std::vector<double> d(rows.size() * static_cast<std::size_t>(p.n), 0.0);
  load_c_rows(c, 0, p, rows, d.data());
  gemm_rows(a, b, 0, p, rows, d.data(), num_threads);
  return d;
}

std::vector<double> host_to_doubles(const TensorView& view) {
  require_host_matrix(view, "view");
  const std::int64_t batch = view.ndim == 3 ? view.shape[0] : 1;
  const std::int64_t rows = view.size(-2);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(view.numel()));
  for (std::int64_t g = 0; g < batch; ++g)
    for (float x : rows_as_floats(view, g, 0, rows)) out.push_back(x);
  return out;
}

double host_element(const TensorView& view, std::span<const std::int64_t> index) {
  TILEGEMM_REQUIRE(static_cast<int>(index.size()) == view.ndim, "index", fmt::format("{} indices", view.ndim),
                   fmt::format("{}", index.size()));
  std::int64_t offset = 0;
  for (int i = 0; i < view.ndim; ++i) {
    TILEGEMM_REQUIRE(index[i] >= 0 && index[i] < view.shape[i], "index",
                     fmt::format("index {} in [0, {})", i, view.shape[i]), fmt::format("{}", index[i]));
    offset += index[i] * view.strides[i];
  }
  TILEGEMM_REQUIRE(view.data != nullptr, "view", "a non-null data pointer", "nullptr");
  return load_float(view.data, view.dtype, offset);
}

}  // namespace tilegemm
