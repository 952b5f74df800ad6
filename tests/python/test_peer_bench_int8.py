"""The peer benchmark's int8 suite (deep_gemm.int8.gemm_nt against cuBLASLt's int8 GEMM) on the CPU: its shapes and
options, the peer's limits, and the report's table and exit status."""
import pytest

from deep_gemm.bench import cli, report, suites

torch = pytest.importorskip('torch', reason='the suite builds its inputs with torch')


def test_int8_suite_covers_the_deepseek_shapes_from_decode_to_prefill():
    cases = suites.SUITES['int8']
    assert {c.m for c in cases} == {1, 16, 64, 128, 4096}
    assert {(c.n, c.k) for c in cases} == set(suites.DEEPSEEK_NK)
    assert len({c.name for c in cases}) == len(cases) == 5 * len(suites.DEEPSEEK_NK)
    assert 'int8' in suites.DTYPE_FREE and 'int8' in report.FAILING_SUITES
    [(suite, dtype, selected)] = cli.plan(cli.parse_args(['--no-peer', '--suite', 'int8', '--shapes', '1x*']))
    assert (suite, dtype) == ('int8', None)
    assert [c.name for c in selected] == [f'1x{n}x{k}' for n, k in suites.DEEPSEEK_NK]
    assert 'int8 (deep_gemm.int8.gemm_nt' in cli.EPILOG


def test_cublaslt_entry_states_its_limits():
    from deep_gemm.bench import int8_suite
    a, b = torch.zeros(16, 64, dtype=torch.int8), torch.zeros(32, 64, dtype=torch.int8)
    small = int8_suite._cublaslt_entry(torch, a, b, None, None)
    assert small.status == 'unsupported' and 'M > 16' in small.message


def test_a_mismatch_of_ours_fails_the_run():
    row = {'shape': '64x2112x7168', 'flops': 2 * 64 * 2112 * 7168, 'bytes': 1, 'params': {'m': 64, 'n': 2112, 'k': 7168},
           'results': {'ours': {'status': 'mismatch', 'message': 'diff 1', 'label': None, 'diff': 1.0, 'us': 5.0}},
           'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}
    rep = {'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2, 'round_combine': 'mean'},
           'sections': [report.section('int8', None, [row])]}
    assert report.exit_status(rep) == 1
    assert '64x2112x7168' in report.markdown(rep)
