"""python -m deep_gemm.bench on the CPU: its suites, the ratio and geometric-mean arithmetic, interleaved rounds,
the kernel timer's trace parsing, loading a second deep_gemm beside ours, the report files, option errors, and
that it starts (--help) and exits 2 with a clear message without torch or a GPU."""
import json
import random
import subprocess
import sys
from types import SimpleNamespace

import pytest

import deep_gemm
from deep_gemm.bench import cli, measure, peer, report, stats, suites, timing
from deep_gemm.bench.layout_suite import layout_bytes


def bench(*args, env=None):
    return subprocess.run([sys.executable, '-m', 'deep_gemm.bench', *args], capture_output=True, text=True,
                          env=env, timeout=120)


# ---- suites -----------------------------------------------------------------------------------------------------

def test_dense_suites_are_the_deepseek_weights_at_their_m():
    nk = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
    assert [(c.m, c.n, c.k) for c in suites.SUITES['deepseek']] == [(m, n, k) for m in (64, 128, 4096) for n, k in nk]
    assert [(c.m, c.n, c.k) for c in suites.SUITES['decode']] == [(m, n, k) for m in (1, 8, 16, 32) for n, k in nk]
    assert [c.name for c in suites.SUITES['ragged']] == ['65x2112x7168', '129x7168x2048', '129x4096x7168',
                                                         '257x24576x1536', '2048x7168x2048']
    assert suites.SUITES['deepseek'][0].flops == 2 * 64 * 2112 * 7168


def test_grouped_and_masked_suites():
    assert [c.name for c in suites.SUITES['grouped']] == [
        '4x8192x4096x7168', '4x8192x7168x2048', '8x4096x4096x7168', '8x4096x7168x2048', '4x8192x6144x7168',
        '8x4096x7168x3072', '8x~1024x4096x7168', '8x~1024x7168x2048', '4x~8192x6144x7168', '8x~4096x7168x3072']
    assert suites.SUITES['grouped'][4].flops == 2 * 4 * 8192 * 6144 * 7168


