"""The 16-byte row-stride contract: ragged shapes TMA cannot describe raise ValueError naming the dimension.

TMA (cuTensorMapEncodeTiled) needs every row stride to be a multiple of 16 bytes, so the contiguous extent of
each tensor must be too: N of D (8 bf16 / 4 fp32 elements), M of an MN-major A, N of an MN-major B, K of a
K-major operand. DeepGEMM has the same requirement for the same reason. tilegemm's validate_desc checks it
before any device work, so stand-in tensors (conftest.py) exercise it without torch or a GPU. The illegal
cases are the ragged shapes the GPU accuracy tests first used; those tests now use the nearest legal shapes
(N=264, MN-major M=136), and on a machine without a GPU those pass validation and stop at "no GPU".
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, gpu_available, mn_major_strides, f32


def bf16(*shape):
    return T(shape, 'bfloat16')


def fp8(*shape):
    return T(shape, 'float8_e4m3fn')


def token_sf(mn, kb):
    return f32(mn, kb, strides=mn_major_strides((mn, kb)))


def k_grouped_tn(m, n):
    return deep_gemm.k_grouped_bf16_gemm_tn_contiguous, (bf16(256, m), bf16(256, n), f32(2, m, n), [128, 128],
                                                         T((2, ), 'int32'))


def fp8_1d2d(n):
    return deep_gemm.fp8_gemm_nt, ((fp8(129, 384), token_sf(129, 3)), (fp8(n, 384), f32(3, 3)), bf16(129, n))


def fp8_1d1d(n):
    def call(*args):
        deep_gemm.fp8_gemm_nt(*args, recipe=(1, 1, 128))
    return call, ((fp8(129, 384), token_sf(129, 3)), (fp8(n, 384), token_sf(n, 3)), f32(129, n))


# (name, illegal call, the argument and the words of its message, the nearest legal call)
CASES = [
    ('nt bf16 D', lambda n: (deep_gemm.bf16_gemm_nt, (bf16(129, 320), bf16(n, 320), bf16(129, n))),
     257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of bf16 D'),
    ('nt fp32 D', lambda n: (deep_gemm.bf16_gemm_nt, (bf16(129, 320), bf16(n, 320), f32(129, n), f32(129, n))),
     258, 260, 'n', 'a multiple of 4 (16-byte TMA row stride of fp32 D'),
    ('nn MN-major B', lambda n: (deep_gemm.bf16_gemm_nn, (bf16(129, 320), bf16(320, n), bf16(129, n))),
     257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of MN-major B'),
    ('tn MN-major A', lambda m: (deep_gemm.bf16_gemm_tn, (bf16(320, m), bf16(320, 264), bf16(m, 264))),
     129, 136, 'm', 'a multiple of 8 (16-byte TMA row stride of MN-major A'),
    ('tt MN-major A', lambda m: (deep_gemm.bf16_gemm_tt, (bf16(64, m), bf16(80, 64), bf16(m, 80))),
     3, 8, 'm', 'a multiple of 8 (16-byte TMA row stride of MN-major A'),
    ('m-grouped contiguous', lambda n: (deep_gemm.m_grouped_bf16_gemm_nt_contiguous,
                                        (bf16(256, 320), bf16(2, n, 320), bf16(256, n), T((256, ), 'int32'))),
     257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of bf16 D'),
    ('m-grouped masked', lambda n: (deep_gemm.m_grouped_bf16_gemm_nt_masked,
                                    (bf16(2, 64, 320), bf16(2, n, 320), bf16(2, 64, n), T((2, ), 'int32'), 32)),
     257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of bf16 D'),
    ('k-grouped MN-major A', lambda m: k_grouped_tn(m, 264),
     129, 136, 'm', 'a multiple of 8 (16-byte TMA row stride of MN-major A'),
    ('k-grouped MN-major B', lambda n: k_grouped_tn(136, n),
     257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of MN-major B'),
    ('fp8 1D2D bf16 D', fp8_1d2d, 257, 264, 'n', 'a multiple of 8 (16-byte TMA row stride of bf16 D'),
    ('fp8 1D1D fp32 D', fp8_1d1d, 129, 132, 'n', 'a multiple of 4 (16-byte TMA row stride of fp32 D'),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize('name,make,illegal,legal,argument,words', CASES, ids=IDS)
def test_ragged_contiguous_extent_is_rejected(name, make, illegal, legal, argument, words):
    fn, args = make(illegal)
    with pytest.raises(ValueError) as info:
        fn(*args)
    message = str(info.value)
    assert message.startswith(f'{argument}: expected {words}'), message
    assert message.endswith(f'got {illegal}'), message


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
@pytest.mark.parametrize('name,make,illegal,legal,argument,words', CASES, ids=IDS)
def test_nearest_legal_shape_passes_validation(name, make, illegal, legal, argument, words):
    # Validation runs first; a call it accepts fails only because this machine has no GPU.
    fn, args = make(legal)
    with pytest.raises(RuntimeError, match='no CUDA GPU'):
        fn(*args)
