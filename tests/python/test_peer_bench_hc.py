"""The peer benchmark's hc suite (tf32_hc_prenorm_gemm) on the CPU: its shapes and options, the bytes, GB/s and
ratios of a row, the three entries timed in interleaved rounds, the report's hc table and exit status, the run loop
(TF32 switched on for the case and restored), and, with torch, the check on CPU tensors (split outputs summed)."""
import json
from types import SimpleNamespace

import pytest

import deep_gemm
from deep_gemm.bench import cli, hc_suite, measure, report, stats, suites, timing
from deep_gemm.bench.hc_suite import SPLIT_KEY, hc_bytes

DEEPGEMM_SHAPES = [(m, n, k) for m in (13, 137, 4096, 8192) for n, k in ((24, 28672), (24, 7680), (24, 7168))]


# ---- suite and options ------------------------------------------------------------------------------------------

def test_hc_suite_is_deepgemms_twelve_test_shapes_and_dtype_free():
    cases = suites.SUITES['hc']
    assert [(c.m, c.n, c.k) for c in cases] == DEEPGEMM_SHAPES and len(cases) == 12
    assert cases[0].name == '13x24x28672' and cases[0].flops == 2 * 13 * 24 * 28672
    assert 'hc' in suites.DTYPE_FREE
    assert suites.select('hc', None) == list(cases)


def test_suite_hc_parses_and_plans_once_whatever_the_dtypes():
    options = cli.parse_args(['--no-peer', '--suite', 'hc'])
    assert options.suites == ['hc']
    assert [(s, d, len(c)) for s, d, c in cli.plan(options)] == [('hc', None, 12)]
    options = cli.parse_args(['--deepgemm', '/tmp/dg', '--suite', 'hc', '--shapes', '4096x*', '--dtype', 'fp8'])
    [(suite, dtype, cases)] = cli.plan(options)
    assert (suite, dtype) == ('hc', None)
    assert [c.name for c in cases] == ['4096x24x28672', '4096x24x7680', '4096x24x7168']
    assert 'hc' in cli.parse_args(['--no-peer', '--suite', 'all']).suites
    assert 'hc (tf32_hc_prenorm_gemm' in cli.EPILOG


# ---- bytes and rates --------------------------------------------------------------------------------------------

def test_bytes_are_deepgemms_count_bytes_of_a_b_d_and_sqr_sum():
    # a bf16 [13, 28672], b fp32 [24, 28672], d fp32 [13, 24], sqr_sum fp32 [13]
    assert hc_bytes(13, 24, 28672) == 13 * 28672 * 2 + 24 * 28672 * 4 + 13 * 24 * 4 + 13 * 4 == 3_499_284
    # with 16 splits: d [16, 13, 24], sqr_sum [16, 13]
    assert hc_bytes(13, 24, 28672, 16) == 3_499_284 + 15 * (13 * 24 * 4 + 13 * 4) == 3_518_784
    assert hc_bytes(8192, 24, 7168, 1) == hc_bytes(8192, 24, 7168)


def result(status='ok', us=None, **extra):
    return {'status': status, 'message': extra.pop('message', None), 'label': None, 'diff': 1e-10, 'us': us, **extra}


