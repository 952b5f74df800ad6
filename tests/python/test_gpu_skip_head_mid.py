"""deep_gemm.fp8_gemm_nt_skip_head_mid against torch, as DeepGEMM 2.6.1's test_gemm_skip_head_mid runs it on SM90
(GPU + torch; skipped otherwise): head_splits (128, 64, 128), M 128 and 4096, (N, K) (32768, 512) and (8192, 512),
1D2D operands (per-token A, per-block B scales, no UE8M0), bf16 d. The head parts are held to DeepGEMM's calc_diff bar
against the FP32 product of the unquantised inputs; the mid columns must keep what was there before the call."""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
HEAD_SPLITS = (128, 64, 128)
SENTINEL = -1536.0  # exact in bf16: what the mid columns hold before the call, and must hold after it


def heads_view(d, head_splits):
    """d [M, N'] as [M, heads, left + mid + right]."""
    left, mid, right = head_splits
    return d.view(d.shape[0], -1, left + mid + right)


def head_parts(d, head_splits):
    """The columns the GEMM writes, in GEMM column order: [M, N]."""
    left, mid, _ = head_splits
    heads = heads_view(d, head_splits)
    return torch.cat([heads[:, :, :left], heads[:, :, left + mid:]], dim=2).reshape(d.shape[0], -1)


def fresh_output(m, n_out):
    """d before a call: NaN where the GEMM writes, the sentinel in the mid columns."""
    left, mid, _ = HEAD_SPLITS
    d = torch.full((m, n_out), float('nan'), device='cuda', dtype=torch.bfloat16)
    heads_view(d, HEAD_SPLITS)[:, :, left:left + mid] = SENTINEL
    return d


def calc_diff_by_rows(x, y, m, rows=512):
    """calc_diff (1 - 2·Σxy / Σ(x² + y²), float64) of x(r0, r1) and y(r0, r1) summed over row chunks: at M = 4096 and
    N = 32768 one float64 copy of the output alone is 1 GiB, and each GPU test keeps under 4 GiB (conftest.py)."""
    xy = squares = 0.0
    for r0 in range(0, m, rows):
        xs, ys = x(r0, r0 + rows).double(), y(r0, r0 + rows).double()
        xy += float((xs * ys).sum())
        squares += float((xs * xs + ys * ys).sum())
    return 1 - 2 * xy / squares


@pytest.mark.parametrize('m', [128, 4096])
@pytest.mark.parametrize('n,k', [(32768, 512), (8192, 512)])
def test_fp8_gemm_nt_skip_head_mid(m, n, k):
    left, mid, right = HEAD_SPLITS
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
    n_out = n + n // (left + right) * mid
    d = fresh_output(m, n_out)
    # disable_ue8m0_cast as DeepGEMM's test passes it on SM90 (fp32 scales, no UE8M0).
    fp8_a, fp8_b = per_token_cast_to_fp8(a, use_ue8m0=False), per_block_cast_to_fp8(b, use_ue8m0=False)
    deep_gemm.fp8_gemm_nt_skip_head_mid(fp8_a, fp8_b, d, HEAD_SPLITS, disable_ue8m0_cast=True)
    assert bool((heads_view(d, HEAD_SPLITS)[:, :, left:left + mid] == SENTINEL).all()), 'mid columns overwritten'
    got = head_parts(d, HEAD_SPLITS)
    assert not bool(got.isnan().any()), 'head-part columns left unwritten'
    b_t = b.float().T
    value = calc_diff_by_rows(lambda r0, r1: got[r0:r1], lambda r0, r1: a[r0:r1].float() @ b_t, m)
    print(f'calc_diff {value:.3g}')
    assert value < 1e-3
    # A second call (the kept plan) writes the same into a fresh d.
    again = fresh_output(m, n_out)
    deep_gemm.fp8_gemm_nt_skip_head_mid(fp8_a, fp8_b, again, HEAD_SPLITS, disable_ue8m0_cast=True)
    assert bool((heads_view(again, HEAD_SPLITS)[:, :, left:left + mid] == SENTINEL).all())
    assert calc_diff_by_rows(lambda r0, r1: head_parts(again[r0:r1], HEAD_SPLITS), lambda r0, r1: got[r0:r1], m) < 1e-6
