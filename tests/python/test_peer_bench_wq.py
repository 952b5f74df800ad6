"""The peer benchmark's wq suite (deep_gemm.weight_quant.gemm) on the CPU: its shapes and options, the speed-up and
read-floor arithmetic of a row, the report's wq table and exit status."""
import pytest

from deep_gemm.bench import cli, report, suites, wq_suite


def test_wq_suite_covers_every_format_and_m_and_is_dtype_free():
    cases = [c for c in suites.SUITES['wq'] if not hasattr(c, 'experts')]
    assert len({c.name for c in suites.SUITES['wq']}) == len(suites.SUITES['wq'])
    assert {c.weight for c in cases} == set(suites.WQ_WEIGHTS)
    assert {c.m for c in cases} == {1, 16, 64, 4096}
    assert len({c.name for c in cases}) == len(cases)
    assert cases[0].name == 'int4g128 1x4096x7168' and cases[0].flops == 2 * 4096 * 7168
    assert not any(c.weight == 'int4g32' and c.m == 4096 for c in cases)
    # An int4 weight needs its group to divide K: gpt-oss's K = 2880 runs as g32 (and int8, MXFP4), never g128.
    assert all(c.k % suites.wq_group_size(c.weight) == 0 for c in cases)
    assert {c.weight for c in cases if c.k == 2880} == {'int4g32', 'int8', 'mxfp4'}
    assert 'wq' in suites.DTYPE_FREE
    [(suite, dtype, selected)] = cli.plan(cli.parse_args(['--no-peer', '--suite', 'wq', '--shapes', 'mxfp4 1x*']))
    assert (suite, dtype) == ('wq', None)
    assert [c.name for c in selected] == [f'mxfp4 1x{n}x{k}' for n, k in suites.WQ_NK]
    assert 'wq (deep_gemm.weight_quant.gemm' in cli.EPILOG


def test_wq_suite_has_moe_decoding_over_32_experts():
    moe = [c for c in suites.SUITES['wq'] if hasattr(c, 'experts')]
    assert moe == list(suites.WQ_MASKED) and {c.experts for c in moe} == {32}
    assert {(c.weight, c.n, c.k) for c in moe} == {('mxfp4', 5760, 2880), ('mxfp4', 2880, 2880),
                                                   ('int4g128', 4096, 7168), ('int4g128', 7168, 2048)}
    assert {c.expected_m for c in moe} == {1, 8, 32} and all(c.max_m >= 2 * c.expected_m for c in moe)
    assert moe[0].name == 'mxfp4 32x1x5760x2880'
    [(_, _, selected)] = cli.plan(cli.parse_args(['--no-peer', '--suite', 'wq', '--shapes', 'int4g128 32x*']))
    assert [c.name for c in selected] == [c.name for c in moe if c.weight == 'int4g128']


def test_wq_table_names_moe_rows_by_experts_and_tokens():
    row = wq_suite.add_rates(wq_row(result(us=30.0), result(us=90.0), result(us=40.0)))
    row['params'].update(experts=32, expected_m=8)
    text = report.markdown({'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2,
                                            'round_combine': 'mean'}, 'sections': [report.section('wq', None, [row])]})
    assert '| int4g128 | 32x~8 | 4096 | 4096 |' in text


def result(status='ok', us=None, message=None):
    return {'status': status, 'message': message, 'label': None, 'diff': 1e-6, 'us': us}


def wq_row(ours, bf16=None, copy=None, packed=8_650_752, copy_bytes=16_777_216):
    results = {'ours': ours}
    if bf16 is not None:
        results[wq_suite.BF16_KEY] = bf16
    if copy is not None:
        results['copy'] = copy
    return {'shape': 'int4g128 1x4096x4096', 'flops': 2 * 4096 * 4096, 'bytes': packed, 'results': results,
            'params': {'m': 1, 'n': 4096, 'k': 4096, 'weight': 'int4g128', 'packed_bytes': packed,
                       'copy_bytes': copy_bytes}, 'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}


def test_rates_are_the_bf16_speed_up_and_the_read_floor_at_copy_bandwidth():
    row = wq_suite.add_rates(wq_row(result(us=2.5), result(us=9.0), result(us=4.0)))
    assert row['ratio_vs_bf16'] == pytest.approx(3.6)
    assert row['copy_gbps'] == pytest.approx(16_777_216 / 4.0 / 1e3)  # 2 bytes moved per byte of codes copied
    assert row['read_floor_us'] == pytest.approx(8_650_752 / (16_777_216 / 4.0 / 1e3) / 1e3)
    assert row['floor_vs_ours'] == pytest.approx(row['read_floor_us'] / 2.5)
    # Missing or failed entries leave their ratios empty rather than wrong.
    row = wq_suite.add_rates(wq_row(result('error', message='boom'), result(us=9.0)))
    assert row['ratio_vs_bf16'] is None and row['read_floor_us'] is None and row['floor_vs_ours'] is None


def test_report_has_a_wq_table_and_a_failed_wq_row_fails_the_run():
    good = wq_suite.add_rates(wq_row(result(us=2.5), result(us=9.0), result(us=4.0)))
    section = report.section('wq', None, [good], wq_suite.NOTE)
    assert set(section['geomeans']) == {'ratio_vs_bf16', 'floor_vs_ours', 'ratio_vs_deepgemm'}
    text = report.markdown({'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2,
                                            'round_combine': 'mean'}, 'sections': [section]})
    assert '| weight | m | n | k | packed MB | ours µs | our BF16 µs | BF16 / ours |' in text
    assert '| int4g128 | 1 | 4096 | 4096 | 8.65 | 2.5 | 9.0 | 3.60 |' in text
    assert 'our BF16 / ours 3.600 over 1 rows' in text
    assert report.exit_status({'sections': [section]}) == 0
    bad = wq_suite.add_rates(wq_row(result('mismatch', us=2.0, message='diff 0.5'), result(us=9.0)))
    assert report.exit_status({'sections': [report.section('wq', None, [bad])]}) == 1