def test_ragged_groups_are_drawn_once_per_name_and_meet_256_row_tiles_inside():
    ragged = [c for c in suites.SUITES['grouped'] if c.ragged]
    assert len(ragged) == 4
    for case in ragged:
        rows = case.group_rows()
        assert rows == case.group_rows() and len(rows) == case.groups
        assert all(int(case.m_per_group * 0.7) <= r <= int(case.m_per_group * 1.3) for r in rows)
        assert case.flops == 2 * sum(rows) * case.n * case.k
    # Some group of the MoE prefill shape starts inside a 256-row tile: the case those tiles must handle.
    starts, row = [], 0
    for r in ragged[0].group_rows():
        starts.append(row)
        row += -(-r // 128) * 128
    assert any(s % 256 for s in starts), starts
    assert [(c.groups, c.expected_m, c.n, c.k) for c in suites.SUITES['masked']] == [
        (32, 192, 6144, 7168), (6, 1024, 7168, 3072), (32, 20, 4096, 4096), (6, 20, 4096, 2048), (16, 256, 4096, 7168),
        (8, 128, 4096, 7168), (8, 128, 7168, 2048)]


def test_host_suite_covers_every_exported_family_and_filters_by_dtype():
    names = {c.function for c in suites.SUITES['host']}
    assert {f'bf16_gemm_{x}' for x in ('nt', 'nn', 'tn', 'tt')} <= names
    assert {f'fp8_gemm_{x}' for x in ('nt', 'nn', 'tn', 'tt')} <= names
    assert {'m_grouped_bf16_gemm_nt_contiguous', 'm_grouped_fp8_gemm_nt_contiguous', 'm_grouped_bf16_gemm_nt_masked',
            'm_grouped_fp8_gemm_nt_masked', 'k_grouped_bf16_gemm_tn_contiguous', 'k_grouped_fp8_gemm_nt_contiguous',
            'einsum', 'fp8_einsum'} <= names
    for c in suites.SUITES['host']:
        assert callable(getattr(deep_gemm, c.function)), c.function  # every family is one of our exports
    assert {c.dtype for c in suites.select('host', 'fp8')} == {'fp8'}
    assert 'bf16_gemm_tn 128x2112x1024' in [c.name for c in suites.select('host', 'bf16')]


def test_layout_suite_reads_about_a_megabyte_and_more():
    cases = suites.SUITES['layout']
    assert {c.helper for c in cases} == set(suites.LAYOUT_HELPERS)
    assert {(c.mn, c.k) for c in cases if c.groups == 1} == {(mn, k) for mn in (4096, 8192, 32768)
                                                             for k in (7168, 16384)}
    assert any(c.groups > 1 for c in cases if c.helper == 'get_mn_major_tma_aligned_tensor')
    assert min(layout_bytes(c)[0] for c in cases) >= 900_000
    big = suites.Layout('get_mn_major_tma_aligned_packed_ue8m0_tensor', 32768, 16384)
    assert layout_bytes(big) == (32768 * 128 * 4, 32768 * 32 * 4)
    k_grouped = suites.Layout('get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor', 4096, 4096, groups=8)
    assert layout_bytes(k_grouped) == (8 * 32 * 4096 * 4, 8 * 8 * 4096 * 4)
    assert layout_bytes(suites.Layout('get_mn_major_tma_aligned_tensor', 4096, 7168, groups=8)) == \
        (8 * 4096 * 56 * 4, ) * 2


def test_masked_rows_are_drawn_as_deepgemms_generators_draw_them():
    rows = suites.masked_rows(32, 192, 4096, random.Random(5))
    assert rows == suites.masked_rows(32, 192, 4096, random.Random(5))
    assert rows != suites.masked_rows(32, 192, 4096, random.Random(6))
    assert all(int(192 * 0.7) <= r <= int(192 * 1.3) for r in rows)
    with pytest.raises(ValueError, match=r'^max_m: expected at least the largest drawn group'):
        suites.masked_rows(4, 1024, 256, random.Random(0))


def test_contiguous_layout_pads_each_group_with_minus_one_rows():
    assert suites.contiguous_layout([3, 5], 4) == [0, 0, 0, -1, 1, 1, 1, 1, 1, -1, -1, -1]
    assert suites.contiguous_layout([8, 4], 4) == [0] * 8 + [1] * 4


def test_option_lists_and_shape_filters():
    assert suites.parse_list('all', suites.DTYPES, 'dtype') == ['bf16', 'fp8']
    assert suites.parse_list('fp8, fp8,bf16', suites.DTYPES, 'dtype') == ['fp8', 'bf16']
    with pytest.raises(ValueError, match=r"^suite: expected one or more of deepseek, .* got 'dense'"):
        suites.parse_list('deepseek,dense', tuple(suites.SUITES), 'suite')
    with pytest.raises(ValueError, match=r'^dtype: expected one or more'):
        suites.parse_list(' , ', suites.DTYPES, 'dtype')
    keep = suites.shape_filter('4096x*, 64x2112x7168')
    assert [c.name for c in suites.select('deepseek', 'bf16', keep)] == \
        ['64x2112x7168'] + [f'4096x{n}x{k}' for n, k in suites.DEEPSEEK_NK]
    assert suites.shape_filter('  ') is None


# ---- arithmetic -------------------------------------------------------------------------------------------------

def test_ratio_is_their_time_over_ours():
    assert stats.ratio(20.0, 10.0) == 2.0  # they take twice as long: we are 2x faster
    assert stats.ratio(None, 10.0) is None and stats.ratio(5.0, None) is None and stats.ratio(0.0, 1.0) is None


def test_geomean_median_and_rounds():
    assert stats.geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert stats.geomean([2.0, None, 8.0]) == pytest.approx(4.0)
    assert stats.geomean([None]) is None
    with pytest.raises(ValueError, match='^values: expected positive ratios'):
        stats.geomean([1.0, -1.0])
    assert stats.median([3, 1, 2]) == 2 and stats.median([4, 1, 2, 3]) == 2.5
    assert stats.combine_rounds([10.0, 14.0]) == 12.0
    assert stats.tflops(2e12, 1e6) == pytest.approx(2.0)
    assert stats.gbps(4e9, 1e6) == pytest.approx(4.0)


class FakeCuda:
    @staticmethod
    def synchronize():
        pass


FAKE_TORCH = SimpleNamespace(cuda=FakeCuda)


def test_rounds_interleave_and_the_row_carries_ratios(monkeypatch):
    checked, timed = [], []
    times = {'ours': 10.0, 'deepgemm': 15.0, 'cublas': 30.0}

    def fake_time(torch, fn, flush, warmup_ms, rep_ms):
        key = fn()
        timed.append(key)
        return times[key] + len(timed) * 0.01, 7

    def verify(out):
        checked.append(out)
        return True, None
    monkeypatch.setattr(timing, 'time_events', fake_time)
    keys = ('cublas', 'ours', 'deepgemm')  # given out of order: the first round still starts with ours
    entries = {key: measure.Entry(fn=(lambda k: lambda: k)(key), verify=verify) for key in keys}
    options = SimpleNamespace(rounds=3, warmup_ms=1, rep_ms=1, kernel_timer=False)
    row = measure.measure(FAKE_TORCH, measure.Problem('1x2x3', entries, flops=12), options, flush=None)
    assert checked == ['ours', 'deepgemm', 'cublas']  # every call checked once, before any timing
    assert timed == ['ours', 'deepgemm', 'cublas', 'cublas', 'deepgemm', 'ours', 'ours', 'deepgemm', 'cublas']
    ours = row['results']['ours']
    assert len(ours['rounds_us']) == 3 and ours['us'] == pytest.approx(sum(ours['rounds_us']) / 3)
    assert ours['calls'] == 7
    assert row['ratio_vs_deepgemm'] == pytest.approx(row['results']['deepgemm']['us'] / ours['us'])
    assert 2.9 < row['ratio_vs_cublas'] < 3.1


def test_a_failed_check_is_reported_and_keeps_the_ratio_out(monkeypatch):
    monkeypatch.setattr(timing, 'time_events', lambda torch, fn, *a: (fn() or 1.0, 1))

    def raises():
        raise RuntimeError('CUBLAS_STATUS_NOT_SUPPORTED\nmore')
    entries = {'ours': measure.Entry(fn=lambda: 1.0, verify=lambda out: (False, 'values differ')),
               'deepgemm': measure.Entry(fn=lambda: 2.0, verify=lambda out: (True, None)),
               'cublas': measure.Entry(fn=raises),
               'copy': measure.absent('get_x')}
    options = SimpleNamespace(rounds=1, warmup_ms=1, rep_ms=1, kernel_timer=False)
    row = measure.measure(FAKE_TORCH, measure.Problem('s', entries), options, flush=None)
    results = row['results']
    assert results['ours']['status'] == 'mismatch' and results['ours']['message'] == 'values differ'
    assert results['ours']['us'] == 1.0  # still timed, but no ratio from a wrong result
    assert row['ratio_vs_deepgemm'] is None
    assert results['cublas'] == {'status': 'unsupported', 'message': 'RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED',
                                 'label': None, 'diff': None}
    assert results['copy']['status'] == 'absent'


def test_kernel_timer_cuts_the_trace_into_calls_at_the_markers():
    def kernel(name, ts, dur, cat='kernel'):
        return {'ph': 'X', 'cat': cat, 'name': name, 'ts': ts, 'dur': dur}
    flush = 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int> >'
    marker = 'void at::native::unrolled_elementwise_kernel<at::native::bitwise_not_kernel_cuda(...)>'
    events = [kernel(flush, 0, 60), kernel(marker, 61, 1), kernel('gemm_a', 70, 10), kernel('fill_pad', 82, 3),
              {'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::mm', 'ts': 65, 'dur': 40},
              kernel(flush, 100, 60), kernel(marker, 161, 1), kernel('gemm_a', 170, 12),
              kernel('Memset (Device)', 185, 2, cat='gpu_memset')]
    random.Random(0).shuffle(events)  # the order in the file does not matter, the timestamps do
    segments = timing.call_segments(events)
    assert [[e['name'] for e in s] for s in segments] == [['gemm_a', 'fill_pad'], ['gemm_a', 'Memset (Device)']]
    assert timing.segment_times(segments[0]) == (13.0, 15.0)  # busy 10 + 3; span 70 .. 85
    assert timing.segment_times(segments[1]) == (14.0, 17.0)
    assert timing.segment_times([]) == (0.0, 0.0)


# ---- loading the peer -------------------------------------------------------------------------------------------

def test_the_peer_loads_beside_ours_and_ours_stays_in_place(tmp_path):
    package = tmp_path / 'dg' / 'deep_gemm'
    (package / 'utils').mkdir(parents=True)
    (package / '__init__.py').write_text("__version__ = 'peer-2.6.1'\nfrom . import utils\n")
    (package / 'utils' / '__init__.py').write_text('def per_token_cast_to_fp8(x, use_ue8m0):\n    return "peer"\n')
    before = {n: m for n, m in sys.modules.items() if n == 'deep_gemm' or n.startswith('deep_gemm.')}
    path_before = list(sys.path)
    other = peer.load_peer(str(tmp_path / 'dg'))
    assert other.__version__ == 'peer-2.6.1' and other is not deep_gemm
    assert other.utils.per_token_cast_to_fp8(None, False) == 'peer'
    after = {n: m for n, m in sys.modules.items() if n == 'deep_gemm' or n.startswith('deep_gemm.')}
    assert after == before and sys.modules['deep_gemm'] is deep_gemm
    assert sys.path == path_before
    assert peer.lookup(other, 'per_token_cast_to_fp8') is other.utils.per_token_cast_to_fp8
    assert peer.lookup(other, 'fp8_gemm_nt') is None
    assert peer.describe(other)['version'] == 'peer-2.6.1'


def test_a_peer_whose_extension_comes_from_elsewhere_is_refused(tmp_path):
    # What an import hook redirecting deep_gemm._C to our build would look like from here.
    package = tmp_path / 'dg' / 'deep_gemm'
    package.mkdir(parents=True)
    (package / '__init__.py').write_text('import json as _C\n')
    with pytest.raises(ValueError, match=r"^deepgemm: expected deep_gemm to import from .* but json came from"):
        peer.load_peer(str(tmp_path / 'dg'))
    assert sys.modules['deep_gemm'] is deep_gemm


def test_a_peer_that_fails_to_import_leaves_ours_in_place(tmp_path):
    package = tmp_path / 'dg' / 'deep_gemm'
    package.mkdir(parents=True)
    (package / '__init__.py').write_text('from . import missing_extension\n')
    with pytest.raises(ImportError):
        peer.load_peer(str(tmp_path / 'dg'))
    assert sys.modules['deep_gemm'] is deep_gemm and 'deep_gemm.missing_extension' not in sys.modules


def test_a_folder_without_the_package_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r'^deepgemm: expected a folder that holds a deep_gemm/ package'):
        peer.load_peer(str(tmp_path))


