"""Every bad-input path raises TypeError/ValueError (RuntimeError for a missing GPU) naming the argument.

These use stand-in tensors (tests/python/conftest.py) so they run without torch; the calls either fail in
validation before any device work or, for the no-GPU case, only run on machines without a GPU.
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, gpu_available, bf16, i32


def raises(exc, argument, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(argument + ':'), str(info.value)
    return str(info.value)


DENSE = [deep_gemm.bf16_gemm_nt, deep_gemm.cublaslt_gemm_nt]


@pytest.mark.parametrize('fn', DENSE)
def test_not_a_tensor(fn):
    raises(TypeError, 'a', fn, [[1.0]], bf16(4, 8), bf16(4, 4))
    raises(TypeError, 'b', fn, bf16(4, 8), None, bf16(4, 4))
    raises(TypeError, 'd', fn, bf16(4, 8), bf16(4, 8), 'd')
    raises(TypeError, 'c', fn, bf16(4, 8), bf16(4, 8), bf16(4, 4), c=3)


@pytest.mark.parametrize('fn', DENSE)
def test_cpu_tensor(fn):
    message = raises(ValueError, 'b', fn, bf16(4, 8), bf16(4, 8, device='cpu'), bf16(4, 4))
    assert 'CUDA' in message


def test_tensors_on_different_devices():
    raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, bf16(4, 8), bf16(4, 8), bf16(4, 4, index=1))


def test_unsupported_dtype_names_the_argument():
    raises(TypeError, 'a', deep_gemm.bf16_gemm_nt, T((4, 8), 'complex64'), bf16(4, 8), bf16(4, 4))


def test_wrong_dtype_from_the_library():
    message = raises(ValueError, 'a', deep_gemm.bf16_gemm_nt, T((4, 8), 'float16'), bf16(4, 8), bf16(4, 4))
    assert 'bf16' in message and 'fp16' in message
    raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, bf16(4, 8), bf16(4, 8), i32(4, 4))
    raises(ValueError, 'c', deep_gemm.bf16_gemm_nt, bf16(4, 8), bf16(4, 8), bf16(4, 4), c=T((4, 4), 'float32'))


@pytest.mark.parametrize('layout,a,b', [('nt', (64, 32), (128, 64)), ('nn', (64, 32), (64, 128)),
                                        ('tn', (32, 64), (64, 128)), ('tt', (32, 64), (128, 64))])
def test_shape_mismatch_each_layout(layout, a, b):
    # a says K = 32 in every layout, b says K = 64.
    fn = getattr(deep_gemm, f'bf16_gemm_{layout}')
    raises(ValueError, 'b', fn, bf16(*a), bf16(*b), bf16(64, 128))


def test_d_shape_and_layout():
    raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, bf16(64, 32), bf16(128, 32), bf16(64, 64))
    raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, bf16(64, 32), bf16(128, 32), bf16(64, 128, strides=(1, 64)))


def test_too_many_dimensions():
    raises(ValueError, 'a', deep_gemm.bf16_gemm_nt, bf16(1, 1, 1, 1, 1), bf16(4, 8), bf16(4, 4))


def test_compiled_dims():
    raises(ValueError, 'compiled_dims', deep_gemm.bf16_gemm_nt, bf16(4, 8), bf16(4, 8), bf16(4, 4),
           compiled_dims='nx')
    raises(TypeError, 'compiled_dims', deep_gemm.bf16_gemm_tn, bf16(8, 4), bf16(8, 4), bf16(4, 4),
           compiled_dims=3)


def test_m_grouped_contiguous():
    fn = deep_gemm.m_grouped_bf16_gemm_nt_contiguous
    a, b, d = bf16(256, 64), bf16(2, 128, 64), bf16(256, 128)
    raises(ValueError, 'grouped_layout', fn, a, b, d, i32(255))
    raises(ValueError, 'grouped_layout', fn, a, b, d, T((256, ), 'float32'))
    raises(ValueError, 'a', fn, bf16(250, 64), b, bf16(250, 128), i32(250))
    raises(ValueError, 'b', fn, a, bf16(2, 128, 32), d, i32(256))
    raises(ValueError, 'grouped_layout', fn, a, b, d, i32(256), use_psum_layout=True)
    raises(TypeError, 'use_psum_layout', fn, a, b, d, i32(256), use_psum_layout=1)
    raises(TypeError, 'ensure_zero_padding', fn, a, b, d, i32(256), ensure_zero_padding=None)
    raises(ValueError, 'expected_m_for_psum_layout', fn, a, b, d, i32(256), expected_m_for_psum_layout=64)
    raises(ValueError, 'expected_m_for_psum_layout', fn, a, b, d, i32(2), use_psum_layout=True,
           expected_m_for_psum_layout=0)
    raises(ValueError, 'b', deep_gemm.m_grouped_bf16_gemm_nn_contiguous, a, bf16(2, 32, 128), d, i32(256))


def test_m_grouped_masked():
    fn = deep_gemm.m_grouped_bf16_gemm_nt_masked
    a, b, d = bf16(4, 64, 128), bf16(4, 256, 128), bf16(4, 64, 256)
    raises(ValueError, 'masked_m', fn, a, b, d, i32(3), 32)
    raises(ValueError, 'expected_m', fn, a, b, d, i32(4), 0)
    raises(TypeError, 'expected_m', fn, a, b, d, i32(4), 3.5)
    raises(ValueError, 'd', fn, a, b, bf16(4, 64, 255), i32(4), 32)
    raises(ValueError, 'a', fn, bf16(64, 128), b, d, i32(4), 32)


def test_k_grouped():
    fn = deep_gemm.k_grouped_bf16_gemm_tn_contiguous
    a, b, d = bf16(256, 128), bf16(256, 64), T((2, 128, 64), 'float32')
    raises(ValueError, 'ks_cpu', fn, a, b, d, None, i32(2))
    raises(ValueError, 'ks_cpu', fn, a, b, d, [], i32(2))
    raises(TypeError, 'ks_cpu', fn, a, b, d, [128, 128.0], i32(2))
    raises(ValueError, 'use_psum_layout', fn, a, b, d, [128, 128], i32(2), use_psum_layout=True)
    # Names the C++ layer gives as ks / ks[g] / ks_tensor come back as DeepGEMM's ks_cpu / grouped_layout.
    raises(ValueError, 'ks_cpu', fn, a, b, d, [128, 64], i32(2))
    raises(ValueError, 'ks_cpu[1]', fn, a, b, d, [192, 65], i32(2))
    raises(ValueError, 'grouped_layout', fn, a, b, d, [128, 128], i32(3))


def test_cublaslt_shape_mismatch():
    raises(ValueError, 'b', deep_gemm.cublaslt_gemm_nn, bf16(64, 32), bf16(64, 128), bf16(64, 128))


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
@pytest.mark.parametrize('call', [
    lambda: deep_gemm.bf16_gemm_nt(bf16(64, 32), bf16(128, 32), bf16(64, 128)),
    lambda: deep_gemm.m_grouped_bf16_gemm_nt_masked(bf16(2, 64, 128), bf16(2, 256, 128), bf16(2, 64, 256),
                                                    i32(2), 32),
    lambda: deep_gemm.get_num_sms(),
])
def test_no_gpu_is_a_runtime_error(call):
    with pytest.raises(RuntimeError):
        call()


def test_config_setters():
    raises(TypeError, 'new_num_sms', deep_gemm.set_num_sms, 1.5)
    raises(ValueError, 'new_num_sms', deep_gemm.set_num_sms, 0)
    # Past a 32-bit int the setting would poison every later GEMM call (nanobind's unnamed type error).
    raises(ValueError, 'new_num_sms', deep_gemm.set_num_sms, 10**30)
    raises(ValueError, 'new_num_sms', deep_gemm.set_num_sms, 2**31)
    raises(ValueError, 'new_tc_util', deep_gemm.set_tc_util, 101)
    raises(TypeError, 'new_enable_pdl', deep_gemm.set_pdl, 1)
    raises(TypeError, 'new_value', deep_gemm.set_ignore_compile_dims, 'yes')
    raises(ValueError, 'value', deep_gemm.set_block_size_multiple_of, [1, 2, 3])
    raises(ValueError, 'new_value', deep_gemm.set_mk_alignment_for_contiguous_layout, 64)
    raises(ValueError, 'expected_m', deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout, -1)


def test_config_round_trips():
    deep_gemm.set_tc_util(90)
    deep_gemm.set_pdl(True)
    try:
        assert deep_gemm.get_tc_util() == 90 and deep_gemm.get_pdl() is True
    finally:
        deep_gemm.set_tc_util(100)
        deep_gemm.set_pdl(False)
    assert deep_gemm.get_pdl() is False
    deep_gemm.set_mk_alignment_for_contiguous_layout(128)
    assert deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout(4096) == 128
    assert deep_gemm.get_m_alignment_for_contiguous_layout() == 128