def hc_row(m, n, k, ours, deepgemm=None, split=None):
    results = {'ours': ours}
    if deepgemm is not None:
        results['deepgemm'] = deepgemm
    if split is not None:
        results[SPLIT_KEY] = split
    return {'shape': f'{m}x{n}x{k}', 'flops': 2 * m * n * k, 'bytes': hc_bytes(m, n, k), 'results': results,
            'params': {'m': m, 'n': n, 'k': k, 'peer_splits': 16, 'split_bytes': hc_bytes(m, n, k, 16)},
            'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}


def test_rates_give_each_entry_its_own_bytes_and_deepgemms_best():
    row = hc_suite.add_rates(hc_row(13, 24, 28672, result(us=10.0), result(us=20.0), result(us=12.5)))
    assert row['ours_gbps'] == pytest.approx(3_499_284 / 10.0 / 1e3)
    assert row['deepgemm_gbps'] == pytest.approx(3_499_284 / 20.0 / 1e3)
    assert row['deepgemm_split16_gbps'] == pytest.approx(3_518_784 / 12.5 / 1e3)  # its bigger d and sqr_sum
    assert (row['deepgemm_best'], row['deepgemm_best_us']) == (SPLIT_KEY, 12.5)
    assert row['ratio_vs_deepgemm'] == pytest.approx(2.0)
    assert row['ratio_vs_deepgemm_split16'] == pytest.approx(1.25)
    assert row['ratio_vs_deepgemm_best'] == pytest.approx(1.25)
    # one split faster: it is the best
    row = hc_suite.add_rates(hc_row(137, 24, 7168, result(us=8.0), result(us=6.0), result(us=7.0)))
    assert (row['deepgemm_best'], row['ratio_vs_deepgemm_best']) == ('deepgemm', pytest.approx(0.75))


def test_a_split_call_that_mismatched_or_failed_is_not_deepgemms_best():
    row = hc_suite.add_rates(hc_row(13, 24, 7168, result(us=10.0), result(us=20.0),
                                    result('mismatch', us=1.0, message='calc_diff d nan')))
    assert row['deepgemm_best'] == 'deepgemm' and row['ratio_vs_deepgemm_best'] == pytest.approx(2.0)
    assert row['deepgemm_split16_gbps'] is None and row['ratio_vs_deepgemm_split16'] is None
    row = hc_suite.add_rates(hc_row(13, 24, 7168, result(us=10.0), result('error', message='RuntimeError'),
                                    result(us=5.0)))
    assert row['deepgemm_best'] == SPLIT_KEY and row['ratio_vs_deepgemm'] is None
    assert row['ratio_vs_deepgemm_best'] == pytest.approx(0.5)


def test_without_the_peer_only_ours_has_a_rate():
    row = hc_suite.add_rates(hc_row(4096, 24, 7680, result(us=40.0)))
    assert row['ours_gbps'] == pytest.approx(hc_bytes(4096, 24, 7680) / 40.0 / 1e3)
    assert row['deepgemm_gbps'] is None and row['deepgemm_best'] is None and row['deepgemm_best_us'] is None
    assert row['ratio_vs_deepgemm'] is None and row['ratio_vs_deepgemm_best'] is None
    ours_error = hc_suite.add_rates(hc_row(13, 24, 7168, result('error', message='x'), result(us=2.0)))
    assert ours_error['ours_gbps'] is None and ours_error['ratio_vs_deepgemm_best'] is None


# ---- measuring three entries ------------------------------------------------------------------------------------

FAKE_TORCH = SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None))


def test_the_split_call_is_a_third_entry_timed_in_the_same_interleaved_rounds(monkeypatch):
    timed = []
    times = {'ours': 10.0, 'deepgemm': 20.0, SPLIT_KEY: 12.5}

    def fake_time(torch, fn, flush, warmup_ms, rep_ms):
        timed.append(fn())
        return times[timed[-1]], 3
    monkeypatch.setattr(timing, 'time_events', fake_time)
    entries = {key: measure.Entry(fn=(lambda k: lambda: k)(key), verify=lambda out: (True, None, 2e-10))
               for key in (SPLIT_KEY, 'deepgemm', 'ours')}  # given out of order
    options = SimpleNamespace(rounds=2, warmup_ms=1, rep_ms=1, kernel_timer=False)
    problem = measure.Problem('13x24x28672', entries, num_bytes=hc_bytes(13, 24, 28672),
                              params={'m': 13, 'n': 24, 'k': 28672, 'split_bytes': hc_bytes(13, 24, 28672, 16)})
    row = hc_suite.add_rates(measure.measure(FAKE_TORCH, problem, options, flush=None))
    assert timed == ['ours', 'deepgemm', SPLIT_KEY, SPLIT_KEY, 'deepgemm', 'ours']
    assert list(row['results']) == ['ours', 'deepgemm', SPLIT_KEY]
    assert all(r['status'] == 'ok' and r['diff'] == 2e-10 for r in row['results'].values())  # verify's diff kept
    assert row['ratio_vs_deepgemm'] == pytest.approx(2.0) and row['ratio_vs_deepgemm_best'] == pytest.approx(1.25)


