"""deep_gemm.weight_quant's GPU calls as torch.library ops (weight_quant/_torch_ops.py), without a GPU: weights packed
on the CPU and moved to the meta device. Each of gemm, m_grouped_gemm_contiguous, m_grouped_gemm_masked and dequantize,
called inside torch.compile(fullgraph=True), traces into exactly one deep_gemm.wq_* op (a dynamic M stays symbolic;
torch.export keeps the op too); the fake implementations name the argument whose shape or dtype is wrong; the op's
implementation rebuilds the PackedWeight and runs the eager function; the ops exist after import deep_gemm.weight_quant
alone; outside tracing the eager checks run as before."""
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='the custom ops and torch.compile need torch')

import deep_gemm.weight_quant as wq  # noqa: E402
from conftest import raises  # noqa: E402
from deep_gemm.weight_quant import _torch_ops  # noqa: E402

M, N, K, E = 8, 32, 128, 2
BF16, FP16, FP32, I32 = torch.bfloat16, torch.float16, torch.float32, torch.int32
OPS = ('wq_gemm', 'wq_m_grouped_gemm_contiguous', 'wq_m_grouped_gemm_masked', 'wq_dequantize')


def meta(*shape, dtype=BF16):
    return torch.empty(*shape, dtype=dtype, device='meta')


