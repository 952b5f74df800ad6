"""The split-K workspace every kernel family shares (one zeroed buffer per stream, each family with its own layout)
on the GPU, skipped without one: after a family's split launch the buffer must be all zeros again, or the next launch
of another layout finds non-zero tile counters (and the GEMMs' atomic fix-up non-zero sums). Found on the first H100
run: FP8 x FP4 at 128 x 2112 after 64 x 2112 returned NaN, an int8 split-K GEMM after the HC prenorm's reduction
returned garbage, the weight-only GEMM gave different results on a second call."""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
import deep_gemm.int8 as i8  # noqa: E402
from deep_gemm import _fp8_fp4_sm90 as f4  # noqa: E402
from deep_gemm.bench.fp8_fp4_suite import cast_to_fp4  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils.math import per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def fp8_fp4(m, n, k):
    """One FP8 x FP4 GEMM (split over K for these sizes), its calc_diff against the unquantised product."""
    x = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
    d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    f4.fp8_fp4_gemm_nt(per_token_cast_to_fp8(x, use_ue8m0=False), cast_to_fp4(torch, w), d)
    return calc_diff(d.double(), x.double() @ w.double().T)


def hc_prenorm_with_splits():
    a = torch.randn(13, 28672, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(24, 28672, device='cuda')
    d = torch.empty(13, 24, device='cuda')
    s = torch.empty(13, device='cuda')
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=None)  # small M, long K: the library splits K


def int8_split_k_is_exact():
    a = torch.randint(-128, 128, (7, 1552), dtype=torch.int8, device='cuda')
    b = torch.randint(-128, 128, (576, 1552), dtype=torch.int8, device='cuda')
    sa, sb = torch.ones(7, device='cuda'), torch.ones(576, device='cuda')
    out = i8.gemm_nt(a, b, sa, sb)
    ref = (a.double() @ b.double().T)
    return bool(((out.double() - ref).abs() <= 2**-8 * ref.abs() + 1).all())


def test_families_leave_the_shared_workspace_zeroed():
    assert fp8_fp4(64, 2112, 7168) < 0.01  # 33 tiles, 4 splits: partial tiles past a 256-byte counter block
    assert fp8_fp4(128, 2112, 7168) < 0.01  # 66 tiles, 2 splits: 512 bytes of counters over those partials
    hc_prenorm_with_splits()
    assert int8_split_k_is_exact()  # the GEMMs' fix-up: counters and atomic sums where the others wrote
    torch.cuda.synchronize()
