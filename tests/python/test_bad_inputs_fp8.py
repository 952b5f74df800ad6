"""FP8 functions and scale-layout helpers: every bad input raises TypeError/ValueError naming the argument
(``a[1]``/``b[1]`` are the scale factors of the ``(tensor, sf)`` pairs), before any device work.

Stand-in tensors (conftest.py) make these run without torch; a scale tensor in the kernel layout passes the
layout helpers untouched, which is what lets a valid call reach the C++ layer here.
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, gpu_available, mn_major_strides, bf16, f32, i32

M, N, K = 64, 256, 384  # 3 scale blocks of 128 along K
KB = 3


def fp8(*shape, **kw):
    return T(shape, 'float8_e4m3fn', **kw)


def token_sf(*shape, **kw):
    """Per-token scales already MN-major and TMA-aligned (the layout the C++ API reads)."""
    return f32(*shape, strides=mn_major_strides(shape), **kw)


def raises(exc, argument, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(argument + ':'), str(info.value)
    return str(info.value)


def dense_1d2d():
    """Valid 1D2D operands: a (fp8 [M, K], sf [M, kb]), b (fp8 [N, K], per-block sf [N/128, kb]), bf16 d."""
    return (fp8(M, K), token_sf(M, KB)), (fp8(N, K), f32(2, KB)), bf16(M, N)


def dense_1d1d():
    return (fp8(M, K), token_sf(M, KB)), (fp8(N, K), token_sf(N, KB)), f32(M, N)


def test_operands_must_be_pairs_of_tensors():
    a, b, d = dense_1d2d()
    raises(TypeError, 'a', deep_gemm.fp8_gemm_nt, a[0], b, d)
    raises(TypeError, 'b', deep_gemm.fp8_gemm_nt, a, (b[0], b[1], b[1]), d)
    raises(TypeError, 'a', deep_gemm.fp8_gemm_nt, ([1.0], a[1]), b, d)
    raises(TypeError, 'a[1]', deep_gemm.fp8_gemm_nt, (a[0], None), b, d)
    raises(TypeError, 'd', deep_gemm.fp8_gemm_nt, a, b, 'd')
    raises(ValueError, 'b[1]', deep_gemm.fp8_gemm_nn, a, (b[0].T, f32(2 * KB)), d)


def test_dtypes():
    a, b, d = dense_1d2d()
    assert 'float8_e4m3fn' in raises(ValueError, 'a', deep_gemm.fp8_gemm_nt, (bf16(M, K), a[1]), b, d)
    raises(ValueError, 'b', deep_gemm.fp8_gemm_nt, a, (T((N, K), 'float8_e5m2'), b[1]), d)
    assert 'UE8M0' in raises(ValueError, 'a[1]', deep_gemm.fp8_gemm_nt, (a[0], i32(M, KB)), b, d)
    raises(ValueError, 'b[1]', deep_gemm.fp8_gemm_nt, a, (b[0], bf16(2, KB)), d)
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, a, b, f32(M, N))  # 1D2D writes bf16
    a, b, d = dense_1d1d()
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, a, b, bf16(M, N), recipe=(1, 1, 128))  # 1D1D writes fp32
    raises(ValueError, 'c', deep_gemm.fp8_gemm_nt, a, b, d, c=bf16(M, N), recipe=(1, 1, 128))


def test_shapes():
    a, b, d = dense_1d2d()
    raises(ValueError, 'b', deep_gemm.fp8_gemm_nt, a, (fp8(N, K + 128), f32(2, KB + 1)), d)
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, a, b, bf16(M, N + 1))
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, a, b, bf16(M, N, strides=(1, M)))
    raises(ValueError, 'a', deep_gemm.fp8_gemm_nt, (fp8(2, M, K), a[1]), b, d)
    assert '(64, 3)' in raises(ValueError, 'a[1]', deep_gemm.fp8_gemm_nt, (a[0], token_sf(M, KB - 1)), b, d)
    # Per-token B scales with the default (1D2D) recipe: shaped for per-block, so the message says which.
    assert 'per-block' in raises(ValueError, 'b[1]', deep_gemm.fp8_gemm_nt, a, (b[0], token_sf(N, KB)), d)
    a, b, d = dense_1d1d()
    raises(ValueError, 'b[1]', deep_gemm.fp8_gemm_nt, a, (b[0], f32(2, KB)), d, recipe=(1, 1, 128))
    raises(ValueError, 'c', deep_gemm.fp8_gemm_nt, a, b, d, c=f32(M, N - 1), recipe=(1, 1, 128))


def test_operands_must_be_k_major():
    a, b, d = dense_1d2d()
    message = raises(ValueError, 'a', deep_gemm.fp8_gemm_nt, (fp8(M, K, strides=(1, M)), a[1]), b, d)
    assert 'K-major' in message
    raises(ValueError, 'b', deep_gemm.fp8_gemm_nt, a, (fp8(N, K, strides=(1, N)), b[1]), d)
    # nn takes b as [K, N]: a contiguous [K, N] tensor is MN-major once transposed, which SM90 cannot read.
    raises(ValueError, 'b', deep_gemm.fp8_gemm_nn, a, (fp8(K, N), f32(KB, 2)), d)
    raises(ValueError, 'a', deep_gemm.fp8_gemm_tn, (fp8(K, M), f32(KB, M)), (fp8(K, N), f32(KB, 2)), d)
    raises(ValueError, 'a', deep_gemm.fp8_gemm_tt, (fp8(K, M), f32(KB, M)), b, d)


def test_recipes():
    a, b, d = dense_1d2d()
    fn = deep_gemm.fp8_gemm_nt
    raises(ValueError, 'recipe', fn, a, b, d, recipe=(1, 128, 64))
    raises(ValueError, 'recipe', fn, a, b, d, recipe=(128, 128, 128))
    raises(ValueError, 'recipe', fn, a, b, d, recipe='1d2d')
    raises(ValueError, 'recipe', fn, a, b, d, recipe=(1, 128, 128), recipe_a=(1, 128), recipe_b=(128, 128))
    raises(ValueError, 'recipe_b', fn, a, b, d, recipe_a=(1, 128))
    raises(ValueError, 'recipe_a', fn, a, b, d, recipe_b=(128, 128))
    raises(ValueError, 'recipe_a', fn, a, b, d, recipe_a=(128, 128), recipe_b=(128, 128))
    raises(ValueError, 'recipe_b', fn, a, b, d, recipe_a=(1, 128), recipe_b=(1, 32))
    message = raises(ValueError, 'c', fn, a, b, d, c=bf16(M, N))
    assert '(1, 1, 128)' in message  # says how to accumulate
    raises(TypeError, 'disable_ue8m0_cast', fn, a, b, d, disable_ue8m0_cast=None)
    raises(ValueError, 'compiled_dims', fn, a, b, d, compiled_dims='nkx')


def test_devices():
    a, b, d = dense_1d2d()
    assert 'CUDA' in raises(ValueError, 'a', deep_gemm.fp8_gemm_nt, (fp8(M, K, device='cpu'), a[1]), b, d)
    raises(ValueError, 'a[1]', deep_gemm.fp8_gemm_nt, (a[0], f32(M, KB, device='cpu')), b, d)
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, a, b, bf16(M, N, index=1))


def grouped_contiguous(groups=2, m=256):
    return ((fp8(m, K), token_sf(m, KB)), (fp8(groups, N, K), f32(groups, 2, KB)), bf16(m, N), i32(m))


def test_m_grouped_contiguous():
    fn = deep_gemm.m_grouped_fp8_gemm_nt_contiguous
    a, b, d, layout = grouped_contiguous()
    raises(ValueError, 'recipe', fn, a, b, d, layout, recipe=(1, 1, 128))
    raises(ValueError, 'recipe_b', fn, a, b, d, layout, recipe_a=(1, 128), recipe_b=(1, 128))
    raises(ValueError, 'grouped_layout', fn, a, b, d, i32(255))
    raises(ValueError, 'grouped_layout', fn, a, b, d, f32(256))
    raises(ValueError, 'grouped_layout', fn, a, b, d, layout, use_psum_layout=True)
    raises(ValueError, 'b', fn, a, (fp8(N, K), f32(2, KB)), d, layout)
    raises(ValueError, 'b', fn, a, (fp8(2, N, K + 128), f32(2, 2, KB + 1)), d, layout)
    raises(ValueError, 'b[1]', fn, a, (b[0], f32(2, N, KB)), d, layout)
    raises(ValueError, 'b[1]', fn, a, (b[0], f32(3, 2, KB)), d, layout)
    raises(ValueError, 'a[1]', fn, (a[0], token_sf(128, KB)), b, d, layout)
    raises(ValueError, 'd', fn, a, b, f32(256, N), layout)
    raises(TypeError, 'use_psum_layout', fn, a, b, d, layout, use_psum_layout=0)
    raises(TypeError, 'ensure_zero_padding', fn, a, b, d, layout, ensure_zero_padding='yes')
    raises(ValueError, 'expected_m_for_psum_layout', fn, a, b, d, layout, expected_m_for_psum_layout=128)
    raises(ValueError, 'b', deep_gemm.m_grouped_fp8_gemm_nn_contiguous, a, (fp8(2, K, N), f32(2, KB, 2)), d,
           layout)


def masked(groups=4, m_max=64):
    return ((fp8(groups, m_max, K), token_sf(groups, m_max, KB)), (fp8(groups, N, K), f32(groups, 2, KB)),
            bf16(groups, m_max, N), i32(groups))


def test_m_grouped_masked():
    fn = deep_gemm.m_grouped_fp8_gemm_nt_masked
    a, b, d, masked_m = masked()
    raises(ValueError, 'masked_m', fn, a, b, d, i32(3), 32)
    raises(ValueError, 'masked_m', fn, a, b, d, i32(4, 1), 32)
    raises(ValueError, 'expected_m', fn, a, b, d, masked_m, 0)
    raises(TypeError, 'expected_m', fn, a, b, d, masked_m, 32.0)
    raises(ValueError, 'a', fn, (fp8(64, K), token_sf(64, KB)), b, d, masked_m, 32)
    raises(ValueError, 'a[1]', fn, (a[0], token_sf(64, KB)), b, d, masked_m, 32)
    raises(ValueError, 'b', fn, a, (fp8(3, N, K), f32(3, 2, KB)), d, masked_m, 32)
    raises(ValueError, 'd', fn, a, b, bf16(4, 64, N + 8), masked_m, 32)
    raises(ValueError, 'recipe', fn, a, b, d, masked_m, 32, recipe=(1, 1, 128))


def k_grouped(ks=(128, 256), m=96, n=160):
    total = sum(ks)
    return ((fp8(m * total), token_sf(m, total // 128)), (fp8(n * total), token_sf(n, total // 128)),
            f32(len(ks), m, n), list(ks), i32(len(ks)))


def test_k_grouped():
    fn = deep_gemm.k_grouped_fp8_gemm_nt_contiguous
    a, b, d, ks, layout = k_grouped()
    raises(ValueError, 'ks_cpu[1]', fn, a, b, d, [128, 200], layout)
    raises(ValueError, 'ks_cpu', fn, a, b, d, [384], layout)
    raises(ValueError, 'ks_cpu', fn, a, b, d, None, layout)
    raises(TypeError, 'ks_cpu', fn, a, b, d, [128, 256.0], layout)
    raises(ValueError, 'recipe', fn, a, b, d, ks, layout, recipe=(1, 128, 128))
    raises(ValueError, 'use_psum_layout', fn, a, b, d, ks, layout, use_psum_layout=True)
    assert '36864' in raises(ValueError, 'a', fn, (fp8(96 * 384 - 1), a[1]), b, d, ks, layout)
    raises(ValueError, 'b', fn, a, (fp8(160, 384, strides=(1, 160)), b[1]), d, ks, layout)
    raises(ValueError, 'a[1]', fn, (a[0], token_sf(96, 2)), b, d, ks, layout)
    raises(ValueError, 'b[1]', fn, a, (b[0], token_sf(96, 3)), d, ks, layout)
    raises(ValueError, 'd', fn, a, b, bf16(2, 96, 160), ks, layout)
    raises(ValueError, 'd', fn, a, b, f32(96, 160), ks, layout)
    raises(ValueError, 'c', fn, a, b, d, ks, layout, c=f32(2, 96, 161))
    raises(ValueError, 'grouped_layout', fn, a, b, d, ks, i32(3))
    raises(ValueError, 'grouped_layout', fn, a, b, d, ks, f32(2))


def test_layout_helpers():
    assert deep_gemm.get_tma_aligned_size(5, 4) == 8 and deep_gemm.get_tma_aligned_size(8, 4) == 8
    assert deep_gemm.get_tma_aligned_size(17, 1) == 32 and deep_gemm.get_tma_aligned_size(0, 4) == 0
    raises(ValueError, 'element_size', deep_gemm.get_tma_aligned_size, 5, 3)
    raises(ValueError, 'x', deep_gemm.get_tma_aligned_size, -1, 4)
    raises(TypeError, 'x', deep_gemm.get_tma_aligned_size, 5.0, 4)
    fn = deep_gemm.transform_sf_into_required_layout
    raises(ValueError, 'is_sfa', fn, f32(M, KB), M, K, (1, 128, 128))
    raises(ValueError, 'is_sfa', fn, f32(M, KB), M, K, (1, 128), is_sfa=True)
    raises(ValueError, 'recipe', fn, f32(M, KB), M, K, (1, 128, 128, 1))
    raises(ValueError, 'sf', fn, f32(M, KB + 1), M, K, (1, 128))
    raises(ValueError, 'sf', fn, f32(2, M, KB), M, K, (1, 128))  # groups without num_groups
    raises(ValueError, 'sf', fn, f32(3, M, KB), M, K, (1, 128), num_groups=2)
    assert 'UE8M0' in raises(ValueError, 'sf', fn, i32(M, 1), M, K, (1, 128))
    raises(ValueError, 'sf', fn, f32(M, 10), M, 10 * 32, (1, 32))  # gran_k 32 is SM100
    raises(ValueError, 'mn', fn, f32(M, KB), -1, K, (1, 128))
    raises(ValueError, 'num_groups', fn, f32(M, KB), M, K, (1, 128), num_groups=0)
    raises(TypeError, 'disable_ue8m0_cast', fn, f32(M, KB), M, K, (1, 128), disable_ue8m0_cast=1)
    raises(ValueError, 'sf', deep_gemm.get_mn_major_tma_aligned_tensor, f32(KB))


def test_scales_already_in_the_kernel_layout_pass_through():
    # No copy (and no torch): the same object comes back.
    aligned = token_sf(M, KB)
    assert deep_gemm.get_mn_major_tma_aligned_tensor(aligned) is aligned
    grouped = token_sf(2, 61, KB)  # 61 rows pad to 64
    assert grouped._strides == (64 * KB, 1, 64)
    assert deep_gemm.transform_sf_into_required_layout(grouped, 61, K, (1, 128), num_groups=2) is grouped
    block = f32(2, KB)
    assert deep_gemm.transform_sf_into_required_layout(block, N, K, (1, 128, 128), is_sfa=False) is block


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
@pytest.mark.parametrize('call', [
    lambda: deep_gemm.fp8_gemm_nt(*dense_1d2d()),
    lambda: deep_gemm.fp8_gemm_nt(*dense_1d1d(), recipe=(1, 1, 128)),
    lambda: deep_gemm.fp8_gemm_nt(*dense_1d1d(), c=f32(M, N), recipe_a=(1, 128), recipe_b=(1, 128)),
    lambda: deep_gemm.fp8_gemm_nn((fp8(M, K), token_sf(M, KB)), (fp8(N, K).T, f32(2, KB).T), bf16(M, N)),
    lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(*grouped_contiguous(), ensure_zero_padding=False),
    lambda: deep_gemm.m_grouped_fp8_gemm_nt_masked(*masked(), 32),
])
def test_valid_calls_reach_the_library(call):
    # Past every Python check, the C++ layer answers: no GPU here (or, until the SM90 FP8 kernel lands, a
    # "not implemented yet"), either way a RuntimeError rather than a crash.
    with pytest.raises(RuntimeError):
        call()
