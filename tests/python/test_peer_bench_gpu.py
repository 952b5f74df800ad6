"""The peer benchmark on a GPU: one case of every suite runs end to end (checks, event and kernel timers, report
files), and the check catches a library that writes nothing or ignores its scales. With DEEPGEMM_PEER=/path/to/dg
(a built DeepGEMM) the runs load it beside ours and compare; without it they run --no-peer."""
import json
import os
from types import SimpleNamespace

import pytest

torch = pytest.importorskip('torch')

import deep_gemm  # noqa: E402
from deep_gemm.bench import cli, gemm_cases, hc_suite, layout_suite, measure, suites, timing  # noqa: E402
from deep_gemm.bench.inputs import Quantiser  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='needs torch with CUDA and a GPU')

PEER = os.environ.get('DEEPGEMM_PEER')
FAST = ['--rep-ms', '3', '--warmup-ms', '1', '--rounds', '2', '--host-calls', '5']


def run_bench(tmp_path, *args):
    rc = cli.main([*(['--deepgemm', PEER] if PEER else ['--no-peer']), *FAST, '--out', str(tmp_path), *args])
    return rc, json.loads((tmp_path / 'bench.json').read_text())


@pytest.mark.parametrize('suite, shape', [('deepseek', '64x2112x7168'), ('decode', '8x4096x7168'),
                                          ('ragged', '129x7168x2048'), ('grouped', '8x4096x7168x2048'),
                                          ('masked', '6x20x4096x2048')])
def test_a_gemm_case_of_each_suite_is_checked_and_timed(tmp_path, suite, shape):
    rc, report = run_bench(tmp_path, '--suite', suite, '--shapes', shape, '--kernel-timer')
    assert rc == 0, (tmp_path / 'bench.md').read_text()
    assert [s['dtype'] for s in report['sections']] == ['bf16', 'fp8']
    for section in report['sections']:
        [row] = section['rows']
        results = row['results']
        ours = results['ours']
        assert ours['status'] == 'ok' and ours['diff'] is not None, ours
        assert ours['us'] > 0 and len(ours['rounds_us']) == 2 and 0 < ours['kernel_us'] <= ours['span_us'] * 1.01
        if suite in ('deepseek', 'decode', 'ragged'):
            assert results['cublas']['status'] in ('ok', 'unsupported'), results['cublas']
            assert results['cublas']['status'] == 'unsupported' or row['ratio_vs_cublas'] > 0
        else:
            assert 'cublas' not in results
        if PEER:
            assert results['deepgemm']['status'] == 'ok', results['deepgemm']
            assert row['ratio_vs_deepgemm'] > 0
    assert report['environment']['gpu'] == torch.cuda.get_device_name()


def test_host_suite_runs_every_family_of_ours(tmp_path):
    rc, report = run_bench(tmp_path, '--suite', 'host')
    rows = [r for s in report['sections'] for r in s['rows']]
    assert len(rows) == len(suites.SUITES['host'])
    for row in rows:
        ours = row['results']['ours']
        assert ours['status'] == 'ok', (row['shape'], ours)
        assert 0 < ours['host_us'] and 0 < ours['wall_us']
    assert rc == 0


def test_layout_suite_reports_bandwidth_against_a_copy(tmp_path):
    rc, report = run_bench(tmp_path, '--suite', 'layout', '--shapes', '4096x7168,8x4096x4096')
    [section] = report['sections']
    assert rc == 0
    for row in section['rows']:
        assert row['copy_gbps'] > 100, row
        ours = row['results']['ours']
        if ours['status'] == 'absent':
            continue
        assert ours['status'] == 'ok', (row['shape'], ours)
        assert row['ours_gbps'] > 0 and row['ours_vs_copy'] > 0


