"""The plan cache (deep_gemm/_plans.py) on stand-in tensors, with the real extension: a second call with the same
signature runs the kept plan, and whatever the checks read (strides, dtypes, devices, pointer alignment, scalar
argument types, settings) sends a call through the checks again, which raise what a first call would.

On this machine without a GPU a valid call checks its arguments and then raises the library's RuntimeError; the
plan is kept all the same (the checks passed), so its reuse is observable here through _plan_cache_info().
"""
import gc
import weakref

import pytest

import deep_gemm
from deep_gemm import _C, _plans
from conftest import FakeTensor, gpu_available, mn_major_strides

pytestmark = pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')

M, N, K = 256, 512, 384
KB = K // 128


_DTYPES = {}
_next_ptr = [0x7F0000000000]


class T(FakeTensor):
    """A stand-in closer to a torch tensor: get_device() (the fast path reads it; conftest's stand-ins have only
    .device), one dtype object per dtype (as torch.bfloat16 is one object) and by default an address of its own
    (1 MiB apart, so 16-byte aligned)."""

    def __init__(self, shape, dtype='bfloat16', ptr=None, **kw):
        if ptr is None:
            ptr = _next_ptr[0] = _next_ptr[0] + (1 << 20)
        super().__init__(shape, dtype, ptr=ptr, **kw)
        self.dtype = _DTYPES.setdefault(dtype, self.dtype)

    def get_device(self):
        return self.device.index if self.device.type == 'cuda' else -1

    @property
    def T(self):
        return T(self.shape[::-1], self.dtype.name, device=self.device.type, index=self.device.index,
                 strides=self._strides[::-1], ptr=self._ptr)


def t(*shape, dtype='bfloat16', **kw):
    return T(shape, dtype, **kw)


def f32(*shape, **kw):
    return t(*shape, dtype='float32', **kw)


def fp8(*shape, **kw):
    return t(*shape, dtype='float8_e4m3fn', **kw)


def i32(*shape, **kw):
    return t(*shape, dtype='int32', **kw)


def info():
    return deep_gemm._plan_cache_info()


def no_gpu(fn, *args, **kwargs):
    """Calls a valid GEMM: past the checks, the library reports the missing GPU."""
    with pytest.raises(RuntimeError):
        fn(*args, **kwargs)


def raises(exc, argument, fn, *args, **kwargs):
    with pytest.raises(exc) as e:
        fn(*args, **kwargs)
    assert str(e.value).startswith(argument + ':'), str(e.value)
    return str(e.value)


@pytest.fixture(autouse=True)
def fresh_cache():
    deep_gemm._clear_plan_cache()
    yield
    deep_gemm._clear_plan_cache()


