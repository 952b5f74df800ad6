"""The GPU robustness harness (tests/robustness) on the CPU: its problems are legal, deterministic and cover every
kind and edge the run promises, and its checks catch each planted fault (a guard element overwritten, an output
element left unwritten, a wrong value, an input changed) while passing an exact stand-in. The GPU run itself is
scripts/gpu-suite's step robustness."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'robustness'))
import problems  # noqa: E402

ALL = [problems.make_problem(7, i) for i in range(3000)]


def test_same_seed_same_problem():
    assert problems.make_problem(7, 123) == ALL[123]
    assert problems.make_problem(8, 123) != ALL[123]


def test_every_kind_and_layout_comes_up():
    kinds = {p['kind'] for p in ALL}
    assert kinds == set(problems.KINDS)
    dense = [p for p in ALL if p['kind'] == 'dense_bf16']
    assert {(p['layout'], p['a_major'], p['b_major']) for p in dense} >= {
        (lay, a, b) for lay in ('nt', 'nn', 'tn', 'tt') for a in ('k', 'mn') for b in ('k', 'mn')}
    fp8 = [p for p in ALL if p['kind'] == 'dense_fp8']
    assert {(p['layout'], p['recipe']) for p in fp8} == {(lay, r) for lay in ('nt', 'nn', 'tn', 'tt')
                                                         for r in ('1d2d', '1d1d')}
    assert {p['c'] for p in fp8 if p['recipe'] == '1d1d'} == {'none', 'separate', 'in_place'}


def test_sizes_span_the_range_with_odd_multiples():
    ms = [p['m'] for p in ALL if p['kind'].startswith('dense')]
    assert min(m for m in ms if m) == 1 and max(ms) > 4096
    ks = [p['k'] for p in ALL if p['kind'] == 'dense_fp8' and p['k']]
    assert min(ks) == 16 and any((k // 16) % 2 for k in ks) and max(ks) > 4096
    ns = [p['n'] for p in ALL if p['kind'] == 'dense_bf16' and p['n']]
    assert min(ns) == 8 and any((n // 8) % 2 for n in ns)
    assert any(0 in (p['m'], p['n'], p['k']) for p in ALL if p['kind'].startswith('dense'))


def test_problems_meet_the_contracts():
    for p in ALL:
        kind, fp8 = p['kind'], p['kind'].endswith('fp8')
        if kind.startswith('dense') or kind == 'cublaslt':
            assert p['k'] % (16 if fp8 else 8) == 0 and p['n'] % 8 == 0, p
            assert p['a_major'] == 'k' or p['m'] % 8 == 0, p
            assert not fp8 or (p['a_major'], p['b_major']) == ('k', 'k'), p
            assert p['c'] == 'none' or not fp8 or p['recipe'] == '1d1d', p
        elif kind.startswith('m_grouped'):
            assert p['m'] == sum(-(-r // 128) * 128 for r in p['group_rows']) and 0 < p['m'] <= 8192, p
            assert len(p['group_rows']) == p['groups']
        elif kind.startswith('masked'):
            assert len(p['masked_m']) == p['groups'] and all(0 <= m <= p['m_max'] for m in p['masked_m'])
            assert 1 <= p['expected_m'] <= p['m_max']
        elif kind.startswith('k_grouped'):
            assert all(k % (128 if fp8 else 64) == 0 for k in p['ks']) and len(p['ks']) == p['groups']
        elif kind == 'skip_head_mid':
            left, mid, right = p['head_splits']
            assert min(left, mid, right) >= 0 and left + right > 0 and p['n'] % (left + right) == 0, p
            assert math.gcd(left, right) % 8 == 0 and mid % 8 == 0 and p['k'] % 16 == 0 and p['k'] > 0, p
        elif kind == 'hc_prenorm':
            assert p['n'] in (8, 16, 24, 32) and p['k'] % 8 == 0 and p['k'] > 0, p
            assert p['num_splits'] is None or 1 <= p['num_splits'] <= 20, p
        elif kind == 'weight_quant':
            assert p['k'] % 8 == 0 and p['k'] > 0 and p['n'] > 0, p
            assert p['format'] != 'int4' or p['k'] % p['group_size'] == 0, p
            assert p['format'] != 'mxfp4' or p['act'] == 'bf16', p
        elif kind == 'int8':
            assert p['k'] % 16 == 0 and p['k'] > 0 and p['n'] % 8 == 0 and p['n'] > 0, p
    grouped = [p for p in ALL if p['kind'].startswith('m_grouped')]
    assert any(0 in p['group_rows'] for p in grouped)
    assert any(0 in p['masked_m'] for p in ALL if p['kind'].startswith('masked'))
    assert any(0 in p['ks'] for p in ALL if p['kind'].startswith('k_grouped'))
    hc = [p for p in ALL if p['kind'] == 'hc_prenorm']
    assert {p['n'] for p in hc} == {8, 16, 24, 32} and any(p['k'] % 128 for p in hc) and max(p['k'] for p in hc) > 4096
    assert any(p['num_splits'] is None for p in hc) and any(p['num_splits'] == 1 for p in hc)
    assert any(p['num_splits'] and p['num_splits'] > -(-p['k'] // 128) for p in hc)  # splits with no K
    wq = [p for p in ALL if p['kind'] == 'weight_quant']
    assert {(p['format'], p['group_size']) for p in wq} == {('int4', 32), ('int4', 64), ('int4', 128), ('int8', 0),
                                                            ('mxfp4', 32)}
    assert {p['act'] for p in wq} == {'bf16', 'fp16'} and {p['d_dtype'] for p in wq} == {'bf16', 'fp16', 'fp32'}
    assert any(p['k'] % 64 for p in wq) and any(p['n'] % 16 for p in wq)


def test_small_limits_hold():
    lim = problems.SMALL
    for i in range(500):
        p = problems.make_problem(3, i, lim)
        for key in ('m', 'm_max'):
            assert p.get(key, 0) <= max(lim.max_m, 1024), p
        assert p.get('k', 0) <= lim.max_nk and p.get('n', 0) <= lim.max_nk, p


def _run(backend, count=160):
    torch = pytest.importorskip('torch', reason='the harness builds its cases with torch')
    pytest.importorskip('deep_gemm', reason='the FP8 cases use deep_gemm.utils casts')
    import checks
    assert backend in checks.BACKENDS
    rows = []
    torch.manual_seed(0)
    for i in range(count):
        p = problems.make_problem(11, i, problems.SMALL)
        rows.append(checks.run_case(p, 'cpu', backend))
    assert problems.function_name(problems.make_problem(11, 0, problems.SMALL))
    return rows


def test_an_exact_stand_in_passes_every_check():
    rows = _run('reference')
    bad = [r for r in rows if not r['ok']]
    assert not bad, bad[:3]
    # D rounded to bf16 uses up to half the bound, never more.
    assert 0 < max(r['worst'] for r in rows) < 0.6


@pytest.mark.parametrize('fault', ['fault-guard', 'fault-skip', 'fault-value', 'fault-input'])
def test_a_planted_fault_is_caught(fault):
    rows = _run(fault)
    visible = [r for r in rows if r['fault_visible']]
    assert len(visible) > len(rows) // 2
    missed = [r for r in visible if r['ok']]
    assert not missed, missed[:3]


def _tf32_hc_prenorm(case, skip_split=None, drop_last_block=False):
    """What the HC pre-norm kernel computes, on the CPU: B truncated to TF32, fp32 sums over balanced runs of
    128-wide K blocks, one per split (the library's splits added up); optionally a split's slice left unwritten or
    K's last block left out."""
    import torch
    p = case.p
    a, b = case.ga.view.float(), case.gb.view.contiguous()
    b = (b.view(torch.int32) & ~0x1FFF).view(torch.float32)  # 10 mantissa bits, truncated
    k_blocks = -(-p['k'] // 128)
    splits = p['num_splits'] or 3
    k_end = (k_blocks - 1) * 128 if drop_last_block else p['k']
    parts = []
    for s in range(splits):
        cols = slice(min(s * k_blocks // splits * 128, k_end), min((s + 1) * k_blocks // splits * 128, k_end))
        parts.append((a[:, cols] @ b[:, cols].T, a[:, cols].square().sum(-1)))
    if p['num_splits'] is None:
        case.gd.view.copy_(sum(d for d, _ in parts))
        case.gs.view.copy_(sum(s for _, s in parts))
        return
    for s, (d, sq) in enumerate(parts):
        if s != skip_split:
            case.gd.view[s].copy_(d)
            case.gs.view[s].copy_(sq)


def test_hc_prenorm_check_adds_splits_allows_tf32_and_catches_a_lost_split():
    pytest.importorskip('torch', reason='the harness builds its cases with torch')
    from families import build_case
    base = [p for p in (problems.make_problem(5, i, problems.SMALL) for i in range(2000))
            if p['kind'] == 'hc_prenorm' and p['m']][:8]
    assert len(base) == 8
    for p in base:
        for splits in (None, 1, 3, 20):
            case = build_case({**p, 'num_splits': splits}, 'cpu')
            case.fill(p['data_seed'])
            case.prepare()
            _tf32_hc_prenorm(case)
            assert not case.check(), (problems.describe(p), splits)
            if splits and splits > 1:
                case.prepare()
                _tf32_hc_prenorm(case, skip_split=splits - 1)
                assert case.check(), (problems.describe(p), splits)
            case.prepare()
            _tf32_hc_prenorm(case, drop_last_block=True)
            assert any('output 0' in f for f in case.check()), (problems.describe(p), splits)


def test_graph_section_covers_every_exported_gemm():
    pytest.importorskip('deep_gemm', reason='compares with the package\'s names')
    import deep_gemm
    import run
    gemm_names = {n for n in dir(deep_gemm) if callable(getattr(deep_gemm, n)) and
                  ('gemm' in n or 'einsum' in n) and not n.startswith(('_', 'get_', 'set_'))}
    assert set(run.EXPORTED_GEMMS) == gemm_names
    assert set(run.one_problem_per_function(2026, problems.SMALL)) == gemm_names | set(run.OWN_GEMMS)


@pytest.mark.parametrize('fault', ['fault-crash', 'fault-hang'])
def test_a_crashing_or_hanging_problem_is_reported_and_the_run_goes_on(fault, tmp_path):
    pytest.importorskip('torch', reason='the harness builds its cases with torch')
    pytest.importorskip('deep_gemm', reason='the FP8 cases use deep_gemm.utils casts')
    import json
    import subprocess
    harness = os.path.join(os.path.dirname(__file__), '..', 'robustness', 'run.py')
    proc = subprocess.run([sys.executable, harness, 'problems', '--small', '--device', 'cpu', '--backend', fault,
                           '--count', '60', '--workers', '2', '--problem-timeout-s', '8', '--out', str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.load(open(tmp_path / 'problems.json'))
    failed = {r['index']: r['failures'][0] for r in summary['failures']}
    assert set(failed) == {5, 45}, failed  # the planted ones, and every other problem ran
    assert summary['run'] == 60
    word = 'exited with' if fault == 'fault-crash' else 'hang'
    assert all(word in why for why in failed.values()), failed