def test_hc_suite_checks_every_call_and_reports_gb_per_s(tmp_path):
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    rc, report = run_bench(tmp_path, '--suite', 'hc', '--shapes', '13x24x28672,8192x24x7168')
    [section] = report['sections']
    assert rc == 0, (tmp_path / 'bench.md').read_text()
    assert torch.backends.cuda.matmul.allow_tf32 == tf32_before
    assert [r['shape'] for r in section['rows']] == ['13x24x28672', '8192x24x7168']
    for row in section['rows']:
        ours = row['results']['ours']
        assert ours['status'] == 'ok' and ours['diff'] < hc_suite.TOLERANCE, (row['shape'], ours)
        assert row['ours_gbps'] > 0
        if PEER:
            for key in ('deepgemm', hc_suite.SPLIT_KEY):
                assert row['results'][key]['status'] == 'ok', (row['shape'], key, row['results'][key])
            assert row['deepgemm_best'] in ('deepgemm', hc_suite.SPLIT_KEY) and row['ratio_vs_deepgemm_best'] > 0
            assert row['deepgemm_split16_gbps'] > 0


def test_the_hc_check_catches_a_call_that_writes_nothing():
    lazy = SimpleNamespace(tf32_hc_prenorm_gemm=lambda a, b, d, s, num_splits=None: None)
    with hc_suite.tf32_matmul(torch):
        problem = hc_suite.problem(context({'ours': deep_gemm, 'deepgemm': lazy}), suites.HcPrenorm(137, 24, 7168))
        assert measure.check(torch, problem, 'ours')['status'] == 'ok'
        for key in ('deepgemm', hc_suite.SPLIT_KEY):
            assert measure.check(torch, problem, key)['status'] == 'mismatch'


def context(libs):
    return gemm_cases.Context(torch, libs, Quantiser(deep_gemm, 'ours'), cublas=False)


def test_the_check_catches_a_library_that_writes_nothing():
    right = SimpleNamespace(bf16_gemm_nt=lambda a, b, d: torch.mm(a, b.t(), out=d))
    lazy = SimpleNamespace(bf16_gemm_nt=lambda a, b, d: None)
    problem = gemm_cases.dense(context({'ours': right, 'deepgemm': lazy}), suites.Dense(64, 256, 512), 'bf16')
    assert measure.check(torch, problem, 'ours')['status'] == 'ok'
    assert measure.check(torch, problem, 'deepgemm')['status'] == 'mismatch'


def test_the_check_catches_a_library_that_ignores_the_scales():
    def unscaled(a, b, d, **kwargs):
        d.copy_(a[0].float() @ b[0].float().t())
    libs = {'ours': deep_gemm, 'deepgemm': SimpleNamespace(fp8_gemm_nt=unscaled)}
    problem = gemm_cases.dense(context(libs), suites.Dense(128, 256, 512), 'fp8')
    assert measure.check(torch, problem, 'ours')['status'] == 'ok'
    result = measure.check(torch, problem, 'deepgemm')
    assert result['status'] == 'mismatch' and result['diff'] > 1e-3


def test_the_layout_check_catches_a_wrong_layout():
    case = suites.Layout('get_mn_major_tma_aligned_tensor', 4096, 7168)
    libs = {'ours': SimpleNamespace(get_mn_major_tma_aligned_tensor=lambda sf: sf.clone())}  # K-major: wrong
    problem = layout_suite.problem(context(libs), case)
    result = measure.check(torch, problem, 'ours')
    assert result['status'] == 'mismatch' and 'expected MN-major' in result['message']
    assert measure.check(torch, problem, 'copy')['status'] == 'ok'


def test_the_kernel_timer_sees_only_the_calls_kernels():
    a = torch.randn((4096, 4096), device='cuda', dtype=torch.bfloat16)
    d = torch.empty_like(a)
    flush = timing.Flusher(torch)
    kernel_us, span_us = timing.time_kernels(torch, lambda: torch.mm(a, a, out=d), flush, calls=5)
    event_us, _ = timing.time_events(torch, lambda: torch.mm(a, a, out=d), flush, 1, 5)
    flush_us, _ = timing.time_events(torch, flush, lambda: None, 1, 5)
    assert 0 < kernel_us <= span_us * 1.01
    # the flush before each call (tens of microseconds for 256 MB) must not be counted as the call's
    assert kernel_us < event_us + flush_us * 0.5, (kernel_us, event_us, flush_us)
