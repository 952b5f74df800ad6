"""deep_gemm.cublaslt_gemm_* with FP8 (float8_e4m3fn) operands, as DeepGEMM's test_fp8_fp4.py calls them
(``cublaslt_gemm_nt(a[0], b[0], d, c=c)``): unscaled, d = c + a @ b.T in full-precision accumulation, bf16 or fp32
d (GPU + torch; skipped otherwise). The reference is the float32 product of the same FP8 values, so the bar is
tight. MN-major operands are refused naming them (cuBLASLt's FP8 matmul takes only the TN form).
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
SHAPES = [(128, 2112, 7168), (4096, 576, 7168), (1, 4096, 7168), (129, 264, 384), (3, 80, 320)]


def fp8(*shape):
    return per_token_cast_to_fp8(torch.randn(*shape, device='cuda', dtype=torch.bfloat16), use_ue8m0=False)[0]


def diff(out, ref):
    value = float(calc_diff(out.float(), ref))
    print(f'calc_diff {value:.3g}')
    return value


@pytest.mark.parametrize('m,n,k', SHAPES)
@pytest.mark.parametrize('out_dtype,accumulate', [(torch.bfloat16, False), (torch.float, False), (torch.float, True)])
def test_cublaslt_nt_with_fp8_operands(m, n, k, out_dtype, accumulate):
    a, b = fp8(m, k), fp8(n, k)
    c = torch.randn(m, n, device='cuda', dtype=out_dtype) if accumulate else None
    d = torch.full((m, n), float('nan'), device='cuda', dtype=out_dtype)
    ref = a.float() @ b.float().T + (c.float() if accumulate else 0)
    deep_gemm.cublaslt_gemm_nt(a, b, d, c=c)
    assert diff(d, ref) < (1e-5 if out_dtype == torch.bfloat16 else 1e-8)


def test_cublaslt_accumulates_into_d_itself():
    a, b = fp8(256, 1024), fp8(512, 1024)
    d = torch.randn(256, 512, device='cuda')
    ref = d.clone() + a.float() @ b.float().T
    deep_gemm.cublaslt_gemm_nt(a, b, d, c=d)
    assert diff(d, ref) < 1e-8


def test_named_layouts_take_k_major_storage_only():
    a, b, d = fp8(128, 256), fp8(64, 256), torch.empty(128, 64, device='cuda', dtype=torch.bfloat16)
    # nn with b given as [K, N] that is the transposed view of a K-major [N, K] tensor: valid.
    deep_gemm.cublaslt_gemm_nn(a, b.T, d)
    assert diff(d, a.float() @ b.float().T) < 1e-5
    with pytest.raises(ValueError, match='^b: expected a K-major FP8 operand'):
        deep_gemm.cublaslt_gemm_nn(a, b.T.contiguous(), d)
    with pytest.raises(ValueError, match='^a: expected a K-major FP8 operand'):
        deep_gemm.cublaslt_gemm_tn(a.T.contiguous(), b.T, d)
    with pytest.raises(ValueError, match='^b: expected dtype fp8 like a'):
        deep_gemm.cublaslt_gemm_nt(a, b.to(torch.bfloat16), d)
