"""The mqa and paged_mqa suites on a GPU: the smallest case of each runs end to end through `python -m
deep_gemm.bench` (inputs, reference, checks, timers, report files). With DEEPGEMM_PEER=/path/to/dg (a built
DeepGEMM) DeepGEMM's calls run beside ours on the same tensors; without it the runs are --no-peer."""
import json
import os

import pytest

torch = pytest.importorskip('torch')

import deep_gemm  # noqa: E402
from deep_gemm.bench import cli  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='needs torch with CUDA and a GPU')

PEER = os.environ.get('DEEPGEMM_PEER')
FAST = ['--rep-ms', '3', '--warmup-ms', '1', '--rounds', '2']


@pytest.mark.parametrize('suite, shape', [('mqa', '2048x8192x32x128-cp'), ('mqa', '2048x8192x64x128'),
                                          ('paged_mqa', '256x1x32x128 kv8192'), ('paged_mqa', '256x2x64x128 kv8192')])
def test_a_case_of_each_suite_is_checked_and_timed(tmp_path, suite, shape):
    rc = cli.main([*(['--deepgemm', PEER] if PEER else ['--no-peer']), *FAST, '--out', str(tmp_path),
                   '--suite', suite, '--shapes', shape])
    report = json.loads((tmp_path / 'bench.json').read_text())
    [section] = report['sections']
    [row] = section['rows']
    assert rc == 0, (tmp_path / 'bench.md').read_text()
    ours = row['results']['ours']
    assert ours['status'] == 'ok' and ours['diff'] is not None and ours['diff'] < 1e-3 and ours['us'] > 0, ours
    if suite == 'mqa':
        assert row['ours_tflops'] > 0
    else:
        assert row['results']['copy']['status'] == 'ok' and 0 < row['ours_vs_copy']
    if PEER:
        assert row['results']['deepgemm']['status'] == 'ok', row['results']['deepgemm']
        assert row['ratio_vs_deepgemm'] > 0
