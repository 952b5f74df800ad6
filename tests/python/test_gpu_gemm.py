"""Every exported GEMM against torch on DeepSeek and ragged shapes (GPU + torch; skipped otherwise)."""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
SHAPES = [(128, 2112, 7168), (4096, 7168, 2048), (64, 24576, 1536), (1, 4096, 7168), (129, 257, 320),
          (3, 80, 64), (0, 128, 64), (128, 64, 0)]


def rand(*shape):
    return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)


def storage(layout, m, n, k):
    a = rand(m, k) if layout[0] == 'n' else rand(k, m)
    b = rand(n, k) if layout[1] == 't' else rand(k, n)
    a_mk = a if layout[0] == 'n' else a.T
    b_nk = b if layout[1] == 't' else b.T
    return a, b, a_mk.float() @ b_nk.float().T


@pytest.mark.parametrize('prefix', ['bf16_gemm', 'cublaslt_gemm'])
@pytest.mark.parametrize('layout', ['nt', 'nn', 'tn', 'tt'])
@pytest.mark.parametrize('m,n,k', SHAPES)
@pytest.mark.parametrize('with_c', [False, True])
def test_dense(prefix, layout, m, n, k, with_c):
    a, b, ref = storage(layout, m, n, k)
    d_dtype = torch.float if with_c else torch.bfloat16
    c = torch.randn(m, n, device='cuda', dtype=d_dtype) if with_c else None
    d = torch.full((m, n), float('nan'), device='cuda', dtype=d_dtype)
    getattr(deep_gemm, f'{prefix}_{layout}')(a, b, d, c=c)
    if c is not None:
        ref = ref + c.float()
    if m * n:
        assert float(calc_diff(d.float(), ref)) < 1e-5


def test_m_grouped_contiguous_and_padding_zeroed():
    groups, n, k = 4, 512, 7168
    ms = [300, 1, 0, 513]
    aligned = [deep_gemm.align(m, 128) for m in ms]
    total = sum(aligned)
    a, b = rand(total, k), rand(groups, n, k)
    layout = torch.full((total, ), -1, dtype=torch.int32, device='cuda')
    start = 0
    for g, (m, am) in enumerate(zip(ms, aligned)):
        layout[start:start + m] = g
        start += am
    d = torch.full((total, n), 7.0, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)
    ref = torch.zeros(total, n, device='cuda')
    valid = layout >= 0
    ref[valid] = torch.einsum('mk,mnk->mn', a[valid].float(), b[layout[valid].long()].float())
    assert float(calc_diff(d.float(), ref)) < 1e-5
    assert bool((d[~valid] == 0).all())


def test_m_grouped_masked_and_k_grouped():
    g, m_max, n, k = 4, 256, 4096, 7168
    a, b = rand(g, m_max, k), rand(g, n, k)
    masked = torch.tensor([0, 17, 256, 100], dtype=torch.int32, device='cuda')
    d = torch.empty(g, m_max, n, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked, 128)
    for i, m in enumerate(masked.tolist()):
        if m:
            assert float(calc_diff(d[i, :m].float(), a[i, :m].float() @ b[i].float().T)) < 1e-5

    ks = [128, 0, 320, 4096]
    m, n = 2112, 576
    a, b = rand(sum(ks), m), rand(sum(ks), n)
    c = torch.randn(len(ks), m, n, device='cuda')
    d = torch.empty_like(c)
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, torch.tensor(ks, dtype=torch.int32, device='cuda'), c)
    start = 0
    for i, kg in enumerate(ks):
        ref = c[i] + a[start:start + kg].float().T @ b[start:start + kg].float()
        assert float(calc_diff(d[i], ref)) < 1e-5
        start += kg
