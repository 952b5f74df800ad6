"""deep_gemm.moe without a GPU: the module kept out of ``import deep_gemm``, the workspace sized by the library's
bound, the reference on a hand-checkable case, and fp8_moe's checks (Python's, then the library's) naming the argument
before the missing GPU is reported."""
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='deep_gemm.moe takes torch tensors')

import deep_gemm  # noqa: E402
import deep_gemm.moe as moe  # noqa: E402
from conftest import FakeTensor, gpu_available, raises  # noqa: E402

T, K, E, H, I = 64, 4, 8, 256, 256
R = 1280  # 64 * 4 pairs plus 127 padding rows for each of 8 experts, rounded up to 128


def test_import_deep_gemm_does_not_load_the_module():
    code = 'import sys, deep_gemm; print("deep_gemm.moe" in sys.modules, hasattr(deep_gemm, "fp8_moe"))'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ['False', 'False']


def test_workspace_holds_the_worst_routing():
    assert deep_gemm._C.moe_buffer_rows(T, K, E) == R
    ws = moe.Workspace(T, K, E, H, I, 'cpu')
    assert ws.rows == R and ws.a1.shape == (R, H) and ws.h1.shape == (R, 2 * I) and ws.y2.shape == (R, H)
    assert ws.sfa1.shape == (R, H // 128) and ws.sfa1.stride() == (1, R)  # MN-major, as the GEMMs read it
    assert ws.row_of(T).shape == (T, K)
    with pytest.raises(ValueError, match='hidden'):
        moe.Workspace(T, K, E, 200, I, 'cpu')
    with pytest.raises(ValueError, match='experts'):
        moe.Workspace(T, K, 2000, H, I, 'cpu')


def test_reference_on_one_token_and_one_expert():
    # x and weights exactly representable: x quantises to itself, so the reference is plain arithmetic.
    x = torch.zeros(1, 128, dtype=torch.bfloat16)
    x[0, 0] = 448.0
    w1, w2 = torch.zeros(2, 256, 128), torch.zeros(2, 128, 128)
    w1[1, 0, 0] = 1.0  # gate 0 of expert 1 reads x[0]
    w1[1, 128, 0] = 0.5  # up 0 of expert 1 too
    w2[1, 3, 0] = 2.0  # output column 3 of expert 1 reads intermediate 0
    w1 = (w1.to(torch.float8_e4m3fn), torch.ones(2, 2, 1))
    w2 = (w2.to(torch.float8_e4m3fn), torch.ones(2, 1, 1))
    y = moe.reference(x, torch.tensor([[1, -1]]), torch.tensor([[0.25, 9.0]]), w1, w2)
    g, u = 448.0, 224.0
    expected = 0.25 * 2.0 * g / (1 + torch.exp(torch.tensor(-g, dtype=torch.float64))) * u
    assert y[0, 3].item() == pytest.approx(expected.item(), rel=1e-12)
    assert (y[0, :3] == 0).all() and (y[0, 4:] == 0).all()


def _args(**over):
    ws = moe.Workspace.__new__(moe.Workspace)
    ws.max_tokens, ws.topk, ws.experts, ws.hidden, ws.intermediate, ws.rows = T, K, E, H, I, R
    ws.group_end = FakeTensor((E, ), 'int32')
    ws.row_of_buffer = FakeTensor((T * K, ), 'int32')
    ws.a1, ws.a2 = FakeTensor((R, H), 'float8_e4m3fn'), FakeTensor((R, I), 'float8_e4m3fn')
    ws.sfa1, ws.sfa2 = FakeTensor((H // 128, R), 'float32').T, FakeTensor((I // 128, R), 'float32').T
    ws.h1, ws.y2 = FakeTensor((R, 2 * I)), FakeTensor((R, H))
    args = dict(x=FakeTensor((T, H)), topk_idx=FakeTensor((T, K), 'int64'), topk_weights=FakeTensor((T, K), 'float32'),
                w1=(FakeTensor((E, 2 * I, H), 'float8_e4m3fn'), FakeTensor((E, 2 * I // 128, H // 128), 'float32')),
                w2=(FakeTensor((E, H, I), 'float8_e4m3fn'), FakeTensor((E, H // 128, I // 128), 'float32')),
                out=FakeTensor((T, H)), workspace=ws)
    args.update(over)
    return args


def test_python_checks_name_the_argument():
    raises(TypeError, 'x', moe.fp8_moe, **_args(x=FakeTensor((T, H), 'float16')))
    raises(TypeError, 'topk_idx', moe.fp8_moe, **_args(topk_idx=FakeTensor((T, K), 'float32')))
    raises(TypeError, 'w1', moe.fp8_moe, **_args(w1=FakeTensor((E, 2 * I, H), 'float8_e4m3fn')))
    raises(TypeError, 'w2[1]', moe.fp8_moe, **_args(w2=(FakeTensor((E, H, I), 'float8_e4m3fn'), None)))
    raises(TypeError, 'topk_weights', moe.fp8_moe, **_args(topk_weights=FakeTensor((T, K), 'bfloat16')))
    raises(TypeError, 'out', moe.fp8_moe, **_args(out=FakeTensor((T, H), 'float32')))
    raises(TypeError, 'workspace', moe.fp8_moe, **_args(workspace=object()))
    assert '65 tokens' in raises(ValueError, 'workspace', moe.fp8_moe, **_args(x=FakeTensor((65, H)),
                                                                              topk_idx=FakeTensor((65, K), 'int64')))
    assert 'cuda:1' in raises(ValueError, 'topk_weights', moe.fp8_moe,
                              **_args(topk_weights=FakeTensor((T, K), 'float32', index=1)))
    raises(ValueError, 'x', moe.fp8_moe, **_args(x=FakeTensor((T, H), device='cpu')))


@pytest.mark.skipif(gpu_available(), reason='fake pointers must not reach a kernel')
def test_without_a_gpu_the_library_checks_then_says_so():
    assert 'H=256' in raises(ValueError, 'w1[0]', moe.fp8_moe,
                             **_args(w1=(FakeTensor((E, 2 * I, 384), 'float8_e4m3fn'),
                                         FakeTensor((E, 2 * I // 128, 3), 'float32'))))
    assert '[64, 256]' in raises(ValueError, 'out', moe.fp8_moe, **_args(out=FakeTensor((T, 128))))
    assert 'contiguous' in raises(ValueError, 'topk_weights', moe.fp8_moe,
                                  **_args(topk_weights=FakeTensor((T, K), 'float32', strides=(8, 1))))
    raises(ValueError, 'w2[1]', moe.fp8_moe, **_args(w2=(FakeTensor((E, H, I), 'float8_e4m3fn'),
                                                         FakeTensor((E, 3, I // 128), 'float32'))))
    for dtype in ('int32', 'int64'):
        with pytest.raises(RuntimeError, match='GPU'):
            moe.fp8_moe(**_args(topk_idx=FakeTensor((T, K), dtype)))


def _grouped_gemm_float64(a, b, d, group_end, use_psum_layout):
    """m_grouped_fp8_gemm_nt_contiguous's psum-layout math in float64 on the CPU: group g's rows [start, end) of a,
    start = the previous end rounded up to 128, times its expert's weight."""
    assert use_psum_layout
    (a_data, a_sf), (b_data, b_sf) = a, b
    start = 0
    for g, end in enumerate(group_end.tolist()):
        if end > start:
            rows = slice(start, end)
            a_hat = a_data[rows].double() * a_sf[rows].double().repeat_interleave(128, 1)
            b_hat = b_data[g].double() * b_sf[g].double().repeat_interleave(128, 0).repeat_interleave(128, 1)
            d[rows] = (a_hat @ b_hat.T).to(d.dtype)
        start = (end + 127) // 128 * 128


def test_unfused_steps_lay_out_compute_and_combine_every_pair():
    from deep_gemm.moe._reference import unfused_steps
    g = torch.Generator().manual_seed(3)
    experts, topk, hidden, inter, tokens = 6, 2, 256, 128, 40

    def weights(rows, cols):
        w = torch.randn((experts, rows, cols), generator=g) / cols**0.5
        return w.to(torch.float8_e4m3fn), torch.rand((experts, rows // 128, cols // 128), generator=g) + 0.5
    w1, w2 = weights(2 * inter, hidden), weights(hidden, inter)
    x = torch.randn((tokens, hidden), generator=g).to(torch.bfloat16)
    idx = torch.randint(-1, experts + 1, (tokens, topk), generator=g)  # -1 and `experts` are skipped
    topk_weights = torch.rand((tokens, topk), generator=g)
    topk_weights[idx < 0] = float('nan')  # never read
    got = unfused_steps(_grouped_gemm_float64, x, idx, topk_weights, w1, w2)
    keep = (idx >= 0) & (idx < experts)
    want = moe.reference(x, idx, torch.where(keep, topk_weights, 0.0), w1, w2)
    assert not got.isnan().any()
    diff = 1 - 2 * (got.double() * want).sum() / (got.double().square().sum() + want.square().sum())
    assert diff < 1e-3
