"""The FP8 wrappers against the C++ API's contract (include/tilegemm/fp8_gemm.hpp), on the CPU (needs torch).

The C++ plan factories are replaced by a torch emulation: each returns a plan that, when run, reads the
(pointer, dtype, shape, strides) views the wrappers passed (with the run's pointers), ASSERTS what fp8_gemm.hpp
requires (K-major operands, scales in any non-negative strides from a 4-byte aligned pointer, K-grouped operands
as DeepGEMM's 1-D blocks) and computes the documented result. A wrapper that passed a wrong pointer, stride or scale layout fails
here, without a GPU; the GPU tests (test_gpu_fp8.py) then check the real kernels through the same wrappers.
"""
import ctypes

import pytest

torch = pytest.importorskip('torch', reason='the contract emulation computes with torch')

import deep_gemm  # noqa: E402
from deep_gemm import _fp8  # noqa: E402
from deep_gemm._tensor import _CODES, _TORCH_DTYPES  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

_BY_CODE = {_CODES[code]: getattr(torch, name.replace('torch.', '')) for name, code in _TORCH_DTYPES.items()}


def tensor_of(v):
    """The tensor a (ptr, dtype code, shape, strides) view describes, aliasing the caller's memory."""
    ptr, code, shape, strides = v
    dtype = _BY_CODE[code]
    if 0 in shape:
        return torch.empty(shape, dtype=dtype)
    size = torch.empty(0, dtype=dtype).element_size()
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    raw = torch.frombuffer((ctypes.c_uint8 * (extent * size)).from_address(ptr), dtype=torch.uint8)
    return raw.view(dtype).as_strided(shape, strides)


def check_scale_strides(sf):
    """fp8_gemm.hpp reads scales in any non-negative strides from a 4-byte aligned pointer."""
    assert all(s >= 0 for s in sf.stride()), f'scale strides must be non-negative, {sf.stride()}'
    assert sf.data_ptr() % 4 == 0


def per_token_scales(sf, k):
    """Expands per-token scales [(G,) mn, kb] to [(G,) mn, k]."""
    check_scale_strides(sf)
    return sf.repeat_interleave(128, dim=-1)[..., :k]


def per_block_scales(sf, n, k):
    check_scale_strides(sf)
    return sf.repeat_interleave(128, dim=-2).repeat_interleave(128, dim=-1)[..., :n, :k]


def dequant(x, sf, per_block):
    assert x.stride(-1) == 1 or x.shape[-1] <= 1, f'operands must be K-major, strides {x.stride()}'
    k = x.shape[-1]
    scales = per_block_scales(sf, x.shape[-2], k) if per_block else per_token_scales(sf, k)
    return x.float() * scales


class EmulatedPlan:
    """A plan: the views its factory got; each run replaces their pointers with the run's and emulates."""

    def __init__(self, run, views, extra):
        self.run, self.views, self.extra = run, views, extra

    def first_launch(self, stream, num_sms, pointers):
        return self.launch(stream, num_sms, *pointers)

    def launch(self, stream, num_sms, *pointers):
        views = [None if v is None else (p, ) + tuple(v[1:]) for v, p in zip(self.views, pointers)]
        self.run(*views, *self.extra)
        return True


