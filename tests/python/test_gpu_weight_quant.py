"""deep_gemm.weight_quant on the GPU (skipped without one): gemm() of every format against the float64 reference()
for decode to prefill M, ragged and DeepSeek-sized N and K, bf16 / fp16 / fp32 outputs; dequantize() against the
float64 weights; strided operands, torch's current stream, set_num_sms, the dense path and repeatability
(the fused kernel always; the dense path under DG_DETERMINISTIC=1). MoE
experts: m_grouped_gemm_masked (0, 1, 17 and M_max valid rows) and m_grouped_gemm_contiguous (experts of 1, 130 and 64
rows, each padded to the alignment) of every format against the float64 grouped references, rows past masked_m left
unwritten, and one expert's view of a grouped weight through gemm() and dequantize(). K groups (2 and 4 sets of
consumer warps, pinned with TILEGEMM_CONFIG_FILTER) with and without K splits, dense and grouped.

Each case draws fresh random inputs (never zeros: a kernel that dropped a term must show it). The bar: DeepGEMM's
calc_diff < 1e-4, and every element within |got - ref| <= 2^-7 (|a| @ |W|.T) + 2^-8 |ref| (the weight decoded to
16 bits and fp32 accumulation, then D rounded to at most bf16's precision).
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
import deep_gemm.weight_quant as wq  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
BF16, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32

# (name, format, act_dtype, group_size, zero points, the small K it takes)
FORMATS = [
    ('int4-g128', 'int4', BF16, 128, False, 384),
    ('int4-g64-zeros', 'int4', BF16, 64, True, 192),
    ('int4-g32-zeros-fp16', 'int4', FP16, 32, True, 96),
    ('int8', 'int8', BF16, 0, False, 72),
    ('int8-fp16', 'int8', FP16, 0, False, 96),
    ('mxfp4', 'mxfp4', BF16, 32, False, 72),
    ('mxfp4-k96', 'mxfp4', BF16, 32, False, 96),
]
MS = [1, 7, 16, 33, 128, 1024]
NS = [200, 4096]


def nonzero(t):
    return torch.where(t == 0, torch.ones_like(t), t)


def random_weight(fmt, act_dtype, group, zeros, n, k, exponents=(122, 129)):
    """A fresh weight of magnitude about 1 (so fp16 outputs of K = 4096 sums stay in range)."""
    if fmt == 'int4':
        q = torch.randint(0, 16, (n, k), dtype=torch.uint8)
        s = nonzero(torch.randn(n, k // group) * 0.05).to(act_dtype)
        z = torch.randint(0, 16, (n, k // group), dtype=torch.uint8) if zeros else None
        return wq.pack_int4(q, s, z)
    if fmt == 'int8':
        q = torch.randint(-128, 128, (n, k), dtype=torch.int8)
        return wq.pack_int8(q, nonzero(torch.rand(n) * 0.01), act_dtype)
    blocks = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8)
    e = torch.randint(exponents[0], exponents[1], (n, -(-k // 32)), dtype=torch.uint8)
    return wq.pack_mxfp4(blocks, e)


def check(got, ref, bound, label):
    got = got.double().cpu()
    assert not torch.isnan(got).any(), f'{label}: unwritten (NaN) outputs'
    diff = float(calc_diff(got, ref))
    err = (got - ref).abs()
    limit = bound * 2.0**-7 + ref.abs() * 2.0**-8
    worst = float((err - limit).max())
    print(f'{label}: calc_diff {diff:.3g}, max |err| {float(err.max()):.3g}')
    assert diff < 1e-4, label
    assert worst <= 0, f'{label}: {int((err > limit).sum())} elements past the bound (worst by {worst:.3g})'


def run_case(name, fmt, act_dtype, group, zeros, m, n, k):
    w = random_weight(fmt, act_dtype, group, zeros, n, k).to('cuda')
    a = torch.randn(m, k, dtype=act_dtype, device='cuda')
    ref = wq.reference(a, w)
    bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
    for out_dtype in (act_dtype, FP32, FP16 if act_dtype == BF16 else BF16):
        label = f'{name} m={m} n={n} k={k} -> {out_dtype}'
        fused = wq.plan(m, w, out_dtype)[1]
        out = torch.full((m, n), float('nan'), dtype=out_dtype, device='cuda')
        assert wq.gemm(a, w, out=out) is out
        check(out, ref, bound, f'{label} ({"fused" if fused else "dequantise+dense"})')
        if fused:  # the fused kernel sums its K splits in a fixed order; the dense path does so in deterministic mode
            again = torch.full_like(out, float('nan'))
            wq.gemm(a, w, out=again)
            assert torch.equal(out, again), f'{label}: two calls differ'
    default = wq.gemm(a, w)
    assert default.dtype == act_dtype and tuple(default.shape) == (m, n)
    check(default, ref, bound, f'{name} m={m} n={n} k={k} -> default dtype')


@pytest.mark.parametrize('m', MS)
@pytest.mark.parametrize('n', NS)
@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize('big_k', [False, True], ids=['small-k', 'k4096'])
def test_gemm_against_float64(name, fmt, act_dtype, group, zeros, small_k, n, m, big_k):
    run_case(name, fmt, act_dtype, group, zeros, m, n, 4096 if big_k else small_k)


@pytest.fixture
def deterministic(monkeypatch):
    monkeypatch.setenv('DG_DETERMINISTIC', '1')
    deep_gemm._C.reload_env()
    yield
    monkeypatch.delenv('DG_DETERMINISTIC')
    deep_gemm._C.reload_env()


@pytest.mark.parametrize('m', [33, 128])
@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', [f for f in FORMATS if f[2] == BF16],
                         ids=[f[0] for f in FORMATS if f[2] == BF16])
def test_dense_path_repeats_exactly_when_deterministic(deterministic, name, fmt, act_dtype, group, zeros, small_k, m):
    # n = 200, K = 4096: the selector cuts K for the dense GEMM, whose default fix-up adds fp32 atomics in any order.
    n, k = 200, 4096
    w = random_weight(fmt, act_dtype, group, zeros, n, k).to('cuda')
    a = torch.randn(m, k, dtype=act_dtype, device='cuda')
    ref = wq.reference(a, w)
    bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
    for out_dtype in (act_dtype, FP32):
        label = f'{name} m={m} n={n} k={k} -> {out_dtype} (dequantise+dense, DG_DETERMINISTIC=1)'
        assert not wq.plan(m, w, out_dtype)[1], f'{label}: expected the dense path'
        first = wq.gemm(a, w, out=torch.full((m, n), float('nan'), dtype=out_dtype, device='cuda'))
        again = wq.gemm(a, w, out=torch.full_like(first, float('nan')))
        check(first, ref, bound, label)
        assert torch.equal(first, again), f'{label}: two calls differ'


@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize('n,k', [(200, None), (4096, 4096)], ids=['ragged', '4096'])
def test_dequantize_against_float64_weights(name, fmt, act_dtype, group, zeros, small_k, n, k):
    k = small_k if k is None else k
    w = random_weight(fmt, act_dtype, group, zeros, n, k).to('cuda')
    ref = wq.reference_weight(w)
    got = wq.dequantize(w)
    assert got.dtype == act_dtype and tuple(got.shape) == (n, k)
    # Within one rounding to act_dtype (8 or 11 significant bits), subnormals included.
    ulp, tiny = (2.0**-8, 2.0**-133) if act_dtype == BF16 else (2.0**-11, 2.0**-24)
    err = (got.double().cpu() - ref).abs()
    assert bool((err <= ref.abs() * ulp + tiny).all()), f'{name}: max |err| {float(err.max()):.3g}'
    # Into a caller's strided rows, twice: the same bits, nothing written past K.
    big = torch.full((n, k + 64), 7.0, dtype=act_dtype, device='cuda')
    assert wq.dequantize(w, out=big[:, :k]) is not None
    assert torch.equal(big[:, :k], got) and bool((big[:, k:] == 7).all())
    # Rows 4 bytes past a 16-byte boundary with a stride of K + 6 elements: the kernel's pair-by-pair stores.
    odd = torch.full((n, k + 6), 7.0, dtype=act_dtype, device='cuda')
    assert wq.dequantize(w, out=odd[:, 2:k + 2]) is not None
    assert torch.equal(odd[:, 2:k + 2], got) and bool((odd[:, :2] == 7).all()) and bool((odd[:, k + 2:] == 7).all())


@pytest.mark.parametrize('high', [False, True], ids=['shift-0', 'shift-72'])
def test_mxfp4_exponent_shift(high):
    # Exponents past 128 shift the kernel's exponent arithmetic (exp_shift); the results must not move.
    n, k, m = 256, 1024, 16
    lo = 190 if high else 100
    w = random_weight('mxfp4', BF16, 32, False, n, k, exponents=(lo, lo + 11)).to('cuda')
    assert (w.exp_shift > 0) == high
    a = torch.randn(m, k, dtype=BF16, device='cuda')
    ref = wq.reference(a, w)
    bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
    for out_dtype in (BF16, FP32):
        check(wq.gemm(a, w, out=torch.empty(m, n, dtype=out_dtype, device='cuda')), ref, bound, f'{out_dtype}')


def test_strided_operands_and_untouched_padding():
    m, n, k = 33, 200, 512
    w = random_weight('int4', BF16, 128, True, n, k).to('cuda')
    a_rows = torch.randn(m, k + 64, dtype=BF16, device='cuda')
    a = a_rows[:, :k]
    out_rows = torch.full((m, n + 56), 3.0, dtype=FP32, device='cuda')
    out = out_rows[:, :n]
    wq.gemm(a, w, out=out)
    ref = wq.reference(a, w)
    check(out, ref, a.double().abs().cpu() @ wq.reference_weight(w).abs().T, 'strided')
    assert bool((out_rows[:, n:] == 3).all())


def test_runs_on_torchs_current_stream():
    m, n, k = 16, 4096, 4096
    w = random_weight('int4', BF16, 128, False, n, k).to('cuda')
    a = torch.randn(m, k, dtype=BF16, device='cuda')
    want = wq.gemm(a, w)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = wq.gemm(a, w)
    torch.cuda.current_stream().wait_stream(stream)
    assert torch.equal(got, want)
    # Captured in a CUDA graph (the call then launches on the capture stream) and replayed.
    out = torch.empty_like(want)
    wq.gemm(a, w, out=out)  # compiled before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        wq.gemm(a, w, out=out)
    for _ in range(2):  # new activations each replay
        a.normal_()
        out.fill_(float('nan'))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, wq.gemm(a, w))


def test_set_num_sms_is_honoured():
    m, n, k = 16, 4096, 4096
    w = random_weight('int8', BF16, 0, False, n, k).to('cuda')
    a = torch.randn(m, k, dtype=BF16, device='cuda')
    ref = wq.reference(a, w)
    bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
    before = deep_gemm._C.num_sms_setting()
    try:
        every = wq.plan(m, w)[0]
        deep_gemm.set_num_sms(16)
        few = wq.plan(m, w)[0]
        out = wq.gemm(a, w)
    finally:
        deep_gemm._C.set_num_sms_setting(before)
    assert every != few
    check(out, ref, bound, 'set_num_sms(16)')


def test_the_dense_path():
    # Large M dequantises W into a scratch and runs the dense GEMM (bf16 activations, bf16 / fp32 D): the first M
    # the plan sends there, against the float64 reference.
    n = k = 4096
    w = random_weight('int4', BF16, 128, True, n, k).to('cuda')
    m = next((m for m in (1024, 2048, 4096, 8192) if not wq.plan(m, w)[1]), None)
    if m is None:
        pytest.skip(f'the plan keeps every M up to 8192 fused on this GPU ({wq.plan(8192, w)[0]})')
    print(wq.plan(m, w)[0])
    a = torch.randn(m, k, dtype=BF16, device='cuda')
    ref = wq.reference(a, w)
    bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
    for out_dtype in (BF16, FP32):
        out = torch.full((m, n), float('nan'), dtype=out_dtype, device='cuda')
        check(wq.gemm(a, w, out=out), ref, bound, f'dense m={m} -> {out_dtype}')


# --- MoE experts -------------------------------------------------------------------------------------------------------

# mxfp4 experts' exponent ranges: exponent shifts 0, 5, 2 and 0, so the grouped weight's (5) exceeds most experts' own.
EXPERT_EXPONENTS = [(122, 129), (120, 134), (124, 131), (118, 127)]


def random_experts(fmt, act_dtype, group, zeros, count, n, k):
    """``count`` fresh weights of one layout, stacked, on the GPU."""
    ws = [random_weight(fmt, act_dtype, group, zeros, n, k, exponents=EXPERT_EXPONENTS[e % 4]) for e in range(count)]
    if fmt == 'mxfp4':
        assert len({w.exp_shift for w in ws}) > 1
    return wq.stack(ws).to('cuda')


def expert_weights_abs(w):
    return [wq.reference_weight(w.expert(e)).abs() for e in range(w.num_experts)]


@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', FORMATS, ids=[f[0] for f in FORMATS])
def test_m_grouped_masked_against_float64(name, fmt, act_dtype, group, zeros, small_k):
    n, k, m_max = 200, small_k, 64
    counts = [0, 1, 17, m_max]
    w = random_experts(fmt, act_dtype, group, zeros, len(counts), n, k)
    a = torch.randn(len(counts), m_max, k, dtype=act_dtype, device='cuda')
    masked_m = torch.tensor(counts, dtype=torch.int32, device='cuda')
    ref = wq.reference_grouped_masked(a, w, masked_m)
    valid = torch.arange(m_max)[None, :] < torch.tensor(counts)[:, None]  # [E, M_max]: the rows computed
    assert bool(ref[valid].isfinite().all()) and bool(ref[~valid].isnan().all())
    a_abs = a.double().abs().cpu()
    bound = torch.stack([a_abs[e] @ wabs.T for e, wabs in enumerate(expert_weights_abs(w))])
    # expected_m picks the token block (8, 16 or 64 rows here): each must cover 17 and M_max rows.
    for out_dtype, expected_m in ((act_dtype, 16), (FP32, 1), (FP32, 64)):
        label = f'{name} masked {counts} n={n} k={k} expected_m={expected_m} -> {out_dtype}'
        assert wq.plan(expected_m, w, out_dtype, grouping='masked')[1]
        out = torch.full((len(counts), m_max, n), float('nan'), dtype=out_dtype, device='cuda')
        assert wq.m_grouped_gemm_masked(a, w, masked_m, expected_m, out=out) is out
        got = out.double().cpu()
        check(got[valid], ref[valid], bound[valid], label)
        assert bool(got[~valid].isnan().all()), f'{label}: rows past masked_m written'
        again = torch.full_like(out, float('nan'))
        wq.m_grouped_gemm_masked(a, w, masked_m, expected_m, out=again)
        assert torch.equal(got[valid], again.double().cpu()[valid]), f'{label}: two calls differ'
    default = wq.m_grouped_gemm_masked(a, w, masked_m, 16)
    assert default.dtype == act_dtype and tuple(default.shape) == (len(counts), m_max, n)
    check(default.double().cpu()[valid], ref[valid], bound[valid], f'{name} masked, default out')
    # One expert's view of the grouped weight (offset arrays, the group's exponent shift) runs alone too.
    for e, rows in enumerate(counts):
        if rows:
            single = wq.gemm(a[e, :rows], w.expert(e))
            check(single, ref[e, :rows], bound[e, :rows], f'{name} gemm(a[{e}], w.expert({e}))')
    ulp, tiny = (2.0**-8, 2.0**-133) if act_dtype == BF16 else (2.0**-11, 2.0**-24)
    for e in range(len(counts)):
        want = wq.reference_weight(w.expert(e))
        err = (wq.dequantize(w.expert(e)).double().cpu() - want).abs()
        assert bool((err <= want.abs() * ulp + tiny).all()), f'{name} dequantize(w.expert({e}))'


def contiguous_case(w, rows, act_dtype):
    """Fresh activations for experts 0.. of ``w`` taking ``rows`` rows each, every expert's rows padded with -1 rows to
    the alignment: (a, grouped_layout, the float64 reference, the valid rows, the error bound's |a| @ |W|.T)."""
    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    layout = []
    for e, r in enumerate(rows):
        layout += [e] * r + [-1] * (-(-r // align) * align - r)
    a = torch.randn(len(layout), w.k, dtype=act_dtype, device='cuda')
    grouped_layout = torch.tensor(layout, dtype=torch.int32, device='cuda')
    experts = torch.tensor(layout)
    a_abs = a.double().abs().cpu()
    bound = torch.zeros(len(layout), w.n, dtype=torch.float64)
    for e, wabs in enumerate(expert_weights_abs(w)):
        bound[experts == e] = a_abs[experts == e] @ wabs.T
    return a, grouped_layout, wq.reference_grouped_contiguous(a, w, grouped_layout), experts >= 0, bound


@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', FORMATS, ids=[f[0] for f in FORMATS])
def test_m_grouped_contiguous_against_float64(name, fmt, act_dtype, group, zeros, small_k):
    n, k = 200, small_k
    rows = [1, 130, 64]
    w = random_experts(fmt, act_dtype, group, zeros, len(rows), n, k)
    a, grouped_layout, ref, valid, bound = contiguous_case(w, rows, act_dtype)
    m = a.shape[0]
    for out_dtype in (act_dtype, FP32):
        label = f'{name} contiguous {rows} (M {m}) n={n} k={k} -> {out_dtype}'
        assert wq.plan(m, w, out_dtype, grouping='contiguous')[1]
        out = torch.full((m, n), float('nan'), dtype=out_dtype, device='cuda')
        assert wq.m_grouped_gemm_contiguous(a, w, grouped_layout, out=out) is out
        # Padding rows are unspecified: the valid rows only.
        check(out.double().cpu()[valid], ref[valid], bound[valid], label)
    default = wq.m_grouped_gemm_contiguous(a, w, grouped_layout)
    assert default.dtype == act_dtype and tuple(default.shape) == (m, n)
    check(default.double().cpu()[valid], ref[valid], bound[valid], f'{name} contiguous, default out')


@pytest.fixture
def pinned(monkeypatch):
    """pin('k_groups=4,split_k=2'): the selector keeps only plans with those fields (TILEGEMM_CONFIG_FILTER)."""
    def pin(text):
        monkeypatch.setenv('TILEGEMM_CONFIG_FILTER', text)
        deep_gemm._C.reload_env()
    yield pin
    monkeypatch.delenv('TILEGEMM_CONFIG_FILTER', raising=False)
    deep_gemm._C.reload_env()


K_GROUP_FORMATS = [f for f in FORMATS if f[0] in ('int4-g128', 'int4-g32-zeros-fp16', 'int8', 'mxfp4')]


@pytest.mark.parametrize('groups,splits', [(2, 1), (4, 1), (2, 3), (4, 2)])
@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', K_GROUP_FORMATS, ids=[f[0] for f in K_GROUP_FORMATS])
def test_k_groups_against_float64(pinned, name, fmt, act_dtype, group, zeros, small_k, groups, splits):
    # Sets of consumer warps taking turns at the ring's stages, with and without K splits: one stage of K (sets past
    # the first get none), seven stages (uneven turns) and 16; 1, 16 and (two sets) 33 tokens, ragged N.
    pinned(f'k_groups={groups},split_k={splits}')
    for m, n, k in ((1, 200, small_k), (16, 4096, 1792), (1, 4096, 4096), (33, 200, 4096)):
        if groups == 4 and m > 32 or -(-k // 256) < splits:
            continue  # four sets take up to 32 tokens; a split takes at least one stage
        w = random_weight(fmt, act_dtype, group, zeros, n, k).to('cuda')
        a = torch.randn(m, k, dtype=act_dtype, device='cuda')
        line, fused = wq.plan(m, w, act_dtype)
        assert fused and f'splits={splits} k_groups={groups}' in line, line
        out = wq.gemm(a, w, out=torch.full((m, n), float('nan'), dtype=act_dtype, device='cuda'))
        bound = a.double().abs().cpu() @ wq.reference_weight(w).abs().T
        check(out, wq.reference(a, w), bound, f'{name} m={m} n={n} k={k} g{groups} s{splits}')
        again = wq.gemm(a, w, out=torch.full_like(out, float('nan')))
        assert torch.equal(out, again), f'{name} m={m} g{groups} s{splits}: two calls differ'


@pytest.mark.parametrize('groups', [2, 4])
@pytest.mark.parametrize('name,fmt,act_dtype,group,zeros,small_k', K_GROUP_FORMATS, ids=[f[0] for f in K_GROUP_FORMATS])
def test_k_groups_grouped_against_float64(pinned, name, fmt, act_dtype, group, zeros, small_k, groups):
    # Masked: 16-token blocks walked per expert (the sets' scratch reused from one block to the next). Contiguous:
    # 32-token blocks, one expert each.
    n, k, m_max = 200, 1792, 64
    counts = [0, 1, 17, m_max]
    w = random_experts(fmt, act_dtype, group, zeros, len(counts), n, k)
    a = torch.randn(len(counts), m_max, k, dtype=act_dtype, device='cuda')
    masked_m = torch.tensor(counts, dtype=torch.int32, device='cuda')
    ref = wq.reference_grouped_masked(a, w, masked_m)
    valid = torch.arange(m_max)[None, :] < torch.tensor(counts)[:, None]
    bound = torch.stack([a.double().abs().cpu()[e] @ wabs.T for e, wabs in enumerate(expert_weights_abs(w))])
    pinned(f'k_groups={groups},block_m=16')
    assert f'k_groups={groups}' in wq.plan(16, w, act_dtype, grouping='masked')[0]
    out = wq.m_grouped_gemm_masked(a, w, masked_m, 16, out=torch.full((len(counts), m_max, n), float('nan'),
                                                                     dtype=act_dtype, device='cuda'))
    got = out.double().cpu()
    check(got[valid], ref[valid], bound[valid], f'{name} masked g{groups}')
    assert bool(got[~valid].isnan().all()), f'{name} masked g{groups}: rows past masked_m written'

    a2, grouped_layout, ref2, valid2, bound2 = contiguous_case(w, [1, 130, 64], act_dtype)
    pinned(f'k_groups={groups},block_m=32')
    assert f'k_groups={groups}' in wq.plan(a2.shape[0], w, act_dtype, grouping='contiguous')[0]
    out2 = wq.m_grouped_gemm_contiguous(a2, w, grouped_layout)
    check(out2.double().cpu()[valid2], ref2[valid2], bound2[valid2], f'{name} contiguous g{groups}')
