"""einsum / fp8_einsum without a GPU: DeepGEMM's signatures, the expressions accepted and refused, bad input
naming the argument, and the strided views that reach the C++ layer (no operand copies).

Stand-in tensors (conftest.FakeTensor, plus permute) carry shapes and strides only; calls that pass
validation stop at "no CUDA GPU" from the library on a machine without one.
"""
import inspect

import pytest

import deep_gemm
from deep_gemm import _einsum
from conftest import FakeTensor, gpu_available, bf16, f32

R = inspect.Parameter.empty
no_gpu_only = pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
B, H, RANK, D = 7, 16, 512, 128  # DeepSeek MLA-like: tokens, heads, latent rank, head dim


class T(FakeTensor):
    """A stand-in tensor that also permutes (as torch.Tensor.permute: shape and strides only)."""

    def permute(self, *order):
        return T([self.shape[i] for i in order], self.dtype.name, self.device.type, self.device.index,
                 [self._strides[i] for i in order], self._ptr)


def fp8(*shape, **kw):
    return T(shape, 'float8_e4m3fn', **kw)


def aligned(x):
    return (x + 3) // 4 * 4


def bf16_args(expr):
    """Valid (a, b, d, c) for each expression, DeepGEMM's test layouts (b of bhr,hdr->bhd a [:, :, :r] slice)."""
    if expr == 'bhr,hdr->bhd':
        return bf16(B, H, RANK), bf16(H, D, RANK, strides=(D * (RANK + 128), RANK + 128, 1)), bf16(B, H, D), None
    if expr == 'bhd,hdr->bhr':
        return bf16(B, H, D), bf16(H, D, RANK), bf16(B, H, RANK), None
    z = f32(H, D, RANK)
    return bf16(128, H, D), bf16(128, H, RANK), z, z


def token_sf_for_permuted(shape, perm):
    """Per-token scales in the user's letter order whose permutation is already the kernel layout
    (MN-major, TMA-aligned), so they pass to the C++ layer without a torch copy."""
    g, mn, kb = (shape[i] for i in perm)
    kernel_strides = (aligned(mn) * kb, 1, aligned(mn))
    strides = [0, 0, 0]
    for position, dim in enumerate(perm):
        strides[dim] = kernel_strides[position]
    return f32(*shape, strides=strides)