def test_a_two_value_verify_still_works_and_records_no_diff():
    entries = {'ours': measure.Entry(fn=lambda: None, verify=lambda out: (False, 'values differ'))}
    checked = measure.check(FAKE_TORCH, measure.Problem('s', entries), 'ours')
    assert checked == {'status': 'mismatch', 'message': 'values differ', 'label': None, 'diff': None}


# ---- report -----------------------------------------------------------------------------------------------------

def sample_report(rows):
    env = {'gpu': 'NVIDIA H200', 'torch': '2.11', 'cuda': '13.0', 'ours': {'version': 'ours-1', 'file': 'x'},
           'deepgemm': {'version': '2.6.1', 'file': 'y'}, 'timer': 'CUDA events', 'rounds': 2,
           'round_combine': stats.ROUND_COMBINE, 'kernel_timer': False}
    return {'environment': env, 'sections': [report.section('hc', None, rows, hc_suite.NOTE)]}


def test_report_renders_an_hc_table_with_deepgemms_best_and_its_geomean(tmp_path):
    rows = [hc_suite.add_rates(hc_row(13, 24, 28672, result(us=10.0), result(us=20.0), result(us=12.5))),
            hc_suite.add_rates(hc_row(8192, 24, 7168, result(us=100.0), result(us=80.0),
                                      result('error', message='RuntimeError: out of resources')))]
    r = sample_report(rows)
    geomeans = r['sections'][0]['geomeans']
    assert geomeans['ratio_vs_deepgemm'] == {'geomean': pytest.approx((2.0 * 0.8) ** 0.5), 'rows': 2}
    assert geomeans['ratio_vs_deepgemm_best'] == {'geomean': pytest.approx((1.25 * 0.8) ** 0.5), 'rows': 2}
    text = report.markdown(r)
    assert '## hc\n' in text and 'DeepGEMM 16: num_splits=16' in text
    assert '| m | n | k | ours µs | ours GB/s | DeepGEMM none µs | DeepGEMM none GB/s | DeepGEMM 16 µs | ' \
           'DeepGEMM 16 GB/s | DeepGEMM none / ours | DeepGEMM best / ours | check |' in text
    assert '| 13 | 24 | 28672 | 10.0 | 350 | 20.0 | 175 | 12.5 | 282 | 2.00 | 1.25 | ok |' in text
    assert '| 8192 | 24 | 7168 | 100.0 | ' in text
    assert '| 80.0 | ' in text and '| error | — | 0.80 | 0.80 | DeepGEMM 16 splits error: RuntimeError: out of ' \
        'resources |' in text
    assert f"Geometric mean: DeepGEMM / ours {(2.0 * 0.8) ** 0.5:.3f} over 2 rows; DeepGEMM best / ours " \
           f"{(1.25 * 0.8) ** 0.5:.3f} over 2 rows." in text
    assert report.exit_status(r) == 0  # a peer's error is reported, not a failure
    json_path, md_path = report.write(r, str(tmp_path / 'out'))
    row = json.load(open(json_path))['sections'][0]['rows'][0]
    assert row['deepgemm_best'] == SPLIT_KEY and row['ratio_vs_deepgemm_best'] == 1.25
    assert row['results'][SPLIT_KEY]['us'] == 12.5 and row['params']['split_bytes'] == 3_518_784
    assert open(md_path).read() == text


def test_our_error_or_any_mismatch_fails_an_hc_run():
    ours_error = hc_suite.add_rates(hc_row(13, 24, 7168, result('error', message='ValueError: a'), result(us=1.0)))
    r = sample_report([ours_error])
    assert report.exit_status(r) == 1
    assert 'Failed rows (a mismatch, or our call failing): hc 13x24x7168.' in report.markdown(r)
    split_mismatch = hc_suite.add_rates(hc_row(13, 24, 7168, result(us=1.0), result(us=1.0),
                                               result('mismatch', us=1.0, message='calc_diff d 0.5')))
    assert report.exit_status(sample_report([split_mismatch])) == 1
    assert '| 1.0 ✗ |' in report.markdown(sample_report([split_mismatch]))