# ---- options ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('args, message', [
    (['--no-peer', '--rounds', '0'], 'rounds: expected an int >= 1, got 0'),
    (['--no-peer', '--rounds', 'two'], "rounds: expected an int >= 1, got 'two'"),
    (['--no-peer', '--rep-ms', '-5'], 'rep-ms: expected a number of milliseconds > 0, got -5.0'),
    (['--no-peer', '--host-calls', '0'], 'host-calls: expected an int >= 1, got 0'),
    (['--no-peer', '--dtype', 'fp16'], "dtype: expected one or more of bf16, fp8 (or all), got 'fp16'"),
    (['--deepgemm', '/x', '--no-peer'], "deepgemm: expected either --deepgemm PATH or --no-peer, got both ('/x')"),
    ([], 'deepgemm: expected --deepgemm PATH'),
])
def test_bad_options_name_themselves(args, message):
    with pytest.raises(ValueError) as e:
        cli.parse_args(args)
    assert str(e.value).startswith(message)


def test_plan_runs_dtype_free_suites_once_and_refuses_an_empty_selection():
    options = cli.parse_args(['--no-peer', '--suite', 'layout,host,ragged', '--shapes', '*4096x7168*,*_nt*'])
    plan = [(suite, dtype, [c.name for c in cases]) for suite, dtype, cases in cli.plan(options)]
    assert plan[0][:2] == ('layout', None)
    assert [p[:2] for p in plan[1:]] == [('host', 'bf16'), ('host', 'fp8'), ('ragged', 'bf16'), ('ragged', 'fp8')]
    assert plan[3][2] == ['129x4096x7168']
    with pytest.raises(ValueError, match=r"^shapes: expected a pattern matching a case of ragged, got '1x1x1'"):
        cli.plan(cli.parse_args(['--no-peer', '--suite', 'ragged', '--shapes', '1x1x1']))