# One valid call per GEMM family (stand-ins: every pointer 16-byte aligned, all on cuda:0).
FAMILIES = {
    'bf16_nt': lambda: (deep_gemm.bf16_gemm_nt, (t(M, K), t(N, K), t(M, N)), {}),
    'bf16_nn': lambda: (deep_gemm.bf16_gemm_nn, (t(M, K), t(K, N), t(M, N)), {}),
    'bf16_tn': lambda: (deep_gemm.bf16_gemm_tn, (t(K, M), t(K, N), t(M, N)), {}),
    'bf16_tt_c': lambda: (deep_gemm.bf16_gemm_tt, (t(K, M), t(N, K), t(M, N, dtype='float32')),
                          {'c': t(M, N, dtype='float32')}),
    'bf16_m_grouped_contiguous': lambda: (deep_gemm.m_grouped_bf16_gemm_nt_contiguous,
                                          (t(M, K), t(2, N, K), t(M, N), i32(M)), {}),
    'bf16_m_grouped_psum': lambda: (deep_gemm.m_grouped_bf16_gemm_nn_contiguous,
                                    (t(M, K), t(2, K, N), t(M, N), i32(2)), {'use_psum_layout': True}),
    'bf16_m_grouped_masked': lambda: (deep_gemm.m_grouped_bf16_gemm_nt_masked,
                                      (t(4, 64, K), t(4, N, K), t(4, 64, N), i32(4), 32), {}),
    'bf16_k_grouped': lambda: (deep_gemm.k_grouped_bf16_gemm_tn_contiguous,
                               (t(256, M), t(256, N), f32(2, M, N), [128, 128], i32(2)), {}),
    'fp8_1d2d': lambda: (deep_gemm.fp8_gemm_nt, ((fp8(M, K), f32(M, KB)), (fp8(N, K), f32(N // 128, KB)), t(M, N)),
                         {}),
    'fp8_1d1d_c': lambda: (deep_gemm.fp8_gemm_nt, ((fp8(M, K), f32(M, KB)), (fp8(N, K), f32(N, KB)), f32(M, N)),
                           {'c': f32(M, N), 'recipe': (1, 1, 128)}),
    'fp8_nn': lambda: (deep_gemm.fp8_gemm_nn, ((fp8(M, K), f32(M, KB)), (fp8(N, K).T, f32(N // 128, KB).T),
                                               t(M, N)), {}),
    'fp8_m_grouped_contiguous': lambda: (deep_gemm.m_grouped_fp8_gemm_nt_contiguous,
                                         ((fp8(M, K), f32(M, KB)), (fp8(2, N, K), f32(2, N // 128, KB)), t(M, N),
                                          i32(M)), {}),
    'einsum': lambda: (deep_gemm.einsum, ('bhr,hdr->bhd', t(8, 4, 128), t(4, 64, 128), t(8, 4, 64)), {}),
    'fp8_einsum': lambda: (deep_gemm.fp8_einsum, ('bhr,hdr->bhd', (fp8(8, 4, 128), f32(8, 4, 1)),
                                                  (fp8(4, 128, 128), f32(4, 1, 1)), t(8, 4, 128)), {}),
    'fp8_m_grouped_masked': lambda: (deep_gemm.m_grouped_fp8_gemm_nt_masked,
                                     ((fp8(4, 64, K), f32(4, 64, KB)), (fp8(4, N, K), f32(4, N // 128, KB)),
                                      t(4, 64, N), i32(4), 32), {}),
    'fp8_skip_head_mid': lambda: (deep_gemm.fp8_gemm_nt_skip_head_mid,
                                  ((fp8(M, K), f32(M, KB)), (fp8(N, K), f32(N // 128, KB)), t(M, N + 2 * 64),
                                   (128, 64, 128)), {}),
}


@pytest.mark.parametrize('family', FAMILIES)
def test_a_second_call_with_the_same_signature_runs_the_kept_plan(family):
    fn, args, kwargs = FAMILIES[family]()
    before = info()
    no_gpu(fn, *args, **kwargs)
    after_first = info()
    assert after_first['misses'] == before['misses'] + 1 and after_first['size'] == 1
    assert after_first['hits'] == before['hits']
    no_gpu(fn, *args, **kwargs)
    # New tensors with the same signature (other, equally aligned pointers) take the plan as well.
    fn, args, kwargs = FAMILIES[family]()
    no_gpu(fn, *args, **kwargs)
    after = info()
    assert after['hits'] == before['hits'] + 2 and after['misses'] == after_first['misses'] and after['size'] == 1


def test_row_major_per_token_scales_reach_the_library_untouched():
    # What per_token_cast_to_fp8 returns ([M, ceil(K/128)], row-major) needs no layout pass: no torch here, so a
    # layout pass would fail on the stand-ins; the call gets past every check instead.
    a, b, d = (fp8(M, K), f32(M, KB)), (fp8(N, K), f32(N // 128, KB)), t(M, N)
    assert a[1].stride() == (KB, 1)
    no_gpu(deep_gemm.fp8_gemm_nt, a, b, d)
    mn_major = f32(M, KB, strides=mn_major_strides((M, KB)))
    no_gpu(deep_gemm.fp8_gemm_nt, (a[0], mn_major), b, d)  # and MN-major ones: another signature
    assert info()['size'] == 2


def test_a_changed_stride_is_checked_again():
    fn, (a, b, d), _ = FAMILIES['bf16_nt']()
    no_gpu(fn, a, b, d)
    first = raises(ValueError, 'd', fn, a, b, t(M, N, strides=(1, M)))
    deep_gemm._clear_plan_cache()
    assert raises(ValueError, 'd', fn, a, b, t(M, N, strides=(1, M))) == first  # as a first call says it
    no_gpu(fn, a, b, d)
    raises(ValueError, 'a', deep_gemm.fp8_gemm_nt, (fp8(M, K, strides=(1, M)), f32(M, KB)),
           (fp8(N, K), f32(N // 128, KB)), d)


def test_a_changed_dtype_is_checked_again():
    fn, (a, b, d), _ = FAMILIES['bf16_nt']()
    no_gpu(fn, a, b, d)
    message = raises(ValueError, 'a', fn, t(M, K, dtype='float16'), b, d)
    assert 'bf16' in message and 'fp16' in message
    fp8_fn, (fa, fb, fd), _ = FAMILIES['fp8_1d2d']()
    no_gpu(fp8_fn, fa, fb, fd)
    raises(ValueError, 'd', fp8_fn, fa, fb, f32(M, N))  # 1D2D writes bf16


def test_a_changed_device_is_checked_again():
    fn, (a, b, d), _ = FAMILIES['bf16_nt']()
    no_gpu(fn, a, b, d)
    raises(ValueError, 'd', fn, a, b, t(M, N, index=1))
    assert 'CUDA' in raises(ValueError, 'b', fn, a, t(N, K, device='cpu'), d)


def test_a_changed_pointer_alignment_is_checked_again():
    fn, (a, sfb, d), _ = FAMILIES['fp8_1d2d']()
    no_gpu(fn, a, sfb, d)
    base = info()
    # Scales 4 bytes off: still valid (4-byte aligned), but not the alignment the plan was checked with.
    moved = (a[0], f32(M, KB, ptr=a[1].data_ptr() + 4))
    no_gpu(fn, moved, sfb, d)
    now = info()
    assert now['declined'] == base['declined'] + 1 and now['misses'] == base['misses'] + 1
    # 2 bytes off is invalid: the same ValueError as on a first call.
    odd = (a[0], f32(M, KB, ptr=a[1].data_ptr() + 2))
    message = raises(ValueError, 'a[1]', fn, odd, sfb, d)
    assert '4-byte' in message and 'aligned' in message
    deep_gemm._clear_plan_cache()
    assert raises(ValueError, 'a[1]', fn, odd, sfb, d) == message


def test_c_given_as_d_and_a_separate_c_are_different_runs():
    fn, (a, b, d), kwargs = FAMILIES['fp8_1d1d_c']()
    no_gpu(fn, a, b, d, **kwargs)
    base = info()
    no_gpu(fn, a, b, d, c=d, recipe=(1, 1, 128))  # in place: same signature, the pointers say otherwise
    assert info()['declined'] == base['declined'] + 1 and info()['misses'] == base['misses'] + 1


def test_scalar_arguments_of_another_type_are_checked_again():
    fn, args, _ = FAMILIES['bf16_m_grouped_psum']()
    no_gpu(fn, *args, use_psum_layout=True)
    raises(TypeError, 'use_psum_layout', fn, *args, use_psum_layout=1)  # 1 == True, but not a bool
    masked, margs, _ = FAMILIES['bf16_m_grouped_masked']()
    no_gpu(masked, *margs)
    raises(TypeError, 'expected_m', masked, *margs[:4], 32.0)
    k_grouped, (a, b, d, ks, layout), _ = FAMILIES['bf16_k_grouped']()
    no_gpu(k_grouped, a, b, d, ks, layout)
    raises(TypeError, 'ks_cpu', k_grouped, a, b, d, [128, 128.0], layout)
    fp8_fn, (fa, fb, fd), kwargs = FAMILIES['fp8_1d1d_c']()
    no_gpu(fp8_fn, fa, fb, fd, **kwargs)
    raises(ValueError, 'recipe', fp8_fn, fa, fb, fd, c=kwargs['c'], recipe=(1, 1.0, 128))
    raises(TypeError, 'disable_ue8m0_cast', fp8_fn, fa, fb, fd, c=kwargs['c'], recipe=(1, 1, 128),
           disable_ue8m0_cast=0)


def test_a_changed_setting_is_checked_again():
    fn, args, _ = FAMILIES['bf16_nt']()
    no_gpu(fn, *args)
    base = info()
    deep_gemm.set_num_sms(64)
    try:
        no_gpu(fn, *args)
        assert info()['declined'] == base['declined'] + 1 and info()['misses'] == base['misses'] + 1
        no_gpu(fn, *args)  # the new plan (num_sms 64) replaced the old one under the same signature
        assert info()['hits'] == base['hits'] + 1 and info()['size'] == 1
    finally:
        _C.set_num_sms_setting(0)  # back to every SM (there is no public reset)
    deep_gemm._C.reload_env()  # the DG_* variables may have changed: every kept plan is checked again
    before = info()
    no_gpu(fn, *args)
    assert info()['declined'] == before['declined'] + 1 and info()['misses'] == before['misses'] + 1


def test_the_cache_is_bounded_and_keeps_no_tensor_alive(monkeypatch):
    monkeypatch.setattr(_plans, 'CAPACITY', 3)
    d = t(M, N)
    a = t(M, K)
    alive = weakref.ref(a)
    for k in range(1, 6):
        no_gpu(deep_gemm.bf16_gemm_nt, a if k == 1 else t(M, 64 * k), t(N, 64 * k) if k > 1 else t(N, K), d)
    assert info()['size'] == 3
    del a
    gc.collect()
    assert alive() is None
    # The oldest signatures went first: K = 384 (the first call) is checked again.
    base = info()
    no_gpu(deep_gemm.bf16_gemm_nt, t(M, K), t(N, K), d)
    assert info()['misses'] == base['misses'] + 1


def test_invalid_calls_keep_no_plan():
    fn, (a, b, d), _ = FAMILIES['bf16_nt']()
    raises(ValueError, 'd', fn, a, b, t(M, N + 8))
    raises(ValueError, 'compiled_dims', fn, a, b, d, compiled_dims='nx')
    assert info()['size'] == 0


def test_skip_head_mid_and_plain_calls_keep_plans_of_their_own():
    # The same operands, d shaped for each: neither call may run the other's plan (nor another split's).
    a, b = (fp8(M, K), f32(M, KB)), (fp8(N, K), f32(N // 128, KB))
    wide = t(M, N + 2 * 64)
    hits = info()['hits']
    no_gpu(deep_gemm.fp8_gemm_nt_skip_head_mid, a, b, wide, (128, 64, 128))
    no_gpu(deep_gemm.fp8_gemm_nt, a, b, t(M, N))
    no_gpu(deep_gemm.fp8_gemm_nt_skip_head_mid, a, b, wide, (64, 32, 64))  # same d width, other heads
    assert info()['size'] == 3 and info()['hits'] == hits
    no_gpu(deep_gemm.fp8_gemm_nt_skip_head_mid, a, b, wide, [128, 64, 128])  # a list: a signature of its own
    assert info()['size'] == 4
    no_gpu(deep_gemm.fp8_gemm_nt_skip_head_mid, a, b, wide, (128, 64, 128))
    assert info()['hits'] == hits + 1


@pytest.mark.parametrize('family', ['bf16_nt', 'bf16_m_grouped_masked', 'fp8_1d2d', 'fp8_m_grouped_contiguous',
                                    'fp8_skip_head_mid'])
def test_a_kept_plan_runs_no_python_check(family, monkeypatch):
    fn, args, kwargs = FAMILIES[family]()
    no_gpu(fn, *args, **kwargs)

    def must_not_run(*_args, **_kwargs):
        raise AssertionError('a check ran for a signature already seen')

    from deep_gemm import _fp8, _gemm
    for module in (_gemm, _fp8):
        for name in ('view', 'common_device', 'require_compiled_dims', 'run_checked'):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, must_not_run)
    monkeypatch.setattr(_fp8, '_common', must_not_run)
    no_gpu(fn, *args, **kwargs)  # the library's no-GPU RuntimeError, not the AssertionError
