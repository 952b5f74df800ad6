"""deep_gemm.fp8_gemm_nt_skip_head_mid without a GPU: DeepGEMM 2.6.1's name and signature (csrc/apis/attention.hpp),
and every bad argument raising TypeError/ValueError that names it, before any device work. Stand-in tensors
(conftest.py); a valid call reaches the C++ layer, which then reports the missing GPU."""
import inspect

import pytest

import deep_gemm
from conftest import FakeTensor as T, bf16, f32, gpu_available, mn_major_strides, raises

M, N, K = 64, 512, 256  # two heads of 128 + 128 columns; 2 scale blocks along K
KB = K // 128
HEADS = (128, 64, 128)
N_OUT = N + N // 256 * 64  # d's width: each head's 64 mid columns added


def fp8(*shape, **kw):
    return T(shape, 'float8_e4m3fn', **kw)


def operands(n=N, k=K, m=M):
    """a (fp8 [M, K], per-token sf), b (fp8 [N, K], per-block sf)."""
    kb = -(-k // 128)
    return (fp8(m, k), f32(m, kb, strides=mn_major_strides((m, kb)))), (fp8(n, k), f32(-(-n // 128), kb))


def test_the_name_is_exported_with_deepgemms_signature():
    params = [(p.name, p.default) for p in inspect.signature(deep_gemm.fp8_gemm_nt_skip_head_mid).parameters.values()]
    empty = inspect.Parameter.empty
    assert params == [('a', empty), ('b', empty), ('d', empty), ('head_splits', empty), ('recipe', None),
                      ('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)]


def test_head_splits_name_themselves():
    a, b = operands()
    fn = deep_gemm.fp8_gemm_nt_skip_head_mid
    d = bf16(M, N_OUT)
    raises(TypeError, 'head_splits', fn, a, b, d, 128)
    raises(TypeError, 'head_splits', fn, a, b, d, None)
    raises(TypeError, 'head_splits', fn, a, b, d, '128')
    raises(ValueError, 'head_splits', fn, a, b, d, (128, 128))
    raises(ValueError, 'head_splits', fn, a, b, d, (128, 64, 128, 0))
    raises(TypeError, 'head_splits', fn, a, b, d, (128.0, 64, 128))
    raises(TypeError, 'head_splits', fn, a, b, d, (True, 64, 128))
    assert '(-128, 64, 128)' in raises(ValueError, 'head_splits', fn, a, b, d, (-128, 64, 128))
    raises(ValueError, 'head_splits', fn, a, b, d, (128, -1, 128))
    raises(ValueError, 'head_splits', fn, a, b, d, (0, 64, 0))
    raises(ValueError, 'head_splits', fn, a, b, d, (2**31, 0, 0))
    message = raises(ValueError, 'head_splits', fn, a, b, d, (128, 64, 64))
    assert 'N = 512' in message and '192' in message


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
def test_head_parts_without_a_tile_width_are_named_by_the_library():
    # left + right = 16 divides N, but no tile width of the kernel (a multiple of 8 from 16 up) divides 8.
    a, b = operands()
    message = raises(ValueError, 'head_splits', deep_gemm.fp8_gemm_nt_skip_head_mid, a, b, bf16(M, N), (8, 0, 8))
    assert 'tile width' in message


def test_tensors_name_themselves():
    a, b = operands()
    fn = deep_gemm.fp8_gemm_nt_skip_head_mid
    d = bf16(M, N_OUT)
    assert str(N_OUT) in raises(ValueError, 'd', fn, a, b, bf16(M, N), HEADS)  # the mid columns missing
    raises(ValueError, 'd', fn, a, b, f32(M, N_OUT), HEADS)  # SM90: the 1D2D recipe writes bf16
    raises(ValueError, 'd', fn, a, b, bf16(M, N_OUT, strides=(1, M)), HEADS)  # not N-major
    raises(ValueError, 'd', fn, a, b, bf16(2, M, N_OUT), HEADS)
    raises(TypeError, 'd', fn, a, b, 'd', HEADS)
    raises(TypeError, 'a', fn, a[0], b, d, HEADS)
    assert 'float8_e4m3fn' in raises(ValueError, 'a', fn, (bf16(M, K), a[1]), b, d, HEADS)
    raises(ValueError, 'b', fn, a, (T((N, K), 'float8_e5m2'), b[1]), d, HEADS)
    raises(ValueError, 'a', fn, (fp8(2, M, K), a[1]), b, d, HEADS)
    raises(ValueError, 'b', fn, a, (fp8(N, K + 128), f32(N // 128, KB + 1)), d, HEADS)
    assert 'K-major' in raises(ValueError, 'a', fn, (fp8(M, K, strides=(1, M)), a[1]), b, d, HEADS)
    assert 'per-block' in raises(ValueError, 'b[1]', fn, a, (b[0], f32(N, KB)), d, HEADS)
    raises(ValueError, 'a[1]', fn, (a[0], f32(M, KB + 1)), b, d, HEADS)
    a0, b0 = operands(k=0)
    raises(ValueError, 'a', fn, a0, b0, d, HEADS)  # K = 0, as DeepGEMM refuses it
    raises(ValueError, 'd', fn, a, b, bf16(M, N_OUT, index=1), HEADS)


def test_other_arguments_name_themselves():
    a, b = operands()
    fn = deep_gemm.fp8_gemm_nt_skip_head_mid
    d = bf16(M, N_OUT)
    assert '(1, 128, 128)' in raises(ValueError, 'recipe', fn, a, b, d, HEADS, recipe=(1, 1, 128))
    raises(ValueError, 'recipe', fn, a, b, d, HEADS, recipe=(1, 128, 64))
    raises(ValueError, 'recipe', fn, a, b, d, HEADS, recipe='1d2d')
    raises(ValueError, 'compiled_dims', fn, a, b, d, HEADS, compiled_dims='nx')
    raises(TypeError, 'disable_ue8m0_cast', fn, a, b, d, HEADS, disable_ue8m0_cast=None)


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
@pytest.mark.parametrize('kwargs', [{}, {'recipe': (1, 128, 128)}, {'disable_ue8m0_cast': True}])
def test_valid_calls_reach_the_library(kwargs):
    a, b = operands()
    with pytest.raises(RuntimeError):  # past every check: no GPU here
        deep_gemm.fp8_gemm_nt_skip_head_mid(a, b, bf16(M, N_OUT), HEADS, **kwargs)
    a, b = operands(n=3 * 192, k=1008, m=65)  # three heads of 64 + 128, ragged M and K
    with pytest.raises(RuntimeError):
        deep_gemm.fp8_gemm_nt_skip_head_mid(a, b, bf16(65, 3 * 192 + 3 * 16), [64, 16, 128], **kwargs)
