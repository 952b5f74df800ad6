"""scripts/upstream-tests: discovery with ast (on DeepGEMM's real test files when the peer is checked out beside
the repository, and on a fixture), one process per test function called as `__main__` calls it, timeouts,
the table / JSON / log it writes, skips and exit codes."""
import ast
import importlib.machinery
import importlib.util
import json
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'upstream-tests'
PEER_TESTS = ROOT.parent / 'shared' / 'peers' / 'deepgemm-2.6.1' / 'tests'


def load_script():
    loader = importlib.machinery.SourceFileLoader('upstream_tests', str(SCRIPT))
    spec = importlib.util.spec_from_loader('upstream_tests', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


upstream = load_script()

ALPHA = '''
import random
from generators import VALUE


def test_pass():
    assert VALUE == 42


def test_seeded():
    # __main__ seeds random before its first call: the child must replay that
    assert random.random() == random.Random(7).random(), 'the __main__ prelude did not run'


def test_kwargs(flag=False):
    assert flag, '__main__ passes flag=True'


def test_fail():
    raise AssertionError('m=64, diff=0.5 | too big')


def test_sleep():
    import time
    time.sleep(60)


def test_not_called():
    pass


if __name__ == '__main__':
    random.seed(7)
    print('prelude ran')
    test_pass()
    test_seeded()
    if VALUE > 0:
        test_kwargs(flag=True)
    test_fail()
    test_sleep()
'''


@pytest.fixture
def tests_dir(tmp_path):
    d = tmp_path / 'tests'
    d.mkdir()
    (d / 'generators.py').write_text('VALUE = 42\n')
    (d / 'test_alpha.py').write_text(ALPHA)
    (d / 'test_broken_import.py').write_text('from generators import MISSING_NAME\n\n\ndef test_x():\n    pass\n')
    (d / 'test_whole.py').write_text('print("whole file ran")\n')
    (d / 'test_whole_missing.py').write_text('import no_such_module_for_upstream_tests\n')
    (d / 'test_skipme.py').write_text('def test_y():\n    raise AssertionError("should have been skipped")\n')
    return d


def run_script(*args, timeout=60):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def test_discovery_follows_the_main_block(tests_dir):
    runs = {(r['file'], r['function']): r for r in upstream.discover(str(tests_dir))}
    alpha = [f for (file, f) in runs if file == 'test_alpha.py']
    assert alpha == ['test_pass', 'test_seeded', 'test_kwargs', 'test_fail', 'test_sleep', 'test_not_called']
    assert runs[('test_alpha.py', 'test_kwargs')]['call'] == 'test_kwargs(flag=True)'
    assert runs[('test_alpha.py', 'test_not_called')]['call'] == 'test_not_called()'
    assert runs[('test_alpha.py', 'test_pass')]['prelude'] == "random.seed(7)\nprint('prelude ran')"
    assert runs[('test_whole.py', '(whole file)')]['whole']
    assert not runs[('test_broken_import.py', 'test_x')]['whole']
    assert 'generators.py' not in {file for file, _ in runs}


def test_a_full_run_writes_table_json_and_log(tests_dir, tmp_path):
    out = tmp_path / 'out'
    begin = time.monotonic()
    proc = run_script(tests_dir, '--out', out, '--timeout', '2', '--skip', 'test_skipme.py=not exported here')
    assert time.monotonic() - begin < 30
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((out / 'results.json').read_text())
    results = {(r['file'], r['function']): r['result'] for r in report['results']}
    assert results[('test_alpha.py', 'test_pass')] == 'passed'
    assert results[('test_alpha.py', 'test_seeded')] == 'passed'
    assert results[('test_alpha.py', 'test_kwargs')] == 'passed'
    assert results[('test_alpha.py', 'test_fail')] == 'failed: AssertionError: m=64, diff=0.5 | too big'
    assert results[('test_alpha.py', 'test_sleep')] == 'timeout'
    assert results[('test_broken_import.py', 'test_x')] == 'import error: MISSING_NAME'
    assert results[('test_whole.py', '(whole file)')] == 'passed'
    assert results[('test_whole_missing.py', '(whole file)')] == 'import error: no_such_module_for_upstream_tests'
    assert results[('test_skipme.py', 'test_y')] == 'skipped: not exported here'
    assert report['summary'] == {'passed': 5, 'failed': 1, 'timeout': 1, 'import-error': 2, 'skipped': 1}
    assert report['finished'] is True
    sleep = next(r for r in report['results'] if r['function'] == 'test_sleep')
    assert 2 <= sleep['seconds'] < 10
    table = (out / 'results.md').read_text()
    assert '| file | function | result | seconds |' in table
    assert '| test_alpha.py | test_fail | failed: AssertionError: m=64, diff=0.5 \\| too big |' in table
    assert '| test_skipme.py | test_y | skipped: not exported here |  |' in table
    log = (out / 'log.txt').read_text()
    assert 'prelude ran' in log and 'whole file ran' in log and 'Traceback' in log


def test_jobs_run_tests_at_once_and_keep_the_table_in_discovery_order(tests_dir, tmp_path):
    # test_sleep (60 s) under a 3 s timeout beside the others: with 4 jobs the whole run takes about the timeout.
    out = tmp_path / 'out'
    begin = time.monotonic()
    proc = run_script(tests_dir, '--out', out, '--timeout', '3', '--jobs', '4', '--filter', 'test_alpha.py')
    assert time.monotonic() - begin < 3 + 15
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((out / 'results.json').read_text())
    serial = json.loads(run_script(tests_dir, '--list', '--filter', 'test_alpha.py').stdout)
    assert [r['function'] for r in report['results']] == [r['function'] for r in serial]
    results = {r['function']: r['result'] for r in report['results']}
    assert results['test_pass'] == 'passed' and results['test_sleep'] == 'timeout'
    assert results['test_fail'].startswith('failed: AssertionError')
    log = (out / 'log.txt').read_text()
    assert log.count('===== [') == 2 * len(serial)  # each run's output whole, between its two markers


ATTENTION = '''
import os, time


def span(name):
    begin = time.time()
    time.sleep(1.0)
    with open(os.environ['SPANS'], 'a') as f:
        f.write(f'{name} {begin} {time.time()}\\n')


def test_gemm_skip_head_mid():
    span('skip_head_mid')


def test_mqa_logits():
    span('mqa')


def test_paged_mqa_logits():
    span('paged')


if __name__ == '__main__':
    test_gemm_skip_head_mid()
    test_mqa_logits()
    test_paged_mqa_logits()
'''


def test_memory_heavy_runs_run_alone(tmp_path, monkeypatch):
    # The MQA logits tests take about 40 GB each: under --jobs 3 they still run one at a time, after the others.
    d = tmp_path / 'tests'
    d.mkdir()
    (d / 'test_attention.py').write_text(ATTENTION)
    spans_file = tmp_path / 'spans.txt'
    monkeypatch.setenv('SPANS', str(spans_file))
    proc = run_script(d, '--out', tmp_path / 'out', '--jobs', '3')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spans = {name: (float(a), float(b)) for name, a, b in (line.split() for line in spans_file.read_text().splitlines())}
    assert sorted(spans) == ['mqa', 'paged', 'skip_head_mid']
    assert spans['skip_head_mid'][1] <= spans['mqa'][0] and spans['mqa'][1] <= spans['paged'][0], spans


def test_a_run_cut_off_keeps_the_table_of_what_finished(tests_dir, tmp_path):
    # test_pass reports, then test_sleep (60 s, under a 120 s timeout) is still running when the script is killed.
    out = tmp_path / 'out'
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(tests_dir), '--out', str(out), '--timeout', '120',
                             '--filter', 'test_alpha.py::test_pass,test_alpha.py::test_sleep'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (out / 'results.json').exists():
            time.sleep(0.1)
        assert (out / 'results.json').exists(), 'no report after the first run'
    finally:
        import os
        import signal
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    report = json.loads((out / 'results.json').read_text())
    assert report['finished'] is False
    assert [(r['function'], r['result']) for r in report['results']] == [('test_pass', 'passed')]
    assert 'not finished' in (out / 'results.md').read_text()


def test_exit_status_is_zero_when_every_selected_run_passes(tests_dir, tmp_path):
    proc = run_script(tests_dir, '--out', tmp_path / 'out', '--filter', 'test_alpha.py::test_pass,test_whole.py,'
                      'test_skipme.py', '--skip', 'test_skipme.py::*=not exported here')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / 'out' / 'results.json').read_text())
    assert [r['result'] for r in report['results']] == ['passed', 'skipped: not exported here', 'passed']


