"""CUDA-graph capture + replay of the masked grouped GEMM, and two processes warming one JIT cache."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def test_masked_grouped_gemm_in_a_cuda_graph():
    g, m_max, n, k = 8, 128, 2048, 7168
    a = torch.randn(g, m_max, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(g, n, k, device='cuda', dtype=torch.bfloat16)
    d = torch.zeros(g, m_max, n, device='cuda', dtype=torch.bfloat16)
    masked = torch.full((g, ), 64, dtype=torch.int32, device='cuda')
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked, 64)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked, 64)
    for counts in ([5, 0, 128, 64, 1, 127, 33, 100], [128] * 8):
        masked.copy_(torch.tensor(counts, dtype=torch.int32))
        a.normal_()
        graph.replay()
        torch.cuda.synchronize()
        for i, m in enumerate(counts):
            if m:
                assert float(calc_diff(d[i, :m].float(), a[i, :m].float() @ b[i].float().T)) < 1e-5


def test_two_processes_warm_the_same_cache(tmp_path):
    # d [256, 768] = a [256, 1024] @ b [768, 1024].T
    code = ('import torch, deep_gemm; a = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16); '
            'b = torch.randn(768, 1024, device="cuda", dtype=torch.bfloat16); '
            'd = torch.empty(256, 768, device="cuda", dtype=torch.bfloat16); '
            'deep_gemm.bf16_gemm_nt(a, b, d); torch.cuda.synchronize(); '
            'ref = a.float() @ b.float().T; '
            'print(float(deep_gemm.testing.calc_diff(d.float(), ref)))')
    env = {**os.environ, 'DG_JIT_CACHE_DIR': str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, '-c', code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        print('child calc_diff', out.split()[-1])
        assert float(out.split()[-1]) < 1e-5
    assert any(tmp_path.iterdir())
    # A third process finds everything compiled: with compiling disabled it still runs.
    out = subprocess.run([sys.executable, '-c', code], env={**env, 'DG_JIT_DISABLE': '1'}, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[-1]) < 1e-5


def _chain(xs, ws):
    for i, w in enumerate(ws):
        deep_gemm.bf16_gemm_nt(xs[i], w, xs[i + 1])


@pytest.mark.parametrize('in_graph', [False, True])
def test_pdl_chain_reads_each_finished_output(in_graph):
    # Eight GEMMs, each reading the one before's output. With PDL the next kernel may start before the one before
    # has finished and flushed its writes; its wait keeps it from reading a half-written input.
    torch.manual_seed(7)
    m, n = 64, 2048
    ws = [torch.randn(n, n, device='cuda', dtype=torch.bfloat16) / n**0.5 for _ in range(8)]
    xs = [torch.randn(m, n, device='cuda', dtype=torch.bfloat16)] + [torch.empty(m, n, device='cuda',
                                                                           dtype=torch.bfloat16) for _ in ws]
    assert deep_gemm.get_pdl() is False
    deep_gemm.set_pdl(True)
    try:
        _chain(xs, ws)  # compiles outside any capture
        if in_graph:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                _chain(xs, ws)
            for x in xs[1:]:
                x.fill_(float('nan'))
            xs[0].normal_()
            graph.replay()
        torch.cuda.synchronize()
    finally:
        deep_gemm.set_pdl(False)
    for i, w in enumerate(ws):
        assert float(calc_diff(xs[i + 1].float(), xs[i].float() @ w.float().T)) < 1e-5, f'layer {i}'


@pytest.mark.parametrize('scheme', ['split-k', 'stream-k'])
def test_split_k_gemm_warmed_up_elsewhere_captures(scheme, monkeypatch):
    # Warm-up on the default stream, capture on torch's own capture stream: the split-K workspace of that stream
    # does not exist yet and is allocated during the capture.
    monkeypatch.setenv('TILEGEMM_GEMM_SCHEME', scheme)
    deep_gemm._C.reload_env()
    try:
        m, n, k = 64, 576, 7168
        a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
        d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
        deep_gemm.bf16_gemm_nt(a, b, d)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            deep_gemm.bf16_gemm_nt(a, b, d)
        for _ in range(2):
            a.normal_()
            d.fill_(float('nan'))
            graph.replay()
            torch.cuda.synchronize()
            assert float(calc_diff(d.float(), a.float() @ b.float().T)) < 1e-5
    finally:
        monkeypatch.delenv('TILEGEMM_GEMM_SCHEME')
        deep_gemm._C.reload_env()


def test_cublaslt_first_call_inside_a_capture():
    # The cuBLASLt handle and workspace are per stream: the first call on the capture stream creates them.
    a = torch.randn(96, 256, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(160, 256, device='cuda', dtype=torch.bfloat16)
    d = torch.empty(96, 160, device='cuda', dtype=torch.bfloat16)
    stream = torch.cuda.Stream()  # a stream no cuBLASLt call has used yet
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        deep_gemm.cublaslt_gemm_nt(a, b, d)
    a.normal_()
    d.fill_(float('nan'))
    graph.replay()
    torch.cuda.synchronize()
    assert float(calc_diff(d.float(), a.float() @ b.float().T)) < 1e-5
