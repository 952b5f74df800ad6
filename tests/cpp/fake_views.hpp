#pragma once
// Device views over an address no test dereferences, for argument-check tests (every call they make fails its checks,
// or has nothing to launch), and the edit-one-argument pattern those tests use.
#include <cstdint>
#include <string>

#include "expect_invalid.hpp"
#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"
#include "tilegemm/tensor_view.hpp"

namespace test_util {

inline void* fake_address() {
  return reinterpret_cast<void*>(std::uintptr_t{0x100000});
}

// [rows, cols] with row stride rs and column stride cs.
inline tilegemm::TensorView fake_matrix(tilegemm::DType t, std::int64_t rows, std::int64_t cols, std::int64_t rs,
                                        std::int64_t cs = 1) {
  return tilegemm::TensorView::matrix(fake_address(), t, rows, cols, rs, cs);
}

// [batch, rows, cols], contiguous.
inline tilegemm::TensorView fake_batched(tilegemm::DType t, std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  return tilegemm::TensorView::batched(fake_address(), t, batch, rows, cols, rows * cols, cols);
}

// [n] with the given stride.
inline tilegemm::TensorView fake_vector(tilegemm::DType t, std::int64_t n, std::int64_t stride = 1) {
  tilegemm::TensorView v;
  v.data = fake_address(), v.dtype = t, v.ndim = 1, v.shape = {n, 0, 0, 0}, v.strides = {stride, 0, 0, 0};
  return v;
}

// A default-made Args (a valid call's arguments) with `edit` applied: its call() throws InvalidArgument naming
// `argument` with `fragment` in the message.
template <class Args, class Edit>
void expect_edit_rejected(Edit edit, const std::string& argument, const std::string& fragment = "expected") {
  Args args;
  edit(args);
  expect_invalid([&] { args.call(); }, argument, fragment);
}

// A valid call over fake views gets past every check: without a GPU the library then reports the missing GPU. Skipped
// where a GPU is present (the fake pointers would reach a kernel).
template <class Call>
void expect_checks_pass(Call&& call) {
  if (tilegemm::gpu_available()) GTEST_SKIP() << "a GPU is present: fake pointers must not reach a kernel";
  try {
    call();
    FAIL() << "expected the missing GPU to be reported";
  } catch (const tilegemm::InvalidArgument& e) {
    FAIL() << "a valid call was refused: " << e.what();
  } catch (const tilegemm::RuntimeError&) {
  }
}

}  // namespace test_util