def int4(zeros=False, dtype=BF16):
    z = torch.randint(0, 16, (N, K // 64)) if zeros else None
    return wq.pack_int4(torch.randint(0, 16, (N, K)), torch.rand(N, K // 64).to(dtype) + 0.5, z)


def int8():
    return wq.pack_int8(torch.randint(-128, 128, (N, K), dtype=torch.int8), torch.rand(N) + 0.5)


def mxfp4():
    return wq.pack_mxfp4(torch.randint(0, 256, (N, K // 2), dtype=torch.uint8),
                         torch.randint(100, 140, (N, K // 32), dtype=torch.uint8))


# Packed once on the CPU (the library packs there), then every array on the meta device: no data, shapes only.
WEIGHTS = {'int4': int4().to('meta'), 'int4-zeros-fp16': int4(True, FP16).to('meta'), 'int8': int8().to('meta'),
           'mxfp4': mxfp4().to('meta')}
EXPERTS = {'int4-zeros': wq.stack([int4(True) for _ in range(E)]).to('meta'),
           'mxfp4': wq.stack([mxfp4() for _ in range(E)]).to('meta')}


def calls():
    """(label, function of no arguments calling weight_quant on meta tensors, the op it must trace to, out's shape
    and dtype)."""
    out = []
    for label, w in WEIGHTS.items():
        act = w.act_dtype
        out += [(f'gemm {label}', lambda w=w, act=act: wq.gemm(meta(M, K, dtype=act), w), 'wq_gemm', (M, N), act),
                (f'gemm {label} out=fp32',
                 lambda w=w, act=act: wq.gemm(meta(M, K, dtype=act), w, meta(M, N, dtype=FP32)),
                 'wq_gemm', (M, N), FP32),
                (f'dequantize {label}', lambda w=w: wq.dequantize(w), 'wq_dequantize', (N, K), act)]
    for label, w in EXPERTS.items():
        out += [(f'm_grouped_gemm_contiguous {label}',
                 lambda w=w: wq.m_grouped_gemm_contiguous(meta(4 * M, K), w, meta(4 * M, dtype=I32)),
                 'wq_m_grouped_gemm_contiguous', (4 * M, N), BF16),
                (f'm_grouped_gemm_masked {label}',
                 lambda w=w: wq.m_grouped_gemm_masked(meta(E, M, K), w, meta(E, dtype=I32), 4),
                 'wq_m_grouped_gemm_masked', (E, M, N), BF16),
                (f'm_grouped_gemm_masked {label} out=fp32',
                 lambda w=w: wq.m_grouped_gemm_masked(meta(E, M, K), w, meta(E, dtype=I32), 4,
                                                      meta(E, M, N, dtype=FP32)),
                 'wq_m_grouped_gemm_masked', (E, M, N), FP32),
                (f'dequantize {label} expert 1', lambda w=w: wq.dequantize(w.expert(1)), 'wq_dequantize', (N, K), BF16)]
    return out


CALLS = calls()


def deep_gemm_ops(graphs):
    return [str(node.target) for gm in graphs for node in gm.graph.nodes
            if node.op == 'call_function' and str(node.target).startswith('deep_gemm.')]


def compile_and_run(fn, *args, dynamic=None):
    """fn under torch.compile(fullgraph=True) through AOT autograd (functionalisation of the write of out, no
    inductor): its result, the deep_gemm ops of the Dynamo graphs and how many graphs there were."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        from torch._dynamo.backends.common import aot_autograd
        return aot_autograd(fw_compiler=lambda g, _: g)(gm, example_inputs)

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend=backend, dynamic=dynamic)
    results = [compiled(*a) for a in args] if args else [compiled()]
    return results, deep_gemm_ops(graphs), len(graphs)


def test_the_ops_exist_after_importing_weight_quant():
    assert sorted(_torch_ops._ops) == sorted(OPS)
    for name in OPS:
        assert hasattr(torch.ops.deep_gemm, name)
    # A fresh process: import deep_gemm.weight_quant alone registers them (deep_gemm's own GEMM ops are not needed).
    code = 'import deep_gemm.weight_quant, torch; print(all(hasattr(torch.ops.deep_gemm, n) for n in %r))' % (OPS, )
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['True']


@pytest.mark.parametrize('label,fn,op,shape,dtype', CALLS, ids=[c[0] for c in CALLS])
def test_every_call_traces_into_its_op_with_no_graph_break(label, fn, op, shape, dtype):
    (result, ), ops, _ = compile_and_run(fn)
    assert ops == [f'deep_gemm.{op}'], ops
    assert result.device.type == 'meta' and tuple(result.shape) == shape and result.dtype == dtype


def test_a_dynamic_m_stays_symbolic():
    w = WEIGHTS['int4']
    results, ops, graphs = compile_and_run(lambda a: wq.gemm(a, w), (meta(M, K), ), (meta(3 * M, K), ), dynamic=True)
    assert ops == ['deep_gemm.wq_gemm'] and graphs == 1  # no recompilation for the second M: M was not specialised
    assert [tuple(r.shape) for r in results] == [(M, N), (3 * M, N)]


def test_torch_export_keeps_the_op():
    w = EXPERTS['mxfp4']

    class Experts(torch.nn.Module):
        def forward(self, a, masked_m):
            return wq.m_grouped_gemm_masked(a, w, masked_m, 4)

    exported = torch.export.export(Experts(), (meta(E, M, K), meta(E, dtype=I32)),
                                   dynamic_shapes={'a': {1: torch.export.Dim('m_max')}, 'masked_m': None})
    ops = [str(n.target) for n in exported.graph.nodes if n.op == 'call_function' and 'deep_gemm' in str(n.target)]
    assert ops == ['deep_gemm.wq_m_grouped_gemm_masked.default'], ops


G = EXPERTS['int4-zeros']
W = WEIGHTS['int4']
# (the argument named, the start of the message, the traced_* function of _torch_ops and its arguments); the same
# call of the plain function is what the compile test makes.
BAD = [
    ('a', 'a: expected bfloat16 elements (the weight\'s act_dtype)', 'gemm', (meta(M, K, dtype=FP16), W, None)),
    ('a', 'a: expected K = 128', 'gemm', (meta(M, K + 64), W, None)),
    ('a', 'a: expected a 2-D tensor', 'gemm', (meta(E, M, K), W, None)),
    ('out', 'out: expected shape (8, 32)', 'gemm', (meta(M, K), W, meta(M, N + 1))),
    ('out', 'out: expected bfloat16 or float16 or float32', 'gemm', (meta(M, K), W, meta(M, N, dtype=I32))),
    ('w', 'w: expected a single weight', 'gemm', (meta(M, K), G, None)),
    ('grouped_layout', 'grouped_layout: expected int32', 'm_grouped_gemm_contiguous',
     (meta(M, K), G, meta(M, dtype=torch.int64), None)),
    ('grouped_layout', 'grouped_layout: expected shape (8,)', 'm_grouped_gemm_contiguous',
     (meta(M, K), G, meta(M + 1, dtype=I32), None)),
    ('out', 'out: expected shape (8, 32)', 'm_grouped_gemm_contiguous',
     (meta(M, K), G, meta(M, dtype=I32), meta(M, 2 * N))),
    ('masked_m', 'masked_m: expected int32', 'm_grouped_gemm_masked',
     (meta(E, M, K), G, meta(E, dtype=torch.int64), 4, None)),
    ('masked_m', 'masked_m: expected shape (2,)', 'm_grouped_gemm_masked', (meta(E, M, K), G, meta(E + 1, dtype=I32),
                                                                            4, None)),
    ('w', 'w: expected a grouped weight of 3 experts', 'm_grouped_gemm_masked',
     (meta(E + 1, M, K), G, meta(E + 1, dtype=I32), 4, None)),
    ('a', 'a: expected K = 128', 'm_grouped_gemm_masked', (meta(E, M, K - 8), G, meta(E, dtype=I32), 4, None)),
    ('expected_m', 'expected_m: expected an int >= 1', 'm_grouped_gemm_masked',
     (meta(E, M, K), G, meta(E, dtype=I32), 0, None)),
    ('out', 'out: expected shape (2, 8, 32)', 'm_grouped_gemm_masked',
     (meta(E, M, K), G, meta(E, dtype=I32), 4, meta(M, N))),
    ('out', 'out: expected bfloat16 elements (the weight\'s act_dtype)', 'dequantize', (W, meta(N, K, dtype=FP32))),
    ('out', 'out: expected shape (32, 128)', 'dequantize', (W, meta(K, N))),
    ('w', 'w: expected a single weight', 'dequantize', (G, None)),
]
BAD_IDS = [f'{b[2]}-{i}-{b[0]}' for i, b in enumerate(BAD)]


@pytest.mark.parametrize('name,message,function,args', BAD, ids=BAD_IDS)
def test_fake_implementations_name_the_wrong_argument(name, message, function, args):
    # Outside tracing, the op on meta tensors runs its fake implementation: the ValueError itself.
    got = raises(ValueError, name, getattr(_torch_ops, f'traced_{function}'), *args)
    assert got.startswith(message), got


@pytest.mark.parametrize('name,message,function,args', BAD, ids=BAD_IDS)
def test_fake_implementations_name_the_wrong_argument_under_compile(name, message, function, args):
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(lambda: getattr(wq, function)(*args), fullgraph=True, backend='aot_eager')()
    assert message in str(info.value)


def test_the_ops_implementation_rebuilds_the_weight_and_runs_the_eager_call():
    """On CPU tensors the op dispatches to its implementation: PackedWeight(...) re-checks the fields, then the eager
    gemm() checks the call (and stops at the CPU activations: no GPU work)."""
    w = int8()
    fields = _torch_ops._weight_values(w)
    a, out = torch.zeros(M, K, dtype=BF16), torch.zeros(M, N, dtype=BF16)
    raises(ValueError, 'a', torch.ops.deep_gemm.wq_gemm, *fields, a, out)
    assert 'CUDA' in raises(ValueError, 'a', torch.ops.deep_gemm.wq_gemm, *fields, a, out)
    bad_fields = fields[:8] + (64, ) + fields[9:]  # int8 has no groups: group_size 0
    raises(ValueError, 'group_size', torch.ops.deep_gemm.wq_gemm, *bad_fields, a, out)
    raises(ValueError, 'out', torch.ops.deep_gemm.wq_dequantize, *fields, torch.zeros(N, K, dtype=BF16))


@pytest.mark.parametrize('call,name,what', [
    (lambda: wq.gemm(meta(M, K), WEIGHTS['int4']), 'a', 'CUDA tensor'),
    (lambda: wq.m_grouped_gemm_contiguous(meta(M, K), G, meta(M, dtype=I32)), 'a', 'CUDA tensor'),
    (lambda: wq.m_grouped_gemm_masked(meta(E, M, K), G, meta(E, dtype=I32), 4), 'a', 'CUDA tensor'),
    (lambda: wq.dequantize(WEIGHTS['int4']), 'w', 'CUDA device'),
])
def test_outside_tracing_the_eager_checks_run(call, name, what):
    # The same meta tensors that trace fine are refused eagerly: the plain functions did not take the op's path.
    assert what in raises(ValueError, name, call)


def test_a_non_weight_is_named_under_compile_too():
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(lambda a: wq.gemm(a, 'w'), fullgraph=True, backend='aot_eager')(meta(M, K))
    assert 'w: expected a deep_gemm.weight_quant.PackedWeight' in str(info.value)