def test_a_case_whose_inputs_failed_still_renders():
    case = suites.SUITES['hc'][-1]
    row = cli.failed_row(case, 'hc', RuntimeError('CUDA out of memory'))
    assert row['params'] == {'m': 8192, 'n': 24, 'k': 7168}
    text = report.markdown(sample_report([row]))
    assert '| 8192 | 24 | 7168 | error | — | — | — | — | — | — | — | ours error: bench: RuntimeError: CUDA out of ' \
           'memory |' in text


# ---- the run loop -----------------------------------------------------------------------------------------------

def fake_gpu_torch():
    props = SimpleNamespace(multi_processor_count=132)
    cuda = SimpleNamespace(current_device=lambda: 0, get_device_properties=lambda i: props,
                           get_device_name=lambda: 'fake GPU', synchronize=lambda: None, empty_cache=lambda: None)
    backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False)))
    return SimpleNamespace(cuda=cuda, backends=backends, __version__='0.0', version=SimpleNamespace(cuda='0.0'))


def test_run_builds_each_hc_case_under_tf32_and_restores_it(monkeypatch):
    torch = fake_gpu_torch()
    seen = []

    def problem(ctx, case):
        seen.append((case.name, torch.backends.cuda.matmul.allow_tf32, sorted(ctx.libs)))
        entries = {key: measure.Entry(fn=(lambda k: lambda: k)(key), verify=lambda out: (True, None, 0.0))
                   for key in hc_suite.ENTRY_KEYS}
        return measure.Problem(case.name, entries, flops=case.flops, num_bytes=hc_bytes(case.m, case.n, case.k),
                               params={'m': case.m, 'n': case.n, 'k': case.k,
                                       'split_bytes': hc_bytes(case.m, case.n, case.k, 16)})
    monkeypatch.setattr(hc_suite, 'problem', problem)
    monkeypatch.setattr(timing, 'Flusher', lambda torch: None)
    monkeypatch.setattr(timing, 'time_events', lambda torch, fn, flush, w, r: (
        {'ours': 4.0, 'deepgemm': 6.0, SPLIT_KEY: 5.0}[fn()], 10))
    options = cli.parse_args(['--deepgemm', '/tmp/dg', '--suite', 'hc', '--shapes', '13x*', '--rounds', '1'])
    peer = SimpleNamespace(utils=None, tf32_hc_prenorm_gemm=lambda *a, **k: None)
    result = cli.run(torch, options, {'ours': deep_gemm, 'deepgemm': peer})
    assert seen == [(name, True, ['deepgemm', 'ours']) for name in ('13x24x28672', '13x24x7680', '13x24x7168')]
    assert torch.backends.cuda.matmul.allow_tf32 is False  # restored after each case
    [section] = result['sections']
    assert (section['suite'], section['dtype'], section['note']) == ('hc', None, hc_suite.NOTE)
    assert [r['ratio_vs_deepgemm_best'] for r in section['rows']] == [pytest.approx(1.25)] * 3
    assert section['geomeans']['ratio_vs_deepgemm_best']['rows'] == 3
    assert report.exit_status(result) == 0
    assert '| 13 | 24 | 7680 | 4.0 |' in report.markdown(result)


def test_tf32_matmul_restores_the_switch_after_an_error():
    torch = fake_gpu_torch()
    with pytest.raises(RuntimeError):
        with hc_suite.tf32_matmul(torch):
            assert torch.backends.cuda.matmul.allow_tf32 is True
            raise RuntimeError('boom')
    assert torch.backends.cuda.matmul.allow_tf32 is False


# ---- the check, on CPU tensors (needs torch) ---------------------------------------------------------------------

