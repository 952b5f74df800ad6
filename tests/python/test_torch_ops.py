"""deep_gemm's GEMMs as torch.library ops (deep_gemm/_torch_ops.py), without a GPU: every exported GEMM, called as
the plain function inside torch.compile(fullgraph=True), traces into one deep_gemm op on meta tensors (AOT autograd
functionalises its write of d); the fake implementations name the argument whose shape or dtype is wrong; the ops
register at import when torch came first, on the first checked call otherwise, or by register_torch_ops()."""
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='the custom ops and torch.compile need torch')

import deep_gemm  # noqa: E402

# Other test files may have imported deep_gemm before torch, with no checked call since: the documented case for
# registering by hand before a first call under torch.compile.
deep_gemm.register_torch_ops()

M, N, K, G = 64, 256, 384, 2
BF16, FP32, FP8, I32 = torch.bfloat16, torch.float32, torch.float8_e4m3fn, torch.int32


def meta(*shape, dtype=BF16):
    return torch.empty(*shape, dtype=dtype, device='meta')


def fp8_pair(rows, k, block_rows=False, groups=None):
    """(data, scales) with per-token (or per-128-row-block) scales for a [(G,) rows, k] operand."""
    lead = () if groups is None else (groups, )
    sf_rows = -(-rows // 128) if block_rows else rows
    return meta(*lead, rows, k, dtype=FP8), meta(*lead, sf_rows, k // 128, dtype=FP32)


def dense_operands(layout, dtype=BF16):
    a = meta(M, K, dtype=dtype) if layout[0] == 'n' else meta(K, M, dtype=dtype)
    b = meta(N, K, dtype=dtype) if layout[1] == 't' else meta(K, N, dtype=dtype)
    return a, b


def fp8_dense_operands(layout):
    (a, sfa), (b, sfb) = fp8_pair(M, K), fp8_pair(N, K, block_rows=True)
    if layout[0] == 't':
        a, sfa = a.t(), sfa.t()
    if layout[1] == 'n':
        b, sfb = b.t(), sfb.t()
    return (a, sfa), (b, sfb)


def calls():
    """(name, function of no arguments that makes its tensors and calls deep_gemm, the op it must trace to)."""
    out = []
    def dense(name, operands, accumulate=False):
        """A call of deep_gemm.<name> on the layout its name ends with; accumulate: fp32 d given as c too."""
        def call():
            a, b = operands(name[-2:])
            d = torch.zeros(M, N, dtype=FP32, device='meta') if accumulate else meta(M, N)
            getattr(deep_gemm, name)(a, b, d, **({'c': d} if accumulate else {}))
            return d
        return call

    for layout in ('nt', 'nn', 'tn', 'tt'):
        out += [(f'bf16_gemm_{layout}', dense(f'bf16_gemm_{layout}', dense_operands), f'bf16_gemm_{layout}'),
                (f'bf16_gemm_{layout}+c=d', dense(f'bf16_gemm_{layout}', dense_operands, accumulate=True),
                 f'bf16_gemm_{layout}'),
                (f'cublaslt_gemm_{layout}', dense(f'cublaslt_gemm_{layout}', dense_operands),
                 f'cublaslt_gemm_{layout}'),
                (f'fp8_gemm_{layout}', dense(f'fp8_gemm_{layout}', fp8_dense_operands), f'fp8_gemm_{layout}'),
                (f'fp8_fp4_gemm_{layout}', dense(f'fp8_fp4_gemm_{layout}', fp8_dense_operands), f'fp8_gemm_{layout}')]

    def fp8_1d1d():
        a, b = fp8_pair(M, K), fp8_pair(N, K)
        d = torch.zeros(M, N, dtype=FP32, device='meta')
        deep_gemm.fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128))
        return d

    def m_grouped(kind, layout):
        def call():
            layout_rows = meta(M, dtype=I32)
            d = meta(M, N)
            if kind == 'bf16':
                b = meta(G, N, K) if layout == 'nt' else meta(G, K, N)
                getattr(deep_gemm, f'm_grouped_bf16_gemm_{layout}_contiguous')(meta(M, K), b, d, layout_rows)
            else:
                b, sfb = fp8_pair(N, K, block_rows=True, groups=G)
                if layout == 'nn':
                    b, sfb = b.mT, sfb.mT
                getattr(deep_gemm, f'm_grouped_{kind}_gemm_{layout}_contiguous')(fp8_pair(M, K), (b, sfb), d,
                                                                                 layout_rows)
            return d
        return call

    def masked(kind):
        def call():
            d, masked_m = meta(G, M, N), meta(G, dtype=I32)
            if kind == 'bf16':
                deep_gemm.m_grouped_bf16_gemm_nt_masked(meta(G, M, K), meta(G, N, K), d, masked_m, M)
            else:
                getattr(deep_gemm, f'm_grouped_{kind}_gemm_nt_masked')(fp8_pair(M, K, groups=G),
                                                                       fp8_pair(N, K, block_rows=True, groups=G),
                                                                       d, masked_m, M)
            return d
        return call

    ks = [128, 256]

    def k_grouped_bf16():
        d = torch.zeros(G, M, N, dtype=FP32, device='meta')
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(meta(sum(ks), M), meta(sum(ks), N), d, ks, meta(G, dtype=I32),
                                                    c=d)
        return d

    def k_grouped_fp8():
        a = (meta(sum(ks) * M, dtype=FP8), meta(M, sum(ks) // 128, dtype=FP32))
        b = (meta(sum(ks) * N, dtype=FP8), meta(N, sum(ks) // 128, dtype=FP32))
        d = meta(G, M, N, dtype=FP32)
        deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, meta(G, dtype=I32))
        return d

    def einsum():
        d = meta(M, G, N)
        deep_gemm.einsum('bhr,hdr->bhd', meta(M, G, K), meta(G, N, K), d)
        return d

    def fp8_einsum():
        a = (meta(M, G, K, dtype=FP8), meta(M, G, K // 128, dtype=FP32))
        b = (meta(G, N, K, dtype=FP8), meta(G, N // 128, K // 128, dtype=FP32))
        d = meta(M, G, N)
        deep_gemm.fp8_einsum('bhr,hdr->bhd', a, b, d)
        return d

    def skip_head_mid():
        d = meta(M, N + N // 256 * 64)
        deep_gemm.fp8_gemm_nt_skip_head_mid(fp8_pair(M, K), fp8_pair(N, K, block_rows=True), d, (128, 64, 128))
        return d

    out += [('fp8_gemm_nt 1D1D c=d', fp8_1d1d, 'fp8_gemm_nt'),
            ('fp8_gemm_nt_skip_head_mid', skip_head_mid, 'fp8_gemm_nt_skip_head_mid'),
            ('m_grouped_bf16_gemm_nt_contiguous', m_grouped('bf16', 'nt'), 'm_grouped_bf16_gemm_nt_contiguous'),
            ('m_grouped_bf16_gemm_nn_contiguous', m_grouped('bf16', 'nn'), 'm_grouped_bf16_gemm_nn_contiguous'),
            ('m_grouped_fp8_gemm_nt_contiguous', m_grouped('fp8', 'nt'), 'm_grouped_fp8_gemm_nt_contiguous'),
            ('m_grouped_fp8_gemm_nn_contiguous', m_grouped('fp8', 'nn'), 'm_grouped_fp8_gemm_nn_contiguous'),
            ('m_grouped_fp8_fp4_gemm_nt_contiguous', m_grouped('fp8_fp4', 'nt'), 'm_grouped_fp8_gemm_nt_contiguous'),
            ('m_grouped_bf16_gemm_nt_masked', masked('bf16'), 'm_grouped_bf16_gemm_nt_masked'),
            ('m_grouped_fp8_gemm_nt_masked', masked('fp8'), 'm_grouped_fp8_gemm_nt_masked'),
            ('m_grouped_fp8_fp4_gemm_nt_masked', masked('fp8_fp4'), 'm_grouped_fp8_gemm_nt_masked'),
            ('k_grouped_bf16_gemm_tn_contiguous', k_grouped_bf16, 'k_grouped_bf16_gemm_tn_contiguous'),
            ('k_grouped_fp8_gemm_nt_contiguous', k_grouped_fp8, 'k_grouped_fp8_gemm_nt_contiguous'),
            ('einsum', einsum, 'einsum'),
            ('fp8_einsum', fp8_einsum, 'fp8_einsum')]
    return out


CALLS = calls()


def compile_and_run(fn):
    """fn under torch.compile(fullgraph=True) through AOT autograd (functionalisation, no inductor): its result and
    the deep_gemm ops of the Dynamo graph."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        from torch._dynamo.backends.common import aot_autograd
        return aot_autograd(fw_compiler=lambda g, _: g)(gm, example_inputs)

    torch._dynamo.reset()
    result = torch.compile(fn, fullgraph=True, backend=backend)()
    ops = [str(node.target) for gm in graphs for node in gm.graph.nodes if node.op == 'call_function'
           and str(node.target).startswith('deep_gemm.')]
    return result, ops


@pytest.mark.parametrize('label,fn,op', CALLS, ids=[c[0] for c in CALLS])
def test_every_gemm_traces_into_its_op_with_no_graph_break(label, fn, op):
    result, ops = compile_and_run(fn)
    assert ops == [f'deep_gemm.{op}'], ops
    assert result.device.type == 'meta'


def test_every_exported_gemm_has_an_op():
    from deep_gemm import _torch_ops
    deep_gemm.register_torch_ops()
    traced = {c[2] for c in CALLS}
    assert set(_torch_ops._ops) == traced
    for name in traced:
        assert hasattr(torch.ops.deep_gemm, name)


def test_c_given_as_d_becomes_accumulate_and_other_c_stays_an_input():
    def accumulate():
        a, b = dense_operands('nt')
        d = torch.zeros(M, N, dtype=FP32, device='meta')
        deep_gemm.bf16_gemm_nt(a, b, d, c=d)
        return d

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(accumulate, fullgraph=True, backend=backend)()
    (node, ) = [n for n in graphs[0].graph.nodes if str(n.target) == 'deep_gemm.bf16_gemm_nt']
    # (a, b, d, c, accumulate, compiled_dims)
    assert node.args[3] is None and node.args[4] is True and node.args[5] == 'nk'


@pytest.mark.parametrize('call,message', [
    (lambda: deep_gemm.bf16_gemm_nt(meta(M, K), meta(N, K + 128), meta(M, N)), 'b: expected K = 384'),
    (lambda: deep_gemm.bf16_gemm_nt(meta(M, K), meta(N, K), meta(M, N + 8)), 'd: expected shape (64, 256)'),
    (lambda: deep_gemm.bf16_gemm_nt(meta(M, K, dtype=FP32), meta(N, K), meta(M, N)), 'a: expected bfloat16'),
    (lambda: deep_gemm.fp8_gemm_nt(fp8_pair(M, K), (meta(N, K, dtype=FP8), meta(N, K // 128, dtype=FP32)),
                                   meta(M, N)), 'b[1]: expected 6 scale factors'),
    (lambda: deep_gemm.fp8_gemm_nt_skip_head_mid(fp8_pair(M, K), fp8_pair(N, K, block_rows=True), meta(M, N),
                                                 (128, 64, 128)), 'd: expected shape (64, 320)'),
    (lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(meta(M, K), meta(G, N, K), meta(M, N), meta(M)),
     'grouped_layout: expected int32'),
    (lambda: deep_gemm.m_grouped_bf16_gemm_nt_masked(meta(G, M, K), meta(G + 1, N, K), meta(G, M, N),
                                                     meta(G, dtype=I32), M), 'b: expected [G, N, K] with G = 2'),
    (lambda: deep_gemm.k_grouped_bf16_gemm_tn_contiguous(meta(384, M), meta(384, N), meta(G, M, N, dtype=FP32),
                                                         [128], meta(G, dtype=I32)), 'ks_cpu: expected 2 sizes'),
    (lambda: deep_gemm.einsum('bhr,hdr->bhd', meta(M, G, K), meta(G, N, K + 1), meta(M, G, N)),
     "b: size 385 of 'r' differs"),
])
def test_fake_implementations_name_the_wrong_argument_under_compile(call, message):
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(call, fullgraph=True, backend='aot_eager')()
    assert message in str(info.value)


def test_the_op_called_directly_runs_the_fake_check_on_meta_tensors():
    deep_gemm.register_torch_ops()
    a, b, d = meta(M, K), meta(N, K), meta(M, N)
    torch.ops.deep_gemm.bf16_gemm_nt(a, b, d, None, False, 'nk')
    with pytest.raises(ValueError, match='d: expected bfloat16 or float32'):
        torch.ops.deep_gemm.bf16_gemm_nt(a, b, meta(M, N, dtype=I32), None, False, 'nk')


def run_python(code):
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)


def test_ops_register_at_import_when_torch_came_first():
    out = run_python('import torch, deep_gemm; print(hasattr(torch.ops.deep_gemm, "fp8_gemm_nt"))')
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['True']


def test_ops_register_on_the_first_checked_call_or_on_request_when_deep_gemm_came_first():
    # The call reaches the C++ checks (run_checked) with stand-in tensors and stops there: N = 100 gives d rows of
    # 200 bytes, which TMA cannot describe. No GPU work either way.
    code = '\n'.join([
        'import sys',
        f'sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})',
        'import deep_gemm',
        'from conftest import FakeTensor',
        'from deep_gemm import _torch_ops',
        'print("torch" in sys.modules, bool(_torch_ops._ops))',
        'import torch',
        'print(bool(_torch_ops._ops))',
        'try:',
        '    deep_gemm.bf16_gemm_nt(FakeTensor((64, 128)), FakeTensor((100, 128)), FakeTensor((64, 100)))',
        'except ValueError as e:',
        '    print(str(e).split(":")[0])',
        'print(bool(_torch_ops._ops), _torch_ops.compiling is torch.compiler.is_compiling)',
        'deep_gemm.register_torch_ops()',
        'print(len(_torch_ops._ops))',
    ])
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split('\n')
    assert lines[0] == 'False False'  # import deep_gemm imports no torch and registers nothing
    assert lines[1] == 'False'  # nor does importing torch afterwards
    assert lines[2] == 'n'  # the C++ checks ran (and named N of d)
    assert lines[3] == 'True True'  # the checked call registered the ops
    assert int(lines[4]) == 23  # register_torch_ops() again: still one op per GEMM


def test_a_dynamic_m_compiles_once():
    # The fake implementations compare symbolic sizes without turning them into ints: one graph serves every M.
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        from torch._dynamo.backends.common import aot_autograd
        return aot_autograd(fw_compiler=lambda g, _: g)(gm, example_inputs)

    def gemm(a, b):
        d = torch.empty(a.shape[0], b.shape[0], dtype=BF16, device=a.device)
        deep_gemm.bf16_gemm_nt(a, b, d)
        return d

    torch._dynamo.reset()
    compiled = torch.compile(gemm, fullgraph=True, backend=backend, dynamic=True)
    shapes = [tuple(compiled(meta(m, K), meta(N, K)).shape) for m in (M, 3 * M, 5 * M)]
    assert shapes == [(M, N), (3 * M, N), (5 * M, N)]
    assert len(graphs) == 1, f'{len(graphs)} graphs: M was specialised'