def test_only_skipped_runs_do_not_count_as_a_pass(tests_dir, tmp_path):
    proc = run_script(tests_dir, '--out', tmp_path / 'out', '--filter', 'test_skipme.py', '--skip',
                      'test_skipme.py=not here')
    assert proc.returncode == 1


@pytest.mark.parametrize('args, message', [
    (['--filter', 'nothing_like_this'], 'upstream-tests: filter: expected a pattern matching a test'),
    (['--skip', 'no-reason'], 'upstream-tests: skip: expected PATTERN=REASON'),
    (['--timeout', '0'], 'upstream-tests: timeout: expected seconds > 0, got 0.0'),
    (['--jobs', '0'], 'upstream-tests: jobs: expected an int >= 1, got 0'),
])
def test_bad_arguments_exit_2_naming_the_argument(tests_dir, tmp_path, args, message):
    proc = run_script(tests_dir, '--out', tmp_path / 'out', *args)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message), proc.stderr
    assert not (tmp_path / 'out').exists()


def test_no_output_folder_exits_2(tests_dir):
    proc = run_script(tests_dir)
    assert proc.returncode == 2 and proc.stderr.startswith('upstream-tests: out: expected a folder'), proc.stderr


def test_a_missing_tests_folder_exits_2(tmp_path):
    proc = run_script(tmp_path / 'absent', '--out', tmp_path / 'out')
    assert proc.returncode == 2 and proc.stderr.startswith('upstream-tests: tests_dir: expected a folder')


