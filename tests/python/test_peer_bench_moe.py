"""The peer benchmark's moe suite (deep_gemm.moe.fp8_moe against its unfused steps) on the CPU: its cases, the
rates it derives, and the report's table and exit status."""
import pytest

from deep_gemm.bench import cli, report, suites

torch = pytest.importorskip('torch', reason='the suite builds its inputs with torch')


def test_moe_suite_covers_deepseek_v3_from_decode_to_prefill():
    cases = suites.SUITES['moe']
    assert [c.tokens for c in cases] == [1, 8, 64, 128, 256, 512, 1024, 4096, 8192]
    assert {(c.experts, c.topk, c.hidden, c.inter) for c in cases} == {(256, 8, 7168, 2048)}
    assert cases[0].flops == 2 * 8 * 3 * 2048 * 7168
    assert 'moe' in suites.DTYPE_FREE and 'moe' in report.FAILING_SUITES
    [(suite, dtype, selected)] = cli.plan(cli.parse_args(['--no-peer', '--suite', 'moe', '--shapes', '512x*']))
    assert (suite, dtype, [c.tokens for c in selected]) == ('moe', None, [512])
    assert 'moe (deep_gemm.moe.fp8_moe' in cli.EPILOG


def _row(ours_status='ok'):
    results = {'ours': {'status': ours_status, 'us': 100.0, 'message': None, 'label': None, 'diff': 1e-4},
               'ours_unfused': {'status': 'ok', 'us': 150.0}, 'deepgemm': {'status': 'ok', 'us': 160.0},
               'copy': {'status': 'ok', 'us': 250.0}}
    params = {'tokens': 64, 'experts': 256, 'topk': 8, 'hidden': 7168, 'inter': 2048, 'active_experts': 222,
              'weight_bytes': 10**9, 'copy_bytes': 10**9}
    return {'shape': '64x7168 top8/256', 'flops': 1, 'bytes': 1, 'params': params, 'results': results,
            'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}


def test_rates_and_table():
    from deep_gemm.bench import moe_suite
    row = moe_suite.add_rates(_row())
    assert row['unfused_vs_ours'] == pytest.approx(1.5) and row['ratio_vs_deepgemm'] == pytest.approx(1.6)
    assert row['copy_gbps'] == pytest.approx(4000.0)  # 1 GB moved in 250 µs
    assert row['read_floor_us'] == pytest.approx(250.0) and row['floor_vs_ours'] == pytest.approx(2.5)
    rep = {'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2, 'round_combine': 'mean'},
           'sections': [report.section('moe', None, [row])]}
    text = report.markdown(rep)
    assert '| 64 | top-8 of 256 | 222 | 100.0 | 150.0 | 1.50 | 160.0 | 1.60 | 250.0 | 2.50 |' in text
    assert 'our unfused / ours 1.500 over 1 rows' in text
    assert report.exit_status(rep) == 0


def test_a_mismatch_of_ours_fails_the_run():
    from deep_gemm.bench import moe_suite
    rep = {'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2, 'round_combine': 'mean'},
           'sections': [report.section('moe', None, [moe_suite.add_rates(_row('mismatch'))])]}
    assert report.exit_status(rep) == 1