def fp8_args(expr):
    """Valid ((a, sfa), (b, sfb), d, c, recipe) with scales needing no conversion."""
    if expr == 'bhr,hdr->bhd':
        a = (fp8(B, H, RANK), token_sf_for_permuted((B, H, RANK // 128), (1, 0, 2)))
        return a, (fp8(H, D, RANK), f32(H, 1, RANK // 128)), bf16(B, H, D), None, (1, 128, 128)
    if expr == 'bhd,hdr->bhr':
        a = (fp8(B, H, D), token_sf_for_permuted((B, H, 1), (1, 0, 2)))
        # b stored [h, r, d] (K-major) and passed as its [h, d, r] view; per-block scales likewise.
        b = (fp8(H, D, RANK, strides=(RANK * D, 1, D)), f32(H, 1, RANK // 128, strides=(RANK // 128, 1, 1)))
        return a, b, bf16(B, H, RANK), None, (1, 128, 128)
    # bhd,bhr->hdr: a and b stored with the token letter b contiguous ([h, d, b] / [h, r, b]), 1D1D.
    a = (fp8(128, H, D, strides=(1, D * 128, 128)), token_sf_for_permuted((1, H, D), (1, 2, 0)))
    b = (fp8(128, H, RANK, strides=(1, RANK * 128, 128)), token_sf_for_permuted((1, H, RANK), (1, 2, 0)))
    z = f32(H, D, RANK)
    return a, b, z, z, (1, 1, 128)


EXPRS = ['bhr,hdr->bhd', 'bhd,hdr->bhr', 'bhd,bhr->hdr']


def test_signatures_match_deepgemm():
    # DeepGEMM 2.6 csrc/apis/einsum.hpp: einsum(expr, a, b, d, c=None, use_cublaslt=False),
    # fp8_einsum(expr, a, b, d, c=None, recipe=(1, 128, 128)).
    params = lambda fn: [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]  # noqa: E731
    assert params(deep_gemm.einsum) == [('expr', R), ('a', R), ('b', R), ('d', R), ('c', None),
                                        ('use_cublaslt', False)]
    assert params(deep_gemm.fp8_einsum) == [('expr', R), ('a', R), ('b', R), ('d', R), ('c', None),
                                            ('recipe', (1, 128, 128))]


def test_supported_expressions_are_documented():
    assert set(_einsum.EXPRESSIONS) == set(EXPRS)
    assert set(_einsum.UNSUPPORTED_FP8) == {'bmk,bnk->mn'}


def test_fp8_batch_reduction_is_refused_naming_expr():
    a, b, d = bf16(4, 128, 256), bf16(4, 384, 256), f32(128, 384)
    with pytest.raises(ValueError) as info:
        deep_gemm.fp8_einsum('bmk,bnk->mn', (a, f32(4, 128, 2)), (b, f32(4, 384, 2)), d, d, (1, 1, 128))
    message = str(info.value)
    assert message.startswith("expr: 'bmk,bnk->mn' is not supported by fp8_einsum"), message
    assert 'bhr,hdr->bhd' in message  # names the supported ones


@pytest.mark.parametrize('expr', ['bhr,hdr->bdh', 'bhr, hdr -> bhd', 'ij,jk->ik', ''])
def test_unknown_expression_is_refused_naming_expr(expr):
    a, b, d, _ = bf16_args('bhr,hdr->bhd')
    for call in (lambda: deep_gemm.einsum(expr, a, b, d),
                 lambda: deep_gemm.fp8_einsum(expr, (fp8(B, H, RANK), f32(B, H, 4)), (fp8(H, D, RANK), f32(H, 1, 4)),
                                              d)):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value).startswith('expr: expected one of'), info.value
        assert "not supported by tilegemm's SM90 kernels" in str(info.value)
    with pytest.raises(ValueError) as info:
        deep_gemm.einsum(expr, a, b, d)
    assert "'bmk,bnk->mn'" in str(info.value)  # einsum also runs the batch-reducing form


def test_expr_must_be_a_string():
    a, b, d, _ = bf16_args('bhr,hdr->bhd')
    with pytest.raises(TypeError, match='^expr: expected a str'):
        deep_gemm.einsum(None, a, b, d)
    with pytest.raises(TypeError, match='^expr: expected a str'):
        deep_gemm.fp8_einsum(b'bhr,hdr->bhd', a, b, d)


BF16_BAD = [
    # (expr, which argument to replace, replacement, error type, message start)
    ('bhr,hdr->bhd', 'a', f32(B, H, RANK), ValueError, 'a: expected bfloat16'),
    ('bhr,hdr->bhd', 'b', T((H, D, RANK), 'float16'), ValueError, 'b: expected bfloat16'),
    ('bhr,hdr->bhd', 'a', bf16(B * H, RANK), ValueError, 'a: expected a 3-D tensor [b, h, r]'),
    ('bhr,hdr->bhd', 'b', bf16(H, D, RANK + 8), ValueError, 'b: expected shape [h=16, d, r=512]'),
    ('bhr,hdr->bhd', 'b', bf16(H + 1, D, RANK), ValueError, 'b: expected shape [h=16, d, r=512]'),
    ('bhr,hdr->bhd', 'd', bf16(B, H, D + 8), ValueError, 'd: expected shape [b=7, h=16, d=128]'),
    ('bhr,hdr->bhd', 'd', f32(B, H, D), ValueError, 'd: expected bfloat16'),
    ('bhr,hdr->bhd', 'd', bf16(B, H, D, strides=(1, B * D, B)), ValueError, "d: expected stride 1 along its last "
                                                                            "letter 'd'"),
    ('bhr,hdr->bhd', 'c', f32(B, H, D), ValueError, "c: expected None for 'bhr,hdr->bhd'"),
    ('bhd,hdr->bhr', 'd', bf16(B, H, D), ValueError, 'd: expected shape [b=7, h=16, r=512]'),
    ('bhd,hdr->bhr', 'a', 'x', TypeError, 'a: expected a torch.Tensor'),
    ('bhd,bhr->hdr', 'd', bf16(H, D, RANK), ValueError, 'd: expected float32'),
    ('bhd,bhr->hdr', 'b', bf16(64, H, RANK), ValueError, 'b: expected shape [b=128, h=16, r]'),
    ('bhd,bhr->hdr', 'c', f32(H, D, RANK + 4), ValueError, 'c: expected shape (16, 128, 512) like d'),
    ('bhd,bhr->hdr', 'c', bf16(H, D, RANK), ValueError, 'c: expected float32'),
    ('bhr,hdr->bhd', 'a', bf16(B, H, RANK, device='cpu'), ValueError, 'a: expected a CUDA tensor'),
]


@pytest.mark.parametrize('expr,name,value,error,start', BF16_BAD,
                         ids=[f'{e}:{n}:{s[:24]}' for e, n, _, _, s in BF16_BAD])
def test_einsum_bad_input_names_the_argument(expr, name, value, error, start):
    args = dict(zip('abdc', bf16_args(expr)))
    args[name] = value
    with pytest.raises(error) as info:
        deep_gemm.einsum(expr, args['a'], args['b'], args['d'], c=args['c'])
    assert str(info.value).startswith(start), info.value


def test_einsum_use_cublaslt_must_be_a_bool():
    a, b, d, _ = bf16_args('bhr,hdr->bhd')
    with pytest.raises(TypeError, match='^use_cublaslt: expected a bool'):
        deep_gemm.einsum('bhr,hdr->bhd', a, b, d, use_cublaslt=1)


@pytest.fixture(autouse=True)
def fresh_plan_cache():
    # The recorder's stand-in plans must not outlive its test (deep_gemm keeps plans per signature).
    deep_gemm._clear_plan_cache()
    yield
    deep_gemm._clear_plan_cache()


class Recorder:
    """Stands in for deep_gemm._C: records the views each call hands to the C++ layer."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            return _RecordedPlan() if name.startswith('plan_') else None
        return call


class _RecordedPlan:
    """What a plan factory returns to the recorder: its first launch succeeds and does nothing."""

    def first_launch(self, *args):
        return True


def _view(t, perm):
    return (t.data_ptr(), [t.shape[i] for i in perm], [t.stride()[i] for i in perm])


@pytest.mark.parametrize('expr', EXPRS)
@pytest.mark.parametrize('use_cublaslt', [False, True])
def test_einsum_passes_permuted_views_of_the_callers_tensors(monkeypatch, expr, use_cublaslt):
    recorder = Recorder()
    monkeypatch.setattr(_einsum, '_C', recorder)
    ptrs = iter(range(0x7F0000000000, 0x7F0000100000, 0x10000))
    a, b, d, c = (None if t is None else T(t.shape, t.dtype.name, strides=t.stride(), ptr=next(ptrs))
                  for t in bf16_args(expr))
    if c is not None:
        c = d
    deep_gemm.einsum(expr, a, b, d, c=c, use_cublaslt=use_cublaslt)
    (name, args), = recorder.calls
    e = _einsum.EXPRESSIONS[expr]
    views = args[1:5] if use_cublaslt else args[0:4]
    assert name == ('cublaslt' if use_cublaslt else 'plan_bf16_gemm')
    if use_cublaslt:
        assert args[0] == 'nt'
    got = [None if v is None else (v[0], v[2], v[3]) for v in views]
    want = [_view(a, e.perm_a), _view(b, e.perm_b), _view(d, e.perm_d), None if c is None else _view(d, e.perm_d)]
    assert got == want
    # The batched GEMM's shapes: [G, M, K] · [G, N, K] → [G, M, N] with G = h.
    (g, m, k), (g_b, n, k_b), (g_d, m_d, n_d) = (v[2] for v in views[:3])
    assert g == g_b == g_d == H and (m, n, k) == (m_d, n_d, k_b)


@pytest.mark.parametrize('expr', ['bhr,hdr->bhd'])
def test_bhr_hdr_bhd_view_strides(monkeypatch, expr):
    # The example of the module docstring, spelled out: A [h, b, r] with strides (r, h·r, 1), D [h, b, d].
    recorder = Recorder()
    monkeypatch.setattr(_einsum, '_C', recorder)
    a, b, d = bf16(B, H, RANK), bf16(H, D, RANK), bf16(B, H, D)
    deep_gemm.einsum(expr, a, b, d)
    (_, (va, vb, vd, vc, *_)), = recorder.calls
    assert (va[2], va[3]) == ([H, B, RANK], [RANK, H * RANK, 1])
    assert (vb[2], vb[3]) == ([H, D, RANK], [D * RANK, RANK, 1])
    assert (vd[2], vd[3]) == ([H, B, D], [D, H * D, 1]) and vc is None


@no_gpu_only
@pytest.mark.parametrize('expr', EXPRS)
def test_valid_einsum_reaches_the_library(expr):
    a, b, d, c = bf16_args(expr)
    with pytest.raises(RuntimeError, match='no CUDA GPU'):
        deep_gemm.einsum(expr, a, b, d, c=c)


@no_gpu_only
def test_valid_einsum_reaches_cublaslt():
    a, b, d, _ = bf16_args('bhr,hdr->bhd')
    with pytest.raises(RuntimeError):
        deep_gemm.einsum('bhr,hdr->bhd', a, b, d, use_cublaslt=True)


def _fp8_call(expr, **replace):
    a, b, d, c, recipe = fp8_args(expr)
    args = dict(a=a, b=b, d=d, c=c, recipe=recipe)
    args.update(replace)
    return lambda: deep_gemm.fp8_einsum(expr, args['a'], args['b'], args['d'], c=args['c'], recipe=args['recipe'])


FP8_BAD = [
    ('bhr,hdr->bhd', dict(a=fp8(B, H, RANK)), TypeError, 'a: expected a (float8_e4m3fn tensor'),
    ('bhr,hdr->bhd', dict(a=(bf16(B, H, RANK), f32(B, H, 4))), ValueError, 'a: expected float8_e4m3fn'),
    ('bhr,hdr->bhd', dict(b=(fp8(H, D, RANK), None)), TypeError, 'b[1]: expected a torch.Tensor'),
    ('bhr,hdr->bhd', dict(recipe=(1, 128, 64)), ValueError, 'recipe: expected (1, 128, 128)'),
    ('bhr,hdr->bhd', dict(a=(fp8(B, H, RANK), f32(B, H, 3))), ValueError,
     "a[1]: expected float32 scale factors of shape [b=7, h=16, r/128=4] for 'bhr,hdr->bhd', got (7, 16, 3)"),
    ('bhr,hdr->bhd', dict(a=(fp8(B, H, RANK), T((B, H, 1), 'int32'))), ValueError, 'a[1]: expected float32'),
    ('bhr,hdr->bhd', dict(b=(fp8(H, D, RANK), f32(H, D, 4))), ValueError,
     'b[1]: expected float32 scale factors of shape [h=16, d/128=1, r/128=4]'),
    ('bhr,hdr->bhd', dict(b=(fp8(H, D, RANK), f32(H, 1, 4)), recipe=(1, 1, 128), d=f32(B, H, D)), ValueError,
     'b[1]: expected float32 scale factors of shape [h=16, d=128, r/128=4]'),
    ('bhr,hdr->bhd', dict(d=f32(B, H, D)), ValueError, 'd: expected bfloat16'),
    ('bhr,hdr->bhd', dict(c=bf16(B, H, D)), ValueError, 'c: expected None with the 1D2D recipe'),
    ('bhr,hdr->bhd', dict(b=(fp8(H, D, RANK + 128), f32(H, 1, 4))), ValueError, 'b: expected shape [h=16, d, r=512]'),
    ('bhr,hdr->bhd', dict(a=(fp8(B, H, RANK, strides=(H, 1, B * H)), f32(B, H, 4))), ValueError,
     "a: expected stride 1 along 'r', the contracted letter of 'bhr,hdr->bhd'"),
    # DeepGEMM's contiguous [h, d, r] weight is MN-major for this GEMM: SM90 FP8 cannot read it.
    ('bhd,hdr->bhr', dict(b=(fp8(H, D, RANK), f32(H, 1, 4))), ValueError,
     "b: expected stride 1 along 'd', the contracted letter of 'bhd,hdr->bhr'"),
    ('bhd,bhr->hdr', dict(recipe=(1, 128, 128)), ValueError, "recipe: expected (1, 1, 128) for 'bhd,bhr->hdr'"),
    ('bhd,bhr->hdr', dict(a=(fp8(128, H, D), f32(1, H, D))), ValueError,
     "a: expected stride 1 along 'b', the contracted letter of 'bhd,bhr->hdr'"),
    ('bhd,bhr->hdr', dict(d=bf16(H, D, RANK), c=None), ValueError, 'd: expected float32'),
    ('bhd,bhr->hdr', dict(c=f32(H, D, 8)), ValueError, 'c: expected shape (16, 128, 512) like d'),
]


@pytest.mark.parametrize('expr,replace,error,start', FP8_BAD, ids=[f'{e}:{s[:40]}' for e, _, _, s in FP8_BAD])
def test_fp8_einsum_bad_input_names_the_argument(expr, replace, error, start):
    with pytest.raises(error) as info:
        _fp8_call(expr, **replace)()
    assert str(info.value).startswith(start), info.value


@pytest.mark.parametrize('expr', EXPRS)
def test_fp8_einsum_passes_permuted_views_of_data_and_scales(monkeypatch, expr):
    recorder = Recorder()
    monkeypatch.setattr(_einsum, '_C', recorder)
    a, b, d, c, recipe = fp8_args(expr)
    deep_gemm.fp8_einsum(expr, a, b, d, c=c, recipe=recipe)
    (name, args), = recorder.calls
    assert name == 'plan_fp8_gemm'
    va, vsa, vb, vsb, vd, vc, one_d_one_d = args[:7]
    e = _einsum.EXPRESSIONS[expr]
    assert one_d_one_d == (recipe == (1, 1, 128))
    for v, t, perm in ((va, a[0], e.perm_a), (vsa, a[1], e.perm_a), (vb, b[0], e.perm_b), (vsb, b[1], e.perm_b),
                       (vd, d, e.perm_d)):
        assert (v[0], v[2], v[3]) == _view(t, perm)
    assert vc == (None if c is None else vd)
    # The permuted FP8 operands are K-major (stride 1 along the contracted letter), as wgmma needs.
    assert va[3][-1] == 1 and vb[3][-1] == 1


def test_fp8_einsum_passes_per_token_scales_as_quantised_without_a_layout_pass(monkeypatch):
    # a[1] [b, h, r/128] straight from a per-token quantiser: its [h, b, r/128] view is not MN-major, and goes to
    # the kernel as that view of the caller's tensor, not as a converted copy.
    recorder = Recorder()
    monkeypatch.setattr(_einsum, '_C', recorder)
    e = _einsum.EXPRESSIONS['bhr,hdr->bhd']
    a = (fp8(B, H, RANK), f32(B, H, RANK // 128))
    deep_gemm.fp8_einsum('bhr,hdr->bhd', a, (fp8(H, D, RANK), f32(H, 1, RANK // 128)), bf16(B, H, D))
    (name, args), = recorder.calls
    assert name == 'plan_fp8_gemm'
    assert (args[1][0], args[1][2], args[1][3]) == _view(a[1], e.perm_a)


@no_gpu_only
@pytest.mark.parametrize('expr', EXPRS)
def test_valid_fp8_einsum_reaches_the_library(expr):
    with pytest.raises(RuntimeError, match='no CUDA GPU'):
        _fp8_call(expr)()


def test_empty_batch_returns_without_device_work(monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(_einsum, '_C', recorder)
    a = (fp8(0, H, RANK), f32(0, H, 4))
    deep_gemm.fp8_einsum('bhr,hdr->bhd', a, (fp8(H, D, RANK), f32(H, 1, 4)), bf16(0, H, D))
    assert recorder.calls == []
