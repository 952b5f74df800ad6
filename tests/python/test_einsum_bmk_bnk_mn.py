"""einsum('bmk,bnk->mn') without a GPU: DeepGEMM's argument contract (contiguous bf16 a [s, m, k] and b [s, n, k];
d [m, n] either float32 accumulated in place with c=d, or bfloat16 without c; m, n, k multiples of 64; no
cuBLASLt form), each violation naming its argument. Valid arguments make a batch-reduced GEMM plan (a K loop
through every batch, see _einsum.py): on a machine without a GPU that plan is checked, kept, and its launch raises
the library's RuntimeError; the GPU suite checks the numbers.
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, bf16, f32, gpu_available

EXPR = 'bmk,bnk->mn'
S, M, N, K = 129, 128, 384, 128  # DeepGEMM's test_bmk_bnk_mn shapes


def raises(exc, argument, *args, **kwargs):
    with pytest.raises(exc) as info:
        deep_gemm.einsum(EXPR, *args, **kwargs)
    message = str(info.value)
    assert message.startswith(argument + ':'), message
    return message


def operands():
    return bf16(S, M, K), bf16(S, N, K)


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
@pytest.mark.parametrize('accumulate', [True, False])
def test_valid_arguments_make_a_kept_batch_reduced_plan(accumulate):
    a, b = operands()
    d = f32(M, N) if accumulate else bf16(M, N)
    before = deep_gemm._plan_cache_info()
    for _ in range(2):  # the second call takes the kept plan, and fails at the launch the same way
        with pytest.raises(RuntimeError):
            deep_gemm.einsum(EXPR, a, b, d, c=d if accumulate else None)
    after = deep_gemm._plan_cache_info()
    assert after['misses'] == before['misses'] + 1 and after['hits'] == before['hits'] + 1


def test_operands_must_be_contiguous_bf16_3d_tensors():
    a, b = operands()
    d = f32(M, N)
    raises(TypeError, 'a', None, b, d, c=d)
    raises(TypeError, 'b', a, 'b', d, c=d)
    raises(ValueError, 'a', bf16(M, K), b, d, c=d)
    raises(ValueError, 'b', a, bf16(1, S, N, K), d, c=d)
    assert 'bfloat16' in raises(ValueError, 'a', f32(S, M, K), b, d, c=d)
    raises(ValueError, 'b', a, T((S, N, K), 'float8_e4m3fn'), d, c=d)
    transposed = bf16(S, K, M).transpose(1, 2)  # [s, m, k] view with k not contiguous
    assert 'contiguous' in raises(ValueError, 'a', transposed, b, d, c=d)


def test_shapes_must_agree():
    a, b = operands()
    d = f32(M, N)
    assert 's=129' in raises(ValueError, 'b', a, bf16(S + 1, N, K), d, c=d)
    assert 'k=128' in raises(ValueError, 'b', a, bf16(S, N, K + 64), d, c=d)
    assert 'n=384' in raises(ValueError, 'd', a, b, f32(M, N + 64), c=None)
    raises(ValueError, 'd', a, b, f32(N, M))
    raises(ValueError, 'd', a, b, f32(M, N, 1))


def test_fp32_d_accumulates_in_place_and_bf16_d_takes_no_c():
    a, b = operands()
    d32, d16 = f32(M, N), bf16(M, N)
    assert 'd itself' in raises(ValueError, 'c', a, b, d32)
    # c at another address: stand-ins share one by default, and a c at d's address runs as d itself.
    assert 'another tensor' in raises(ValueError, 'c', a, b, d32, c=T((M, N), 'float32', ptr=0x7F0000100000))
    raises(ValueError, 'c', a, b, d16, c=d16)
    assert 'float32' in raises(ValueError, 'd', a, b, T((M, N), 'float16'))


def test_dimensions_follow_deepgemms_tiling():
    d = f32(96, N)
    assert 'm a multiple of 64' in raises(ValueError, 'a', bf16(S, 96, K), bf16(S, N, K), d, c=d)
    e = f32(M, 96)
    assert 'n a multiple of 64' in raises(ValueError, 'b', bf16(S, M, K), bf16(S, 96, K), e, c=e)
    f = f32(M, N)
    assert 'k a multiple of 64' in raises(ValueError, 'a', bf16(S, M, 96), bf16(S, N, 96), f, c=f)


def test_use_cublaslt_is_refused():
    a, b = operands()
    d = f32(M, N)
    raises(ValueError, 'use_cublaslt', a, b, d, c=d, use_cublaslt=True)
    raises(TypeError, 'use_cublaslt', a, b, d, c=d, use_cublaslt=1)


def test_operands_on_different_devices_are_refused():
    a, _ = operands()
    b = T((S, N, K), 'bfloat16', index=1)
    d = f32(M, N)
    assert 'cuda:0' in raises(ValueError, 'b', a, b, d, c=d)
    raises(ValueError, 'a', T((S, M, K), 'bfloat16', device='cpu'), bf16(S, N, K), d, c=d)
