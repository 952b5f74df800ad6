"""Every exported GEMM against torch on DeepSeek and ragged shapes (GPU + torch; skipped otherwise).

Ragged here means ragged but inside the contract. TMA needs every row stride to be a multiple of 16 bytes
(DeepGEMM has the same requirement, for the same reason), so the contiguous extent of each operand must be:
N of D a multiple of 8 (bf16) or 4 (fp32), M of an MN-major A and N of an MN-major B multiples of 8. M of a
K-major A and of D is free. Shapes outside that raise ValueError naming the dimension: test_tma_alignment.py
covers those on the CPU, test_unaligned_row_stride_is_rejected the [1, K] view only the TMA encoder sees.
References are float32 on the GPU, per group, so no test needs more than a few GiB (pytest -n shares a GPU).
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
DEEPSEEK = [(128, 2112, 7168), (4096, 7168, 2048), (64, 24576, 1536)]
EMPTY = [(0, 128, 64), (128, 64, 0)]
# K-major A (nt, nn): M is free, so decode M=1 and ragged M=129 / M=3; N=264 is a multiple of 8.
K_MAJOR_A_SHAPES = DEEPSEEK + [(1, 4096, 7168), (129, 264, 320), (3, 80, 64)] + EMPTY
# MN-major A (tn, tt): M is A's contiguous extent, so the smallest and ragged legal M are multiples of 8.
MN_MAJOR_A_SHAPES = DEEPSEEK + [(8, 4096, 7168), (136, 264, 320), (8, 80, 64)] + EMPTY
DENSE_CASES = [(layout, *shape) for layout in ('nt', 'nn') for shape in K_MAJOR_A_SHAPES] + \
              [(layout, *shape) for layout in ('tn', 'tt') for shape in MN_MAJOR_A_SHAPES]
# cuBLASLt takes any leading dimension, so its wrappers keep the shapes TMA rejects (N=257, MN-major M=1).
CUBLASLT_CASES = [(layout, *shape) for layout in ('nt', 'nn', 'tn', 'tt')
                  for shape in DEEPSEEK + [(1, 4096, 7168), (129, 257, 320), (3, 80, 64)] + EMPTY]


def diff(out, ref):
    value = float(calc_diff(out.float(), ref))
    print(f'calc_diff {value:.3g}')
    return value


def rand(*shape):
    return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)


def storage(layout, m, n, k):
    a = rand(m, k) if layout[0] == 'n' else rand(k, m)
    b = rand(n, k) if layout[1] == 't' else rand(k, n)
    a_mk = a if layout[0] == 'n' else a.T
    b_nk = b if layout[1] == 't' else b.T
    return a, b, a_mk.float() @ b_nk.float().T


def check_dense(prefix, layout, m, n, k, with_c):
    a, b, ref = storage(layout, m, n, k)
    d_dtype = torch.float if with_c else torch.bfloat16
    c = torch.randn(m, n, device='cuda', dtype=d_dtype) if with_c else None
    d = torch.full((m, n), float('nan'), device='cuda', dtype=d_dtype)
    getattr(deep_gemm, f'{prefix}_{layout}')(a, b, d, c=c)
    if c is not None:
        ref = ref + c.float()
    if k == 0:  # nothing to accumulate: d is exactly c (or zero); calc_diff of zeros would be 0/0
        assert torch.equal(d.float(), ref)
    elif m * n:
        assert diff(d, ref) < 1e-5


@pytest.mark.parametrize('layout,m,n,k', DENSE_CASES)
@pytest.mark.parametrize('with_c', [False, True])
def test_dense(layout, m, n, k, with_c):
    check_dense('bf16_gemm', layout, m, n, k, with_c)


@pytest.mark.parametrize('layout,m,n,k', CUBLASLT_CASES)
@pytest.mark.parametrize('with_c', [False, True])
def test_dense_cublaslt(layout, m, n, k, with_c):
    check_dense('cublaslt_gemm', layout, m, n, k, with_c)


@pytest.mark.parametrize('layout', ['tn', 'tt'])
def test_unaligned_row_stride_is_rejected(layout):
    # A [1, K] transposed view of [K, 1] storage has both strides 1: K-major with a 2-byte row stride, which
    # no TMA descriptor can hold (validate_desc cannot see it: it checks sizes, the encoder checks strides).
    a, b, _ = storage(layout, 1, 256, 512)
    d = torch.empty(1, 256, device='cuda', dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r'^a: expected row strides that are multiples of 16 bytes'):
        getattr(deep_gemm, f'bf16_gemm_{layout}')(a, b, d)


@pytest.mark.parametrize('layout_kind', ['nt', 'nn', 'nt_psum'])
@pytest.mark.parametrize('n,k', [(512, 7168), (4096, 7168), (7168, 2048), (264, 320)])
def test_m_grouped_contiguous_and_padding_zeroed(layout_kind, n, k):
    groups = 4
    ms = [300, 1, 0, 513]
    aligned = [deep_gemm.align(m, 128) for m in ms]
    total = sum(aligned)
    a, b = rand(total, k), rand(groups, n, k)
    layout = torch.full((total, ), -1, dtype=torch.int32, device='cuda')
    ref = torch.zeros(total, n, device='cuda')
    ends, start = [], 0
    for g, (m, am) in enumerate(zip(ms, aligned)):
        layout[start:start + m] = g
        a[start + m:start + am] = 0  # padding rows of A are zero, as DeepGEMM's callers make them
        # Per group: a[rows of g] @ b[g].T is [m, N]; gathering b per row would build [M, N, K] (tens of GiB).
        ref[start:start + m] = a[start:start + m].float() @ b[g].float().T
        ends.append(start + m)
        start += am
    d = torch.full((total, n), 7.0, device='cuda', dtype=torch.bfloat16)
    if layout_kind == 'nn':  # b given as [G, K, N]
        deep_gemm.m_grouped_bf16_gemm_nn_contiguous(a, b.mT.contiguous(), d, layout)
    elif layout_kind == 'nt_psum':
        psum = torch.tensor(ends, dtype=torch.int32, device='cuda')
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, psum, use_psum_layout=True)
    else:
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)
    valid = layout >= 0
    # ensure_zero_padding launches nothing (DeepGEMM 2.6.1 on SM90): each 128-row block of a group is computed
    # whole, so with zero padding rows in A the padding rows of D come out zero; with prefix sums the rows past a
    # group's end are not the group's, so only the groups' rows are compared (as DeepGEMM's test does).
    if layout_kind == 'nt_psum':
        assert diff(d[valid], ref[valid]) < 1e-5
    else:
        assert diff(d, ref) < 1e-5
        assert bool((d[~valid] == 0).all())


def test_set_num_sms_limits_and_still_computes():
    a, b = rand(4096, 2048), rand(7168, 2048)
    d = torch.empty(4096, 7168, device='cuda', dtype=torch.bfloat16)
    deep_gemm.set_num_sms(64)
    try:
        assert deep_gemm.get_num_sms() == 64
        deep_gemm.bf16_gemm_nt(a, b, d)
    finally:
        deep_gemm._C.set_num_sms_setting(0)  # back to every SM (there is no public reset)
    assert diff(d, a.float() @ b.float().T) < 1e-5


@pytest.mark.parametrize('n,k', [(4096, 7168), (7168, 2048), (264, 320)])
def test_m_grouped_masked(n, k):
    g, m_max = 4, 256
    a, b = rand(g, m_max, k), rand(g, n, k)
    masked = torch.tensor([0, 17, 256, 100], dtype=torch.int32, device='cuda')
    d = torch.empty(g, m_max, n, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked, 128)
    for i, m in enumerate(masked.tolist()):
        if m:
            assert diff(d[i, :m], a[i, :m].float() @ b[i].float().T) < 1e-5


# a [ΣK, M] and b [ΣK, N] are both MN-major: ragged M and N are multiples of 8.
@pytest.mark.parametrize('m,n', [(2112, 576), (4096, 7168), (136, 264)])
@pytest.mark.parametrize('with_c', [True, False])
def test_k_grouped(m, n, with_c):
    ks = [128, 0, 320, 4096]
    a, b = rand(sum(ks), m), rand(sum(ks), n)
    c = torch.randn(len(ks), m, n, device='cuda') if with_c else None
    d = torch.full((len(ks), m, n), float('nan'), device='cuda')
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, torch.tensor(ks, dtype=torch.int32, device='cuda'), c)
    start = 0
    for i, kg in enumerate(ks):
        ref = a[start:start + kg].float().T @ b[start:start + kg].float() + (c[i] if with_c else 0)
        if kg == 0:
            assert torch.equal(d[i], ref if with_c else torch.zeros_like(ref))
        else:
            assert diff(d[i], ref) < 1e-5
        start += kg


@pytest.mark.parametrize('c_mode', ['none', 'separate', 'in_place'])
def test_k_grouped_with_every_group_empty(c_mode):
    # ΣK = 0: no operand element, so no tensor map can be encoded; d is c (or zeros) as with K = 0 elsewhere.
    ks, m, n = [0, 0, 0], 120, 112
    a, b = rand(0, m), rand(0, n)
    d = torch.full((3, m, n), float('nan'), device='cuda')
    c = torch.randn(3, m, n, device='cuda')
    if c_mode == 'in_place':
        d.copy_(c)
    arg = None if c_mode == 'none' else c if c_mode == 'separate' else d
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, torch.tensor(ks, dtype=torch.int32, device='cuda'), arg)
    assert torch.equal(d, torch.zeros_like(d) if c_mode == 'none' else c)


@pytest.mark.parametrize('layout', ['nt', 'nn', 'tn', 'tt'])
def test_cublaslt_k_zero_takes_empty_operands_with_any_strides(layout):
    # An empty [N, 0] operand holds no element: a stride of 0 (as_strided, expand) must not be refused.
    m, n = 64, 48
    a = torch.empty(0, device='cuda', dtype=torch.bfloat16).as_strided((m, 0) if layout[0] == 'n' else (0, m), (0, 1))
    b = torch.empty(0, device='cuda', dtype=torch.bfloat16).as_strided((n, 0) if layout[1] == 't' else (0, n), (0, 1))
    d = torch.full((m, n), float('nan'), device='cuda', dtype=torch.bfloat16)
    getattr(deep_gemm, f'cublaslt_gemm_{layout}')(a, b, d)
    assert torch.equal(d, torch.zeros_like(d))