def exact(a, b, d, s, num_splits=None):
    """A correct tf32_hc_prenorm_gemm in fp32: one result, or per-split partial sums over chunks of K."""
    if num_splits is None:
        d.copy_(a.float() @ b.T)
        s.copy_(a.float().square().sum(-1))
        return
    for i, (a_i, b_i) in enumerate(zip(a.float().chunk(num_splits, 1), b.chunk(num_splits, 1))):
        d[i] = a_i @ b_i.T
        s[i] = a_i.square().sum(-1)


def run_entry(entry):
    entry.prepare()
    entry.fn()
    return entry.verify(entry.out)


def test_the_check_sums_split_outputs_and_catches_missing_or_wrong_ones(monkeypatch):
    torch = pytest.importorskip('torch')
    monkeypatch.setattr(hc_suite, 'DEVICE', 'cpu')
    calls, inputs = [], []

    def recording(a, b, d, s, num_splits=None):
        calls.append((tuple(d.shape), tuple(s.shape), num_splits))
        inputs.append((a.clone(), b.clone()))
        exact(a, b, d, s, num_splits)

    def first_split_only(a, b, d, s, num_splits=None):
        d[0], s[0] = a.float() @ b.T, a.float().square().sum(-1)  # the rest stays NaN

    case = suites.HcPrenorm(13, 24, 256)
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': SimpleNamespace(tf32_hc_prenorm_gemm=recording),
                                                     'deepgemm': SimpleNamespace(tf32_hc_prenorm_gemm=recording)})
    problem = hc_suite.problem(ctx, case)
    assert list(problem.entries) == ['ours', 'deepgemm', SPLIT_KEY]
    assert problem.num_bytes == hc_bytes(13, 24, 256) and problem.params['split_bytes'] == hc_bytes(13, 24, 256, 16)
    for key in hc_suite.ENTRY_KEYS:
        ok, message, diff = run_entry(problem.entries[key])
        assert ok and message is None and 0 <= diff < 1e-12, (key, message, diff)
    assert calls == [((13, 24), (13, ), None), ((13, 24), (13, ), None), ((16, 13, 24), (16, 13), 16)]
    assert inputs[0][0].dtype == torch.bfloat16 and inputs[0][1].dtype == torch.float32
    assert all(torch.equal(a, inputs[0][0]) and torch.equal(b, inputs[0][1]) for a, b in inputs)  # one a, one b
    run_entry(hc_suite.problem(ctx, case).entries['ours'])  # the case's seed draws the same inputs again
    assert torch.equal(inputs[-1][0], inputs[0][0]) and torch.equal(inputs[-1][1], inputs[0][1])

    ctx.libs['deepgemm'] = SimpleNamespace(tf32_hc_prenorm_gemm=first_split_only)
    split = hc_suite.problem(ctx, case).entries[SPLIT_KEY]
    ok, message, diff = run_entry(split)
    assert not ok and diff != diff and 'summed over 16 splits' in message
    ctx.libs['deepgemm'] = SimpleNamespace(tf32_hc_prenorm_gemm=lambda a, b, d, s, num_splits=None: d.zero_())
    ok, message, diff = run_entry(hc_suite.problem(ctx, case).entries['deepgemm'])
    assert not ok and diff != diff and message.startswith('calc_diff d 1, sqr_sum nan')  # sqr_sum never written

    def wrong_sqr_sum(a, b, d, s, num_splits=None):
        exact(a, b, d, s, num_splits)
        s.mul_(2)
    ctx.libs['deepgemm'] = SimpleNamespace(tf32_hc_prenorm_gemm=wrong_sqr_sum)
    ok, message, diff = run_entry(hc_suite.problem(ctx, case).entries['deepgemm'])
    assert not ok and 0.01 < diff < 1 and 'tolerance 1e-08' in message

    ctx.libs['deepgemm'] = SimpleNamespace()
    entries = hc_suite.problem(ctx, case).entries
    assert entries['deepgemm'].status == entries[SPLIT_KEY].status == 'absent'
    del ctx.libs['deepgemm']
    assert list(hc_suite.problem(ctx, case).entries) == ['ours']
