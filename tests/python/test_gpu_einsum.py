"""einsum / fp8_einsum against torch.einsum on DeepSeek MLA-like shapes (GPU + torch; skipped otherwise).

References are float32 einsums of the same BF16 data (for FP8: of the UNQUANTISED data, so the check covers
the casts, the permuted scale views and the kernel together). Bars: BF16 calc_diff < 1e-5, FP8 < 1e-3.
Shapes: b (tokens) in {1, 7, 128}, h (heads) in {16, 128}, r = 512 (latent rank), d = 128 (head dim). The
largest tensors are [128, 128, 512] (16 MiB in bf16), far below the per-test memory budget.
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import ceil_div, per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
BF16_BAR, FP8_BAR = 1e-5, 1e-3
R, D = 512, 128
BH = [(b, h) for b in (1, 7, 128) for h in (16, 128)]


def rand(*shape):
    return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)


def diff(out, ref):
    value = float(calc_diff(out.float(), ref))
    print(f'calc_diff {value:.3g}')
    return value


def reference(expr, x, y):
    return torch.einsum(expr, x.float(), y.float())


@pytest.mark.parametrize('b,h', BH)
@pytest.mark.parametrize('use_cublaslt', [False, True])
def test_bhr_hdr_bhd(b, h, use_cublaslt):
    # DeepGEMM's test layout: y a [:, :, :r] slice of a wider tensor (row stride r + 128).
    x, y = rand(b, h, R), rand(h, D, R + 128)[:, :, :R]
    z = torch.full((b, h, D), float('nan'), device='cuda', dtype=torch.bfloat16)
    deep_gemm.einsum('bhr,hdr->bhd', x, y, z, use_cublaslt=use_cublaslt)
    assert diff(z, reference('bhr,hdr->bhd', x, y)) < BF16_BAR


@pytest.mark.parametrize('b,h', BH)
@pytest.mark.parametrize('use_cublaslt', [False, True])
def test_bhd_hdr_bhr(b, h, use_cublaslt):
    x, y = rand(b, h, D), rand(h, D, R)  # y is MN-major for this GEMM (N = r contiguous): BF16 reads that
    z = torch.full((b, h, R), float('nan'), device='cuda', dtype=torch.bfloat16)
    deep_gemm.einsum('bhd,hdr->bhr', x, y, z, use_cublaslt=use_cublaslt)
    assert diff(z, reference('bhd,hdr->bhr', x, y)) < BF16_BAR


@pytest.mark.parametrize('b,h', BH)
@pytest.mark.parametrize('accumulate', [False, True])
def test_bhd_bhr_hdr(b, h, accumulate):
    # K = b (tokens); both operands MN-major. With c = d the result accumulates into d.
    x, y = rand(b, h, D), rand(b, h, R)
    z0 = torch.randn(h, D, R, device='cuda') * 10
    z = z0.clone() if accumulate else torch.full((h, D, R), float('nan'), device='cuda')
    deep_gemm.einsum('bhd,bhr->hdr', x, y, z, z if accumulate else None)
    ref = reference('bhd,bhr->hdr', x, y) + (z0 if accumulate else 0)
    assert diff(z, ref) < BF16_BAR


def per_token(x, k):
    """x [..., k] per-token cast over its last dim: (fp8 data, fp32 scales [..., ceil(k/128)])."""
    q, s = per_token_cast_to_fp8(x.reshape(-1, k), use_ue8m0=False)
    return q.view(x.shape), s.view(*x.shape[:-1], ceil_div(k, 128))


def per_block_3d(w):
    """w [h, n, k] cast per 128x128 block of each w[i]: (fp8 [h, n, k], fp32 [h, n/128, k/128])."""
    pairs = [per_block_cast_to_fp8(w[i], use_ue8m0=False) for i in range(w.shape[0])]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


@pytest.mark.parametrize('b,h', BH)
def test_fp8_bhr_hdr_bhd_1d2d(b, h):
    # DeepGEMM's inference form: per-token x, per-block weights, bf16 out. a[1] is [b, h, r/128]: its
    # per-head view is not MN-major, so the kernel copies those scales element by element (no layout pass).
    x, y = rand(b, h, R), rand(h, D, R)
    z = torch.full((b, h, D), float('nan'), device='cuda', dtype=torch.bfloat16)
    deep_gemm.fp8_einsum('bhr,hdr->bhd', per_token(x, R), per_block_3d(y), z)
    assert diff(z, reference('bhr,hdr->bhd', x, y)) < FP8_BAR


@pytest.mark.parametrize('b,h', [(7, 16), (128, 128)])
def test_fp8_bhr_hdr_bhd_1d1d_accumulates(b, h):
    x, y = rand(b, h, R), rand(h, D, R)
    z0 = torch.randn(b, h, D, device='cuda')
    z = z0.clone()
    deep_gemm.fp8_einsum('bhr,hdr->bhd', per_token(x, R), per_token(y, R), z, c=z, recipe=(1, 1, 128))
    assert diff(z, z0 + reference('bhr,hdr->bhd', x, y)) < FP8_BAR


@pytest.mark.parametrize('b,h', BH)
def test_fp8_bhd_hdr_bhr(b, h):
    # SM90 FP8 needs y K-major (d contiguous): store it [h, r, d] and pass the [h, d, r] view, with the
    # per-block scales viewed the same way ([h, d/128, r/128]).
    x, y_hrd = rand(b, h, D), rand(h, R, D)
    y = y_hrd.transpose(1, 2)
    yq, ys = per_block_3d(y_hrd)
    z = torch.full((b, h, R), float('nan'), device='cuda', dtype=torch.bfloat16)
    deep_gemm.fp8_einsum('bhd,hdr->bhr', per_token(x, D), (yq.transpose(1, 2), ys.transpose(1, 2)), z)
    assert diff(z, reference('bhd,hdr->bhr', x, y)) < FP8_BAR


@pytest.mark.parametrize('h', [16, 128])
@pytest.mark.parametrize('b', [128, 256])
def test_fp8_bhd_bhr_hdr_1d1d(b, h):
    # K = b: FP8 needs the tokens contiguous (a stored [h, d, b], b stored [h, r, b]) and b a multiple of 16
    # (the 16-byte TMA row stride); scales per token of each (h, d) / (h, r) row, given as [b/128, h, d].
    x_hdb, y_hrb = rand(h, D, b), rand(h, R, b)
    xq, xs = per_token(x_hdb, b)
    yq, ys = per_token(y_hrb, b)
    a = (xq.permute(2, 0, 1), xs.permute(2, 0, 1))
    bb = (yq.permute(2, 0, 1), ys.permute(2, 0, 1))
    z0 = torch.randn(h, D, R, device='cuda') * 10
    z = z0.clone()
    deep_gemm.fp8_einsum('bhd,bhr->hdr', a, bb, z, c=z, recipe=(1, 1, 128))
    ref = z0 + reference('bhd,bhr->hdr', x_hdb.permute(2, 0, 1), y_hrb.permute(2, 0, 1))
    assert diff(z, ref) < FP8_BAR


def test_operands_are_not_copied():
    # The BF16 path hands the caller's memory to the kernel: torch allocates nothing during the call.
    x, y = rand(128, 128, R), rand(128, D, R)
    z = torch.empty(128, 128, D, device='cuda', dtype=torch.bfloat16)
    deep_gemm.einsum('bhr,hdr->bhd', x, y, z)  # compile outside the measurement
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    deep_gemm.einsum('bhr,hdr->bhd', x, y, z)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() == before


def batch_reduced_reference(a, b, chunk=256):
    """Σ_s a[s] @ b[s]ᵀ in float64, a chunk of batches at a time (the whole float64 product of s = 4096 batches
    would take 9 GiB)."""
    ref = torch.zeros(a.shape[1], b.shape[1], device='cuda', dtype=torch.float64)
    for i in range(0, a.shape[0], chunk):
        ref += torch.bmm(a[i:i + chunk].double(), b[i:i + chunk].double().mT).sum(0)
    return ref


@pytest.mark.parametrize('s,m,n,k', [(1, 64, 64, 64), (7, 128, 384, 128), (129, 384, 128, 384), (4096, 256, 256, 256)])
@pytest.mark.parametrize('accumulate', [True, False])
def test_bmk_bnk_mn_sums_over_every_batch(s, m, n, k, accumulate):
    # DeepGEMM's contract: fp32 d accumulates in place (c is d), bf16 d is overwritten. Reference in float64.
    a, b = rand(s, m, k), rand(s, n, k)
    ref = batch_reduced_reference(a, b)
    if accumulate:
        d0 = torch.randn(m, n, device='cuda') * 10
        d = d0.clone()
        deep_gemm.einsum('bmk,bnk->mn', a, b, d, c=d)
        ref = ref + d0.double()
    else:
        d = torch.full((m, n), float('nan'), device='cuda', dtype=torch.bfloat16)  # every element must be written
        deep_gemm.einsum('bmk,bnk->mn', a, b, d)
    assert torch.isfinite(d).all()
    assert diff(d.double(), ref) < BF16_BAR
    # Fresh inputs through the fp32 signature (the first call's kept plan when accumulating): their product.
    a.normal_(), b.normal_()
    d2 = torch.zeros(m, n, device='cuda')
    deep_gemm.einsum('bmk,bnk->mn', a, b, d2, c=d2)
    assert diff(d2.double(), batch_reduced_reference(a, b)) < BF16_BAR
