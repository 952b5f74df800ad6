"""deep_gemm's torch.library ops on the GPU (GPU + torch; skipped otherwise): each family's op computes what the
plain call computes; torch.compile(fullgraph=True) runs them (AOT autograd for every family, inductor for a model),
and mode="reduce-overhead" replays them from CUDA graphs on new inputs; torch.library.opcheck holds the fake
implementations to the real ones."""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm import _torch_ops  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

from test_host_cost_gpu import FAMILIES, families  # noqa: E402

deep_gemm.register_torch_ops()  # deep_gemm may have come before torch in this process (test_torch_ops.py says why)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def op_name(fn):
    return fn.__name__


def output_of(args):
    return args[3] if isinstance(args[0], str) else args[2]  # einsum's first argument is the expression


def plain_arguments(fn, args, kwargs):
    """Every parameter of fn, in order, for a call fn(*args, **kwargs)."""
    import inspect
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.arguments.values())


@pytest.mark.parametrize('name', FAMILIES)
def test_the_op_computes_what_the_plain_call_does(name):
    deep_gemm.register_torch_ops()
    fn, args, kwargs, ref = families()[name]
    op = _torch_ops._registry[op_name(fn)]
    d = output_of(args)
    d.fill_(float('nan'))
    _torch_ops._ops[op.name](*op.op_values(plain_arguments(fn, args, kwargs)))
    torch.cuda.synchronize()
    assert not d.isnan().any()
    if ref is not None:
        assert float(calc_diff(d.float(), ref)) < 1e-3


@pytest.mark.parametrize('name', FAMILIES)
def test_compiled_calls_run_the_op_with_no_graph_break(name):
    fn, args, kwargs, ref = families()[name]
    d = output_of(args)
    d.fill_(float('nan'))

    def call(*tensors):
        fn(*tensors, **kwargs)

    torch._dynamo.reset()
    torch.compile(call, fullgraph=True, backend='aot_eager')(*args)
    torch.cuda.synchronize()
    assert not d.isnan().any()
    if ref is not None:
        assert float(calc_diff(d.float(), ref)) < 1e-3


class Projection(torch.nn.Module):
    """An FP8 linear layer as serving stacks write it: activations cast per token, weights cast once per block."""

    def __init__(self, n, k):
        super().__init__()
        w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
        self.w, self.w_sf = per_block_cast_to_fp8(w, use_ue8m0=False)
        self.w_ref = w

    def forward(self, x):
        xq = per_token_cast_to_fp8(x, use_ue8m0=False)
        d = torch.empty(x.shape[0], self.w.shape[0], device=x.device, dtype=torch.bfloat16)
        deep_gemm.fp8_gemm_nt(xq, (self.w, self.w_sf), d)
        return torch.nn.functional.silu(d)


@pytest.mark.parametrize('mode', ['default', 'reduce-overhead'])
def test_inductor_and_cuda_graphs_run_a_model_on_new_inputs(mode):
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    model = Projection(512, 1024)
    compiled = torch.compile(model, fullgraph=True, mode=mode)
    for _ in range(4):  # warm-up, recording, then replays
        x = torch.randn(256, 1024, device='cuda', dtype=torch.bfloat16)
        out = compiled(x).clone()
        ref = torch.nn.functional.silu(x.float() @ model.w_ref.float().T)
        assert float(calc_diff(out.float(), ref)) < 2e-3
    if mode == 'reduce-overhead':
        assert not counters['inductor']['cudagraph_skips'], dict(counters['inductor'])


# torch's schema check compares every argument before and after the call with arithmetic that float8 tensors
# lack, so the FP8 ops skip it (their schemas are the BF16 ones' with the scales added).
@pytest.mark.parametrize('name', ['bf16_gemm_nt', 'k_grouped_bf16_gemm_tn_contiguous', 'fp8_gemm_nt',
                                  'm_grouped_fp8_gemm_nt_masked'])
def test_opcheck_holds_the_fake_implementations_to_the_real_ones(name):
    deep_gemm.register_torch_ops()
    fn, args, kwargs, _ = families()[name]
    op = _torch_ops._registry[op_name(fn)]
    values = op.op_values(plain_arguments(fn, args, kwargs))
    tests = ('test_faketensor', 'test_aot_dispatch_dynamic') + (() if op.fp8 else ('test_schema', ))
    torch.library.opcheck(_torch_ops._ops[op.name], tuple(values), test_utils=tests)