class Emulated:
    """Stands in for deep_gemm._C's FP8 plan factories; records the runs."""

    def __init__(self):
        self.calls, self.args = [], None

    def plan_fp8_gemm(self, a, sfa, b, sfb, d, c, one_d_one_d, device, num_sms):
        return EmulatedPlan(lambda *v: self.fp8_gemm(*v, one_d_one_d, device, 0, num_sms), [a, sfa, b, sfb, d, c], ())

    def plan_m_grouped_fp8_contiguous(self, a, sfa, b, sfb, d, layout, use_psum_layout, expected_m, device, num_sms):
        return EmulatedPlan(self.m_grouped_fp8_contiguous, [a, sfa, b, sfb, d, layout],
                            (use_psum_layout, device, 0, num_sms))

    def plan_m_grouped_fp8_masked(self, a, sfa, b, sfb, d, masked_m, expected_m, device, num_sms):
        return EmulatedPlan(self.m_grouped_fp8_masked, [a, sfa, b, sfb, d, masked_m], (expected_m, device, 0, num_sms))

    def plan_k_grouped_fp8(self, a, sfa, b, sfb, d, ks, layout, c, device, num_sms):
        return EmulatedPlan(lambda a, sfa, b, sfb, d, layout, c: self.k_grouped_fp8(a, sfa, b, sfb, d, ks, layout, c,
                                                                                     device, 0, num_sms),
                            [a, sfa, b, sfb, d, layout, c], ())

    def fp8_gemm(self, a, sfa, b, sfb, d, c, one_d_one_d, device, stream, num_sms):
        self.calls.append('fp8_gemm')
        self.args = a, sfa, b, sfb, d, c
        a, sfa, b, sfb, d = map(tensor_of, (a, sfa, b, sfb, d))
        out = dequant(a, sfa, False) @ dequant(b, sfb, not one_d_one_d).T
        if c is not None:
            out += tensor_of(c)
        d.copy_(out)

    def m_grouped_fp8_contiguous(self, a, sfa, b, sfb, d, layout, use_psum_layout, device, stream, num_sms):
        self.calls.append('m_grouped_fp8_contiguous')
        a, sfa, b, sfb, d, layout = map(tensor_of, (a, sfa, b, sfb, d, layout))
        rows = torch.full((a.shape[0], ), -1, dtype=torch.long)
        if use_psum_layout:
            start = 0
            for g, end in enumerate(layout.tolist()):
                rows[start:end] = g
                start = (end + 127) // 128 * 128
        else:
            rows = layout.long()
        a_f, b_f = dequant(a, sfa, False), dequant(b, sfb, True)
        for r in range(a.shape[0]):
            if rows[r] >= 0:
                d[r] = (a_f[r] @ b_f[rows[r]].T).to(d.dtype)

    def m_grouped_fp8_masked(self, a, sfa, b, sfb, d, masked_m, expected_m, device, stream, num_sms):
        self.calls.append('m_grouped_fp8_masked')
        a, sfa, b, sfb, d, masked_m = map(tensor_of, (a, sfa, b, sfb, d, masked_m))
        a_f, b_f = dequant(a, sfa, False), dequant(b, sfb, True)
        for g, m in enumerate(masked_m.tolist()):
            d[g, :m] = (a_f[g, :m] @ b_f[g].T).to(d.dtype)

    def k_grouped_fp8(self, a, sfa, b, sfb, d, ks, layout, c, device, stream, num_sms):
        self.calls.append('k_grouped_fp8')
        a, sfa, b, sfb, d = map(tensor_of, (a, sfa, b, sfb, d))
        m, n = d.shape[1:]
        assert a.shape == (m * sum(ks), ) and b.shape == (n * sum(ks), ), \
            "K-grouped operands are 1-D: each group's K-major [mn, k] block in turn (DeepGEMM's layout)"
        assert tensor_of(layout).tolist() == ks
        start = 0
        for g, k in enumerate(ks):
            a_g, b_g = a[m * start:m * (start + k)].view(m, k), b[n * start:n * (start + k)].view(n, k)
            kb = slice(start // 128, (start + k) // 128)
            out = dequant(a_g, sfa[:, kb], False) @ dequant(b_g, sfb[:, kb], False).T
            d[g] = out + (tensor_of(c)[g] if c is not None else 0)
            start += k


@pytest.fixture
def emulated(monkeypatch):
    """The wrappers with the emulation behind them, on CPU tensors (the device checks are bypassed)."""
    fake = Emulated()
    monkeypatch.setattr(_fp8, '_C', fake)
    monkeypatch.setattr(_fp8, 'common_device', lambda **tensors: 0)
    monkeypatch.setattr(_fp8, 'current_stream', lambda device: 0)
    monkeypatch.setattr(deep_gemm._tensor, 'device_of', lambda t, name: 0)
    deep_gemm._clear_plan_cache()  # plans of the emulation must not outlive it
    yield fake
    deep_gemm._clear_plan_cache()


def per_token(x):
    return per_token_cast_to_fp8(x, use_ue8m0=False)


def per_block(x):
    return per_block_cast_to_fp8(x, use_ue8m0=False)


def close(out, ref):
    return float(calc_diff(out.float(), ref)) < 1e-3


@pytest.mark.parametrize('m,n,k', [(64, 256, 512), (67, 130, 320), (1, 129, 128)])
@pytest.mark.parametrize('layout', ['nt', 'nn', 'tn', 'tt'])
def test_dense_1d2d(emulated, m, n, k, layout):
    x, y = torch.randn(m, k), torch.randn(n, k)
    a, b = per_token(x), per_block(y)
    a = (a[0].T, a[1].T) if layout[0] == 't' else a
    b = (b[0].T, b[1].T) if layout[1] == 'n' else b
    d = torch.zeros(m, n, dtype=torch.bfloat16)
    getattr(deep_gemm, f'fp8_gemm_{layout}')(a, b, d)
    assert emulated.calls == ['fp8_gemm'] and close(d, x @ y.T)


@pytest.mark.parametrize('accumulate', ['none', 'c', 'in_place'])
def test_dense_1d1d(emulated, accumulate):
    m, n, k = 67, 130, 320
    x, y = torch.randn(m, k), torch.randn(n, k)
    ref, d, c = x @ y.T, torch.zeros(m, n), None
    if accumulate != 'none':
        c = torch.randn(m, n)
        ref = ref + c
        if accumulate == 'in_place':
            d, c = c, c
    deep_gemm.fp8_gemm_nt(per_token(x), per_token(y), d, c=c, recipe=(1, 1, 128))
    assert close(d, ref)


def test_row_major_scales_are_passed_without_a_copy(emulated):
    m, n, k = 67, 256, 256
    x, y = torch.randn(m, k), torch.randn(n, k)
    a, b = per_token(x), per_block(y)
    assert a[1].stride() == (2, 1)  # row-major [M, ceil(K/128)], as per_token_cast_to_fp8 returns them
    d = torch.zeros(m, n, dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt(a, b, d)
    assert emulated.args[1][0] == a[1].data_ptr() and emulated.args[3][0] == b[1].data_ptr()
    assert close(d, x @ y.T)


def test_a_second_call_runs_the_kept_plan_on_its_own_tensors(emulated):
    m, n, k = 67, 256, 384
    d = torch.zeros(m, n, dtype=torch.bfloat16)
    for _ in range(2):  # same signature, new tensors: the second call must compute with the second call's data
        x, y = torch.randn(m, k), torch.randn(n, k)
        deep_gemm.fp8_gemm_nt(per_token(x), per_block(y), d)
        assert close(d, x @ y.T)
    assert emulated.calls == ['fp8_gemm', 'fp8_gemm'] and deep_gemm._plan_cache_info()['size'] == 1


def test_pre_transformed_scales_are_passed_without_a_copy(emulated):
    m, n, k = 67, 256, 256
    x, y = torch.randn(m, k), torch.randn(n, k)
    a, b = per_token(x), per_block(y)
    sfa = deep_gemm.transform_sf_into_required_layout(a[1], m, k, (1, 128, 128), is_sfa=True)
    assert sfa.stride() == (1, 68)
    d = torch.zeros(m, n, dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt((a[0], sfa), b, d)
    assert emulated.args[1][0] == sfa.data_ptr() and emulated.args[3][0] == b[1].data_ptr()
    assert close(d, x @ y.T)


@pytest.mark.parametrize('use_psum_layout', [False, True])
def test_m_grouped_contiguous(emulated, use_psum_layout):
    ms, n, k = [130, 0, 5], 96, 256
    total = sum((m + 127) // 128 * 128 for m in ms)
    x, w = torch.randn(total, k), torch.randn(len(ms), n, k)
    rows, ends, start = torch.full((total, ), -1, dtype=torch.int32), [], 0
    for g, m in enumerate(ms):
        rows[start:start + m] = g
        ends.append(start + m)
        start += (m + 127) // 128 * 128
    casts = [per_block(w[g]) for g in range(len(ms))]
    b = torch.stack([c[0] for c in casts]), torch.stack([c[1] for c in casts])
    d = torch.full((total, n), 5.0, dtype=torch.bfloat16)
    layout = torch.tensor(ends, dtype=torch.int32) if use_psum_layout else rows
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous(per_token(x), b, d, layout, use_psum_layout=use_psum_layout)
    valid = rows >= 0
    ref = torch.zeros(total, n)
    ref[valid] = torch.einsum('mk,mnk->mn', x[valid], w[rows[valid].long()])
    assert close(d[valid], ref[valid])
    # ensure_zero_padding (True by default) launches nothing on SM90, as in DeepGEMM: rows of no group stay as
    # the GEMM left them (the emulation writes none of them).
    assert bool((d[~valid] == 5.0).all())


def test_m_grouped_masked(emulated):
    groups, m_max, n, k = 3, 70, 130, 384
    x, w = torch.randn(groups, m_max, k), torch.randn(groups, n, k)
    a_casts, b_casts = [per_token(x[g]) for g in range(groups)], [per_block(w[g]) for g in range(groups)]
    a = torch.stack([c[0] for c in a_casts]), torch.stack([c[1] for c in a_casts])
    b = torch.stack([c[0] for c in b_casts]), torch.stack([c[1] for c in b_casts])
    d = torch.zeros(groups, m_max, n, dtype=torch.bfloat16)
    masked = torch.tensor([70, 0, 9], dtype=torch.int32)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked, 32)
    for g, m in enumerate(masked.tolist()):
        if m:
            assert close(d[g, :m], x[g, :m] @ w[g].T)


@pytest.mark.parametrize('ks', [[128, 0, 256], [384]])
def test_k_grouped(emulated, ks):
    m, n = 67, 130
    xs, ys = [torch.randn(m, k) for k in ks], [torch.randn(n, k) for k in ks]

    def operand(blocks):  # DeepGEMM's SM90 layout: flat per-group K-major blocks, scales side by side
        casts = [per_token(t) for t in blocks if t.size(1)]
        return torch.cat([c[0].flatten() for c in casts]), torch.cat([c[1] for c in casts], dim=1)

    c = torch.randn(len(ks), m, n)
    d = torch.zeros(len(ks), m, n)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(operand(xs), operand(ys), d, ks, torch.tensor(ks, dtype=torch.int32),
                                               c=c)
    for g, (x, y) in enumerate(zip(xs, ys)):
        ref = x @ y.T + c[g]
        assert torch.equal(d[g], ref) if ks[g] == 0 else close(d[g], ref)
