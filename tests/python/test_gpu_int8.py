"""deep_gemm.int8 on the GPU (skipped without one): gemm_nt against the float64 reference for decode to prefill M,
ragged N and K, strided operands, vLLM's scale shapes, torch's current stream and a CUDA graph; quantize then gemm_nt
against the float matmul it approximates; and the sums against torch._int_mm (cuBLASLt's int8 GEMM).

Each case draws fresh random int8 operands over the whole range (-128 included). The bar: every element within
|got - ref| <= 2^-8 |ref| + 2^-20 |scale| (|a| @ |b|.T): the int32 sums are exact, then one fp32 scaling and D's bf16
rounding.
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
import deep_gemm.int8 as i8  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def operands(m, n, k, k_pad=0):
    a = torch.randint(-128, 128, (m, k + k_pad), dtype=torch.int8, device='cuda')[:, :k]
    b = torch.randint(-128, 128, (n, k + k_pad), dtype=torch.int8, device='cuda')[:, :k]
    sa = torch.exp2(torch.empty(m, device='cuda').uniform_(-14, -10))
    sb = torch.exp2(torch.empty(n, device='cuda').uniform_(-14, -10))
    return a, b, sa, sb


def check(out, a, b, sa, sb):
    ref = i8.reference(a, b, sa, sb)
    mag = (a.cpu().double().abs() @ b.cpu().double().abs().T) * (sa.cpu().double().abs()[:, None] *
                                                                   sb.cpu().double().abs().reshape(-1)[None, :])
    err = (out.cpu().double() - ref).abs()
    bound = 2**-8 * ref.abs() + 2**-20 * mag
    assert (err <= bound).all(), f'worst {(err / bound).max().item():.3g} of the bound'


@pytest.mark.parametrize('m', [1, 7, 64, 129, 1000])
@pytest.mark.parametrize('n,k', [(2112, 7168), (576, 1552), (4096, 512)])
def test_gemm_nt_matches_the_reference(m, n, k):
    a, b, sa, sb = operands(m, n, k)
    out = i8.gemm_nt(a, b, sa, sb)
    assert out.dtype == torch.bfloat16 and out.shape == (m, n)
    check(out, a, b, sa, sb)


def test_strided_operands_vllm_scale_shapes_and_a_given_out():
    a, b, sa, sb = operands(96, 1024, 2048, k_pad=64)  # rows 64 bytes apart from their K: row slices of a wider buffer
    padded = torch.full((96, 1024 + 8), float('nan'), dtype=torch.bfloat16, device='cuda')
    out = padded[:, :1024]
    assert i8.gemm_nt(a, b, sa[:, None], sb[None, :], out=out) is out
    check(out, a, b, sa, sb)
    assert padded[:, 1024:].isnan().all()  # the row padding untouched


def test_runs_on_the_current_stream_and_in_a_cuda_graph():
    a, b, sa, sb = operands(16, 2048, 4096)
    out = torch.empty(16, 2048, dtype=torch.bfloat16, device='cuda')
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        i8.gemm_nt(a, b, sa, sb, out=out)
    stream.synchronize()
    check(out, a, b, sa, sb)
    graph = torch.cuda.CUDAGraph()
    captured = torch.zeros_like(out)
    with torch.cuda.graph(graph):
        i8.gemm_nt(a, b, sa, sb, out=captured)
    a.copy_(torch.randint(-128, 128, a.shape, dtype=torch.int8, device='cuda'))  # fresh inputs for the replay
    graph.replay()
    torch.cuda.synchronize()
    check(captured, a, b, sa, sb)


def test_quantized_gemm_approximates_the_float_matmul():
    x = torch.randn(256, 4096, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(2048, 4096, device='cuda', dtype=torch.bfloat16) * 0.02
    qx, sx = i8.quantize(x)
    qw, sw = i8.quantize(w)
    out = i8.gemm_nt(qx, qw, sx, sw)
    assert calc_diff(out.float(), x.float() @ w.float().T) < 2e-4


def test_sums_agree_with_cublaslt_int8():
    a, b, _, _ = operands(64, 4096, 7168)
    ones_a, ones_b = torch.ones(64, device='cuda'), torch.ones(4096, device='cuda')
    # Unit scales: the exact int32 sums torch._int_mm (cuBLASLt) returns, rounded to bf16.
    ours = i8.gemm_nt(a, b, ones_a, ones_b).double()
    theirs = torch._int_mm(a, b.T).double()
    assert ((ours - theirs).abs() <= 2**-8 * theirs.abs()).all()
