"""Values the C++ bindings cannot hold are named, never nanobind's "incompatible function arguments".

The extension takes a tensor as (data_ptr as uintptr_t, dtype, int64 sizes, int64 strides), the device and some
scalars (expected_m, ks_cpu, k_alignment) as 32-bit ints. torch's tensors always fit; duck-typed tensors and
user-typed scalars need not: a size of 2^63, a negative or missing data_ptr(), a device index of -1, an
expected_m of 2^31. Each such call raises TypeError/ValueError naming the argument, on the checked path and on
the path of a kept plan (which reads only the data pointers). Stand-in tensors (conftest.py), no torch.
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, gpu_available, mn_major_strides, bf16, f32, i32, raises

no_gpu_only = pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')

HUGE = 2**63
INT32_OVER = 2**31


def fp8(*shape, **kw):
    return T(shape, 'float8_e4m3fn', **kw)


def token_sf(*shape, **kw):
    return f32(*shape, strides=mn_major_strides(shape), **kw)


class Odd(T):
    """A stand-in whose data_ptr() is whatever the test says (None, a float, a negative int...)."""

    def __init__(self, shape, dtype, ptr_value, **kw):
        super().__init__(shape, dtype, **kw)
        self.ptr_value = ptr_value

    def data_ptr(self):
        return self.ptr_value


@pytest.mark.parametrize('fn', [deep_gemm.bf16_gemm_nt, deep_gemm.cublaslt_gemm_nt])
def test_sizes_and_strides_beyond_int64_are_named(fn):
    assert '2^63' in raises(ValueError, 'a', fn, bf16(HUGE, 64), bf16(64, 64), bf16(HUGE, 64))
    raises(ValueError, 'b', fn, bf16(64, 64), bf16(64, 64, strides=(HUGE, 1)), bf16(64, 64))
    raises(ValueError, 'd', fn, bf16(64, 64), bf16(64, 64), bf16(64, 64, strides=(64, -HUGE - 1)))
    raises(ValueError, 'c', fn, bf16(64, 64), bf16(64, 64), bf16(64, 64), c=f32(64, 2**64))


def test_negative_sizes_and_odd_stride_counts_are_named():
    fn = deep_gemm.bf16_gemm_nt
    raises(ValueError, 'a', fn, bf16(-64, 64), bf16(64, 64), bf16(64, 64))
    raises(ValueError, 'b', fn, bf16(64, 64), bf16(64, 64, strides=(64, )), bf16(64, 64))
    assert 'int' in raises(TypeError, 'a', fn, bf16(64.0, 64), bf16(64, 64), bf16(64, 64))
    raises(TypeError, 'd', fn, bf16(64, 64), bf16(64, 64), bf16(64, 64, strides=(64.0, 1)))


@pytest.mark.parametrize('ptr', [-16, 2**64, None, 16.0])
def test_data_ptr_must_be_an_address(ptr):
    fn = deep_gemm.bf16_gemm_nt
    exc = ValueError if isinstance(ptr, int) else TypeError
    assert 'data_ptr' in raises(exc, 'b', fn, bf16(64, 64), Odd((64, 64), 'bfloat16', ptr), bf16(64, 64))
    a, b, d = (fp8(64, 128), token_sf(64, 1)), (fp8(128, 128), f32(1, 1)), bf16(64, 128)
    raises(exc, 'a[1]', deep_gemm.fp8_gemm_nt, (a[0], Odd((64, 1), 'float32', ptr, strides=(1, 64))), b, d)
    raises(exc, 'sf', deep_gemm.get_mn_major_tma_aligned_tensor, Odd((64, 1), 'float32', ptr))


@pytest.mark.parametrize('index', [-1, 2**31, 2**63])
def test_device_index_must_be_one_the_binding_takes(index):
    assert 'device' in raises(ValueError, 'a', deep_gemm.bf16_gemm_nt, bf16(64, 64, index=index),
                              bf16(64, 64, index=index), bf16(64, 64, index=index))


@pytest.mark.parametrize('expected_m', [INT32_OVER, HUGE])
def test_expected_m_beyond_int32_is_named(expected_m):
    raises(ValueError, 'expected_m', deep_gemm.m_grouped_bf16_gemm_nt_masked, bf16(2, 64, 128), bf16(2, 256, 128),
           bf16(2, 64, 256), i32(2), expected_m)
    a, b = (fp8(2, 64, 128), token_sf(2, 64, 1)), (fp8(2, 128, 128), f32(2, 1, 1))
    raises(ValueError, 'expected_m', deep_gemm.m_grouped_fp8_gemm_nt_masked, a, b, bf16(2, 64, 128), i32(2),
           expected_m)


@pytest.mark.parametrize('k', [INT32_OVER * 128, HUGE])
def test_ks_cpu_beyond_int32_is_named(k):
    raises(ValueError, 'ks_cpu[0]', deep_gemm.k_grouped_bf16_gemm_tn_contiguous, bf16(k, 128), bf16(k, 64),
           f32(1, 128, 64), [k], i32(1))
    a, b = (fp8(k * 64), token_sf(64, k // 128)), (fp8(k * 64), token_sf(64, k // 128))
    raises(ValueError, 'ks_cpu[0]', deep_gemm.k_grouped_fp8_gemm_nt_contiguous, a, b, f32(1, 64, 64), [k], i32(1))


def test_k_alignment_beyond_int32_is_named():
    fn = deep_gemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    raises(ValueError, 'k_alignment', fn, f32(4, 128), i32(1), [512], 128, 2**40)


@no_gpu_only
def test_kept_plan_path_names_a_pointer_it_cannot_take():
    a, b, d = bf16(64, 32), bf16(128, 32), bf16(64, 128)
    with pytest.raises(RuntimeError):  # valid: checked, kept, then no GPU
        deep_gemm.bf16_gemm_nt(a, b, d)
    # Same signature, so the kept plan's path: its binding takes the pointers without a check.
    for ptr, exc in ((-16, ValueError), (None, TypeError)):
        raises(exc, 'b', deep_gemm.bf16_gemm_nt, a, Odd((128, 32), 'bfloat16', ptr), d)
    fp8_a, fp8_b = (fp8(64, 128), token_sf(64, 1)), (fp8(128, 128), f32(1, 1))
    with pytest.raises(RuntimeError):
        deep_gemm.fp8_gemm_nt(fp8_a, fp8_b, bf16(64, 128))
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, fp8_a, fp8_b, Odd((64, 128), 'bfloat16', -16))


@no_gpu_only
@pytest.mark.parametrize('ks', [[0, 256], [128, 128]])
def test_k_grouped_fp8_needs_no_tensor_methods(ks):
    # DeepGEMM's layout goes to the library as it is (no copy, whatever the groups): stand-ins reach "no GPU".
    a, b = (fp8(64 * 256), token_sf(64, 2)), (fp8(128 * 256), token_sf(128, 2))
    with pytest.raises(RuntimeError):
        deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, f32(2, 64, 128), ks, i32(2))