def test_help_works_without_torch_and_importing_the_bench_loads_no_torch():
    proc = bench('--help')
    assert proc.returncode == 0, proc.stderr
    assert '--deepgemm PATH' in proc.stdout and 'ragged (65x2112x7168' in proc.stdout
    code = 'import sys, deep_gemm.bench.cli, deep_gemm.bench.report; print("torch" in sys.modules)'
    assert subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          check=True).stdout.strip() == 'False'


def test_without_torch_or_a_gpu_it_exits_2_saying_why():
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        pytest.skip('torch and a GPU are here: the bench would run')
    proc = bench('--no-peer', '--suite', 'ragged', '--shapes', '65x*')
    assert proc.returncode == 2
    expected = 'torch is not installed' if torch is None else 'no CUDA GPU is visible to torch'
    assert proc.stderr.startswith(f'deep_gemm.bench: {expected}'), proc.stderr


def test_a_bad_option_exits_2_before_looking_for_torch():
    proc = bench('--no-peer', '--suite', 'everything')
    assert proc.returncode == 2 and proc.stderr.startswith("deep_gemm.bench: suite: expected one or more"), \
        proc.stderr


class FakePlan:
    """A kept plan of our package: launch runs nothing; time_runs answers as the C++ timer would."""
    num_tensors = 3

    def __init__(self, us):
        self.us, self.timed = us, []

    def launch(self, stream, num_sms, *pointers):
        return True

    def time_runs(self, stream, num_sms, pointers, warmup_ms, rep_ms, flush_bytes):
        self.timed.append((stream, num_sms, pointers, flush_bytes))
        return self.us, 11