def test_classify_reads_markers_signals_and_plain_tracebacks():
    marker = upstream.MARKER
    assert upstream.classify(0, '', False) == ('passed', 'passed')
    assert upstream.classify(-9, 'x', True) == ('timeout', 'timeout')
    assert upstream.classify(1, f'Traceback\nValueError: a\n{marker} error: ValueError: a\n', False) == \
        ('failed', 'failed: ValueError: a')
    assert upstream.classify(3, f'{marker} import-error: torch\n', False) == ('import-error', 'import error: torch')
    assert upstream.classify(-11, 'last words\n', False) == ('failed', 'failed: killed by signal 11 after: last words')
    assert upstream.classify(1, "ImportError: cannot import name 'fp8_fp4_gemm_nt' from 'deep_gemm'\n", False) == \
        ('import-error', 'import error: fp8_fp4_gemm_nt')
    assert upstream.classify(2, '', False) == ('failed', 'failed: exit status 2')


def test_list_prints_the_plan_without_running(tests_dir):
    proc = run_script(tests_dir, '--list', '--filter', 'test_alpha.py::test_kwargs')
    assert proc.returncode == 0, proc.stderr
    assert [(r['function'], r['call'], r['skip']) for r in json.loads(proc.stdout)] == \
        [('test_kwargs', 'test_kwargs(flag=True)', None)]


@pytest.mark.skipif(not PEER_TESTS.is_dir(), reason='DeepGEMM 2.6.1 is not checked out beside the repository '
                    '(../shared/peers); the fixture tests above cover discovery')
def test_discovery_on_deepgemms_own_test_files():
    runs = upstream.discover(str(PEER_TESTS))
    by_file = {}
    for r in runs:
        by_file.setdefault(r['file'], []).append(r)
    assert [r['function'] for r in by_file['test_bf16.py']] == [
        'test_gemm', 'test_m_grouped_gemm_contiguous', 'test_m_grouped_gemm_masked', 'test_k_grouped_gemm_contiguous',
        'test_cublaslt_gemm']
    assert [r['function'] for r in by_file['test_fp8_fp4.py']] == [
        'test_gemm', 'test_m_grouped_gemm_contiguous', 'test_m_grouped_gemm_masked', 'test_k_grouped_gemm_contiguous']
    einsum = {r['function']: r for r in by_file['test_einsum.py']}
    assert einsum['test_fp8_bhr_hdr_bhd']['call'] == 'test_fp8_bhr_hdr_bhd()'
    assert einsum['test_bmk_bnk_mn']['prelude'].startswith('torch.manual_seed(0)\nrandom.seed(0)')
    layout = by_file['test_layout.py']
    assert {r['prelude'] for r in layout} == {'torch.manual_seed(1)\nrandom.seed(1)'}
    assert [(r['function'], r['whole']) for r in by_file['test_lazy_init.py']] == [('(whole file)', True)]
    skipped = {r['file'] for r in runs if upstream.skip_reason(r, upstream.DEFAULT_SKIPS)}
    assert skipped == {'test_mega_moe.py', 'test_legacy.py', 'test_sanitizer.py'}
    # The attention file runs whole (skip_head_mid and both MQA logits tests); so does the HC prenorm file.
    assert all(not upstream.skip_reason(r, upstream.DEFAULT_SKIPS) for r in by_file['test_attention.py'])
    assert all(not upstream.skip_reason(r, upstream.DEFAULT_SKIPS) for r in by_file['test_hyperconnection.py'])


def test_markdown_escapes_cells():
    text = upstream.markdown([{'file': 'a.py', 'function': 'f', 'result': 'failed: x | y\nz', 'seconds': 1.25}])
    assert text.splitlines()[-1] == '| a.py | f | failed: x \\| y z | 1.2 |'


@pytest.mark.skipif(not hasattr(sys, 'stdlib_module_names'), reason='needs Python 3.10 or later')
def test_script_imports_only_the_standard_library():
    # It runs under whatever interpreter holds the package under test, which may have nothing else installed.
    tree = ast.parse(SCRIPT.read_text())
    imported = {alias.name.split('.')[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names} | {node.module.split('.')[0] for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom)}
    assert 'ast' in imported and imported <= set(sys.stdlib_module_names), imported