def fake_ours(plans):
    """Our deep_gemm as the bench sees it: its kept plans, and a call that runs each of `calls` through the table."""
    table = dict(plans)
    module = SimpleNamespace(_plans=SimpleNamespace(table=table), _C=SimpleNamespace(Plan=FakePlan))
    return module, table


def test_the_cpp_timer_times_the_plan_our_call_ran_in_the_same_rounds(monkeypatch):
    plan = FakePlan(us=9.8)
    ours, table = fake_ours({'key': plan})
    timed = []

    def call():  # what a deep_gemm function does on a kept signature
        assert table['key'].launch(5, 132, 1, 2, 3, 0, 0, 0, 0)
        return 'ours'

    budgets = []

    def fake_time(torch, fn, flush, warmup_ms, rep_ms):
        timed.append(fn())
        budgets.append((timed[-1], warmup_ms, rep_ms))
        return {'ours': 10.0, 'deepgemm': 12.0}[timed[-1]], 7

    def fake_time_run(run, warmup_ms, rep_ms):
        timed.append('tilegemm')
        budgets.append(('tilegemm', warmup_ms, rep_ms))
        return run[0].time_runs(*run[1:], warmup_ms, rep_ms, 1)

    monkeypatch.setattr(timing, 'time_events', fake_time)
    monkeypatch.setattr(measure.cpp_timer, 'time_run', fake_time_run)
    assert measure.cpp_timer.supported(ours)
    entries = {'ours': measure.Entry(fn=call, verify=lambda out: (True, None)),
               'deepgemm': measure.Entry(fn=lambda: 'deepgemm', verify=lambda out: (True, None))}
    options = SimpleNamespace(rounds=2, warmup_ms=25, rep_ms=120, kernel_timer=False)
    row = measure.measure(FAKE_TORCH, measure.Problem('1x2x3', entries), options, flush=None, ours=ours)
    # Our call and the C++ loop alternate in slices (ABBA...) where our call's turn comes, the rounds interleaved
    # with the other libraries; the C++ loop runs on the pointers, stream and SM count of our call's own run.
    pair = ['ours', 'tilegemm', 'tilegemm', 'ours'] * (measure.PAIR_SLICES // 2)
    assert timed == pair + ['deepgemm', 'deepgemm'] + pair
    assert plan.timed == [(5, 132, [1, 2, 3], 1)] * (2 * measure.PAIR_SLICES)
    slice_ms = 120 / measure.PAIR_SLICES
    first_round = budgets[:2 * measure.PAIR_SLICES]
    assert first_round[:2] == [('ours', 25, slice_ms), ('tilegemm', 25, slice_ms)]  # each warms up once
    assert all(w == 0 and r == slice_ms for _, w, r in first_round[2:])
    assert ('deepgemm', 25, 120) in budgets
    assert row['results']['ours']['calls'] == 7 * measure.PAIR_SLICES
    assert table['key'] is plan  # the kept plans are restored after the capture
    assert row['results']['tilegemm']['us'] == pytest.approx(9.8)
    assert row['ours_vs_tilegemm'] == pytest.approx(10.0 / 9.8)
    assert row['within_tilegemm_goal']  # 0.2 µs apart: under the 1 µs floor
    text = report.markdown(sample_report([row]))
    assert '| 1x2x3 | 10.0 | 9.8 | 12.0 |' in text and '| 1.020 |' in text
    assert '1 of 1 rows within 3% or 1 µs; largest ratio 1.020' in text


def test_the_cpp_timer_needs_exactly_one_plan_run(monkeypatch):
    monkeypatch.setattr(timing, 'time_events', lambda torch, fn, *a: (fn() or 50.0, 1))
    ours, table = fake_ours({'a': FakePlan(1.0), 'b': FakePlan(1.0)})

    def two_plans():
        table['a'].launch(0, 1, 1, 2, 3)
        table['b'].launch(0, 1, 1, 2, 3)

    entries = {'ours': measure.Entry(fn=two_plans, verify=lambda out: (True, None))}
    options = SimpleNamespace(rounds=1, warmup_ms=1, rep_ms=1, kernel_timer=False)
    row = measure.measure(FAKE_TORCH, measure.Problem('s', entries), options, flush=None, ours=ours)
    assert row['results']['tilegemm'] == {'status': 'unsupported', 'message': 'the call ran 2 plans, not one'}
    assert row['ours_vs_tilegemm'] is None and row['within_tilegemm_goal'] is None
    assert report.exit_status(sample_report([row])) == 0


def test_the_goal_is_three_percent_or_one_microsecond(monkeypatch):
    for ours_us, cpp_us, within in ((104.0, 100.0, False), (102.9, 100.0, True), (9.0, 8.1, True),
                                    (10.0, 8.5, False)):
        monkeypatch.setattr(timing, 'time_events', lambda torch, fn, *a, us=ours_us: (fn() or us, 1))
        ours, table = fake_ours({'k': FakePlan(cpp_us)})
        monkeypatch.setattr(measure.cpp_timer, 'time_run', lambda run, w, r: (run[0].us, 1))
        entries = {'ours': measure.Entry(fn=lambda: table['k'].launch(0, 1, 1, 2, 3) and None,
                                         verify=lambda out: (True, None))}
        options = SimpleNamespace(rounds=1, warmup_ms=1, rep_ms=1, kernel_timer=False)
        row = measure.measure(FAKE_TORCH, measure.Problem('s', entries), options, flush=None, ours=ours)
        assert row['within_tilegemm_goal'] is within, (ours_us, cpp_us)


# ---- report -----------------------------------------------------------------------------------------------------

def result(status='ok', us=None, **extra):
    return {'status': status, 'message': extra.pop('message', None), 'label': None, 'diff': 1e-7, 'us': us, **extra}


def gemm_row(shape, ours, deepgemm, cublas, flops=2e9):
    results = {'ours': ours, 'deepgemm': deepgemm, 'cublas': cublas}
    return {'shape': shape, 'params': {}, 'flops': flops, 'bytes': None, 'results': results,
            'ratio_vs_deepgemm': stats.ratio(deepgemm.get('us') if deepgemm['status'] == 'ok' else None,
                                             ours.get('us') if ours['status'] == 'ok' else None),
            'ratio_vs_cublas': stats.ratio(cublas.get('us') if cublas['status'] == 'ok' else None,
                                           ours.get('us') if ours['status'] == 'ok' else None)}


def sample_report(rows, suite='deepseek'):
    env = {'gpu': 'NVIDIA H200', 'torch': '2.11', 'cuda': '13.0', 'ours': {'version': 'ours-1', 'file': 'x'},
           'deepgemm': {'version': '2.6.1', 'file': 'y'}, 'timer': 'CUDA events', 'rounds': 2,
           'round_combine': stats.ROUND_COMBINE, 'kernel_timer': False}
    return {'environment': env, 'sections': [report.section(suite, 'fp8', rows, 'cuBLAS: torch._scaled_mm')]}


def test_report_tables_ratios_and_geomeans(tmp_path):
    rows = [gemm_row('64x2112x7168', result(us=10.0), result(us=20.0), result(us=5.0)),
            gemm_row('1x2112x7168', result(us=10.0), result(us=5.0),
                     result('unsupported', message='RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED'))]
    r = sample_report(rows)
    assert r['sections'][0]['geomeans']['ratio_vs_deepgemm'] == {'geomean': pytest.approx(1.0), 'rows': 2}
    assert r['sections'][0]['geomeans']['ratio_vs_cublas'] == {'geomean': pytest.approx(0.5), 'rows': 1}
    text = report.markdown(r)
    assert '| 64x2112x7168 | 10.0 | 20.0 | 5.0 | 200.0 | 2.00 | 0.50 | ok |' in text
    assert '| 1x2112x7168 | 10.0 | 5.0 | unsupported | 200.0 | 0.50 | — | cuBLAS unsupported: RuntimeError: ' \
           'CUBLAS_STATUS_NOT_SUPPORTED |' in text
    assert 'Geometric mean: DeepGEMM / ours 1.000 over 2 rows; cuBLAS / ours 0.500 over 1 rows.' in text
    assert report.exit_status(r) == 0  # cuBLAS declining a shape is not a failure
    json_path, md_path = report.write(r, str(tmp_path / 'out'))
    assert json.load(open(json_path))['sections'][0]['rows'][0]['ratio_vs_deepgemm'] == 2.0
    assert open(md_path).read() == text


def test_a_mismatch_marks_the_row_and_fails_the_run():
    rows = [gemm_row('128x7168x2048', result('mismatch', us=9.0, message='diff 0.3'), result(us=10.0),
                     result(us=11.0))]
    r = sample_report(rows)
    text = report.markdown(r)
    assert '| 128x7168x2048 | 9.0 ✗ | 10.0 | 11.0 | — | — | — | ours MISMATCH: diff 0.3 |' in text
    assert 'Failed rows (a mismatch, or our call failing): deepseek fp8 128x7168x2048.' in text
    assert report.exit_status(r) == 1
    assert r['sections'][0]['geomeans']['ratio_vs_deepgemm'] == {'geomean': None, 'rows': 0}


def test_our_error_fails_a_gemm_suite_but_a_peer_error_does_not():
    ours_error = gemm_row('s', result('error', message='ValueError: a: ...'), result(us=1.0), result(us=1.0))
    peer_error = gemm_row('s', result(us=1.0), result('error', message='RuntimeError'), result(us=1.0))
    assert report.exit_status(sample_report([ours_error])) == 1
    assert report.exit_status(sample_report([peer_error])) == 0
    assert report.exit_status(sample_report([ours_error], suite='host')) == 0  # host rows report, never fail


def test_json_has_no_nan():
    rows = [gemm_row('s', result(us=float('nan')), result(us=1.0), result(us=1.0))]
    text = json.dumps(report._plain(sample_report(rows)))
    assert 'NaN' not in text and '"us": null' in text


def test_environment_names_what_the_brief_asks_for(monkeypatch):
    props = SimpleNamespace(multi_processor_count=132)
    cuda = SimpleNamespace(current_device=lambda: 0, get_device_properties=lambda i: props,
                           get_device_name=lambda: 'NVIDIA H200')
    torch = SimpleNamespace(cuda=cuda, __version__='2.11.0', version=SimpleNamespace(cuda='13.0'))
    options = cli.parse_args(['--no-peer'])
    env = cli.environment(torch, options, {'ours': deep_gemm, 'deepgemm': SimpleNamespace(__version__='2.6.1')},
                          'ours', 'block', None)
    assert env['gpu'] == 'NVIDIA H200' and env['torch'] == '2.11.0' and env['cuda'] == '13.0'
    assert env['ours']['version'] == deep_gemm.__version__ and env['deepgemm']['version'] == '2.6.1'
    assert env['flush_bytes'] == 256_000_000 and env['rounds'] == 2
    assert env['round_combine'] == 'mean of the per-round medians'
    assert 'CUDA events' in env['timer'] and env['kernel_timer'] is False


def fake_gpu_torch():
    props = SimpleNamespace(multi_processor_count=132)
    cuda = SimpleNamespace(current_device=lambda: 0, get_device_properties=lambda i: props,
                           get_device_name=lambda: 'fake GPU', synchronize=lambda: None, empty_cache=lambda: None)
    return SimpleNamespace(cuda=cuda, __version__='0.0', version=SimpleNamespace(cuda='0.0'))


def test_run_measures_each_case_reports_after_each_and_survives_a_failing_builder(monkeypatch):
    built = []

    def builder(ctx, case, dtype):
        built.append((case.name, dtype))
        if case.m == 129:
            raise RuntimeError('CUDA out of memory. Tried to allocate 2 GiB')
        entry = measure.Entry(fn=lambda: None, verify=lambda out: (True, None))
        return measure.Problem(case.name, {'ours': entry}, flops=case.flops)
    monkeypatch.setitem(cli.gemm_cases.BUILDERS, 'ragged', builder)
    monkeypatch.setattr(timing, 'Flusher', lambda torch: None)
    monkeypatch.setattr(timing, 'time_events', lambda torch, fn, flush, w, r: (4.0, 10))
    snapshots = []
    options = cli.parse_args(['--no-peer', '--no-cublas', '--suite', 'ragged', '--dtype', 'bf16', '--rounds', '1'])
    result = cli.run(fake_gpu_torch(), options, {'ours': deep_gemm},
                     on_row=lambda r: snapshots.append([len(s['rows']) for s in r['sections']]))
    assert built == [(c.name, 'bf16') for c in suites.RAGGED]
    assert snapshots == [[1], [2], [3], [4], [5]]  # the files are rewritten after every case
    rows = result['sections'][0]['rows']
    assert [r['results']['ours']['status'] for r in rows] == ['ok', 'error', 'error', 'ok', 'ok']
    assert rows[1]['results']['ours']['message'] == 'bench: RuntimeError: CUDA out of memory. Tried to allocate 2 GiB'
    assert rows[0]['results']['ours']['us'] == 4.0
    assert report.exit_status(result) == 1
    assert result['environment']['gpu'] == 'fake GPU' and result['environment']['quantiser'] == 'our deep_gemm.utils'
