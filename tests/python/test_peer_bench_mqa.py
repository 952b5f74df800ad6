"""The peer benchmark's mqa and paged_mqa suites (DeepSeek-V3.2's MQA logits) on the CPU: their shapes and options,
DeepGEMM's windows and its cost and byte counts, the rates and ratios of a row, the report's tables and exit status,
the run loop, and, with torch, the references and checks on tiny CPU tensors against direct loops."""
import json
import math
from types import SimpleNamespace

import pytest

import deep_gemm
from deep_gemm.bench import cli, measure, mqa_cases, mqa_suite, report, stats, suites, timing
from deep_gemm.bench.mqa_suite import paged_alloc_bytes, paged_bytes, paged_flops, prefill_alloc_bytes
from deepgemm_ports import kv_cache_cast_to_fp8

# ---- suites and options -----------------------------------------------------------------------------------------


def test_mqa_suite_is_deepgemms_sm90_prefill_grid_at_head_dim_128_and_two_more_rows():
    cases = suites.SUITES['mqa']
    grid = [c for c in cases if c.head_dim == 128 and not c.compressed]
    assert {(c.seq_len, c.seq_len_kv, c.heads, c.cp) for c in grid} == \
        {(s, kv, h, cp) for s in (2048, 8192) for kv in (8192, 65536) for h in (32, 64) for cp in (True, False)}
    assert len(grid) == 16 and all(mqa_cases.cp_allowed(c.seq_len, c.seq_len_kv) for c in grid)
    extra = [c for c in cases if c not in grid]
    assert extra == [mqa_cases.MqaLogits(8192, 65536, 64, 64), mqa_cases.MqaLogits(8192, 65536, 64, 128, True, True)]
    assert len({c.name for c in cases}) == len(cases) == 18
    assert [c.name for c in cases[:2]] == ['2048x8192x32x128-cp', '2048x8192x32x128']  # DeepGEMM's order: CP first
    assert cases[-1].name == '8192x65536x64x128-cp-compressed'
    assert all(c.max_seqlen_k == 0 for c in cases if not c.compressed)
    assert cases[-1].max_seqlen_k == max(e - s for s, e in zip(*cases[-1].windows())) == 57343
    assert 'mqa' in suites.DTYPE_FREE and suites.select('mqa', None) == list(cases)


def test_paged_suite_is_deepgemms_sm90_decode_grid_within_its_pool():
    cases = suites.SUITES['paged_mqa']
    assert {(c.batch, c.next_n, c.heads, c.avg_kv) for c in cases} == \
        {(b, n, h, kv) for b in (256, 4096) for n in (1, 2) for h in (32, 64) for kv in (8192, 65536)
         if b * kv <= 32 * 1024 * 1024}
    assert len(cases) == 12 and mqa_cases.MAX_KV_POOL_TOKENS == 32 * 1024 * 1024
    assert all(c.batch * c.avg_kv <= mqa_cases.MAX_KV_POOL_TOKENS for c in cases)
    assert not any(c.batch == 4096 and c.avg_kv == 65536 for c in cases)  # 256M tokens: beyond the pool
    assert {(c.head_dim, c.block_kv) for c in cases} == {(128, 64)}
    assert len({c.name for c in cases}) == len(cases) and cases[0].name == '256x1x32x128 kv8192'
    assert 'paged_mqa' in suites.DTYPE_FREE


def test_both_suites_plan_once_whatever_the_dtypes_and_filter_by_name():
    options = cli.parse_args(['--deepgemm', '/tmp/dg', '--suite', 'mqa,paged_mqa', '--dtype', 'fp8',
                              '--shapes', '8192x65536x64x*,4096x2x*'])
    runs = cli.plan(options)
    assert [(s, d) for s, d, _ in runs] == [('mqa', None), ('paged_mqa', None)]
    assert [c.name for c in runs[0][2]] == ['8192x65536x64x128-cp', '8192x65536x64x128', '8192x65536x64x64',
                                            '8192x65536x64x128-cp-compressed']
    assert [c.name for c in runs[1][2]] == ['4096x2x32x128 kv8192', '4096x2x64x128 kv8192']
    assert {'mqa', 'paged_mqa'} <= set(cli.parse_args(['--no-peer', '--suite', 'all']).suites)
    assert 'mqa (DeepSeek-V3.2' in cli.EPILOG and 'paged_mqa (fp8_fp4_paged_mqa_logits' in cli.EPILOG
    assert {'mqa', 'paged_mqa'} <= set(report.FAILING_SUITES)


# ---- DeepGEMM's windows, cost and bytes -------------------------------------------------------------------------

def deepgemm_windows(seq_len, seq_len_kv, disable_cp):
    """DeepGEMM's generate_ks_ke_tests (tests/test_attention.py), on lists."""
    if disable_cp:
        return [0] * seq_len, [i + seq_len_kv - seq_len for i in range(seq_len)]
    chunk_size, cp_size = seq_len // 2, seq_len_kv // seq_len
    cp_id = cp_size // 3
    ke = [0] * seq_len
    for i in range(chunk_size):
        ke[i] = cp_id * chunk_size + i
        ke[i + chunk_size] = (cp_size * 2 - 1 - cp_id) * chunk_size + i
    return [0] * seq_len, ke


@pytest.mark.parametrize('s, kv', [(2048, 8192), (2048, 65536), (8192, 8192), (8192, 65536), (64, 256)])
def test_windows_are_deepgemms_and_cost_has_its_closed_form(s, kv):
    for cp in (True, False):
        assert mqa_cases.MqaLogits(s, kv, 32, 128, cp).windows() == deepgemm_windows(s, kv, not cp)
    assert mqa_cases.MqaLogits(s, kv, 32).cost == s * (kv - s) + s * (s - 1) // 2
    chunk, cp_size = s // 2, kv // s
    cp_id = cp_size // 3
    assert mqa_cases.MqaLogits(s, kv, 32, cp=True).cost == \
        chunk * cp_id * chunk + chunk * (2 * cp_size - 1 - cp_id) * chunk + 2 * (chunk * (chunk - 1) // 2)
    with pytest.raises(ValueError, match=r'^cp: expected seq_len_kv a multiple of an even seq_len'):
        mqa_cases.MqaLogits(3, 9, 32, cp=True).windows()


def test_prefill_cost_flops_and_bytes_by_hand():
    # cp: cp_size 2, cp_id 0, chunk 4: ke = 0, 1, 2, 3 then 12, 13, 14, 15 (ks 0)
    case = mqa_cases.MqaLogits(8, 16, 32, 64, cp=True)
    assert case.windows() == ([0] * 8, [0, 1, 2, 3, 12, 13, 14, 15]) and case.cost == 60
    assert case.flops == 2 * 60 * 32 * 64
    # q fp8 8x32x64, kv fp8 16x64 + fp32 scales 16, weights fp32 8x32, ks and ke int32 8 each, fp32 logits per pair
    assert case.num_bytes == 16384 + 1024 + 64 + 1024 + 64 + 240 == 18800
    assert mqa_cases.MqaLogits(8, 16, 32, 64).cost == sum(range(8, 16)) == 92  # ke = 8 .. 15


def test_paged_bytes_and_flops_by_hand():
    case = mqa_cases.PagedMqaLogits(2, 2, 32, 100)
    # q counted as bf16 [2, 2, 32, 128], weights fp32 [4, 32], 150 tokens of 132 bytes, 150 x 2 fp32 logits
    assert paged_bytes(case, 150) == 32768 + 512 + 19800 + 1200 == 54280
    assert paged_flops(case, 150) == 2 * 150 * 2 * 32 * 128


def test_allocation_sizes_follow_deepgemms_logits_layout():
    assert prefill_alloc_bytes(2048, 8192, 64) == 2048 * 8448 * 4  # 8192 + 256 columns, already 1024-byte aligned
    assert prefill_alloc_bytes(3, 100, 32) == 4 * 512 * 4  # rows to 128 / H = 4, 356 columns to 256
    assert prefill_alloc_bytes(8, 100, 64, max_seqlen_k=300) == 8 * 512 * 4  # compressed: 300 to 512
    assert paged_alloc_bytes(6, 10000) == 6 * 10240 * 4
    # ours allocates as DeepGEMM does: the C++ library's layouts give the same bytes
    fp32 = deep_gemm._C.dtype_codes()['fp32']
    for s, kv, h, max_k in ((2048, 8192, 64, 0), (3, 100, 32, 0), (8, 100, 64, 300), (8192, 65536, 64, 57343)):
        rows, row_stride, _ = deep_gemm._C.mqa_logits_layout(s, kv, h, max_k, fp32)
        assert prefill_alloc_bytes(s, kv, h, max_k) == rows * row_stride * 4
    for length in (192, 10000, 85248):
        assert paged_alloc_bytes(6, length) == 6 * deep_gemm._C.paged_mqa_logits_row_stride(length, fp32) * 4


# ---- rates --------------------------------------------------------------------------------------------------------

def result(status='ok', us=None, message=None):
    return {'status': status, 'message': message, 'label': None, 'diff': 1e-7, 'us': us}


def mqa_row(ours, deepgemm=None, case=mqa_cases.MqaLogits(2048, 8192, 64, 128)):
    results = {'ours': ours} | ({} if deepgemm is None else {'deepgemm': deepgemm})
    return {'shape': case.name, 'flops': case.flops, 'bytes': case.num_bytes, 'results': results,
            'params': mqa_suite.params(case) | {'cost': case.cost, 'max_seqlen_k': case.max_seqlen_k},
            'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}


def paged_row(ours, deepgemm=None, copy=None):
    case = mqa_cases.PagedMqaLogits(256, 1, 64, 8192)
    results = {'ours': ours} | ({} if deepgemm is None else {'deepgemm': deepgemm}) | \
        ({} if copy is None else {'copy': copy})
    return {'shape': case.name, 'flops': paged_flops(case, 2_000_000), 'bytes': paged_bytes(case, 2_000_000),
            'results': results, 'params': mqa_suite.params(case) | {'sum_lens': 2_000_000, 'copy_bytes': 600_000_000},
            'ratio_vs_deepgemm': None, 'ratio_vs_cublas': None}


def test_prefill_rates_are_tflops_from_the_cost_and_the_ratio():
    row = mqa_suite.add_rates(mqa_row(result(us=1000.0), result(us=1500.0)))
    flops = 2 * (2048 * 6144 + 2048 * 2047 // 2) * 64 * 128
    assert row['flops'] == flops
    assert row['ours_tflops'] == pytest.approx(flops / 1000.0 / 1e6)
    assert row['deepgemm_tflops'] == pytest.approx(flops / 1500.0 / 1e6)
    assert row['ours_gbps'] == pytest.approx(row['bytes'] / 1000.0 / 1e3)
    assert row['ratio_vs_deepgemm'] == pytest.approx(1.5)
    assert 'copy_gbps' not in row and 'ours_vs_copy' not in row


def test_missing_or_failed_entries_give_no_rate():
    row = mqa_suite.add_rates(mqa_row(result(us=1000.0)))
    assert row['deepgemm_tflops'] is None and row['ratio_vs_deepgemm'] is None
    row = mqa_suite.add_rates(mqa_row(result('mismatch', us=900.0, message='calc_diff 0.5'), result(us=1500.0)))
    assert row['ours_tflops'] is None and row['ours_gbps'] is None and row['ratio_vs_deepgemm'] is None
    row = mqa_suite.add_rates(paged_row(result('error', message='ValueError: q'), result(us=50.0), result(us=40.0)))
    assert row['ours_gbps'] is None and row['ours_vs_copy'] is None
    assert row['deepgemm_vs_copy'] == pytest.approx(row['deepgemm_gbps'] / row['copy_gbps'])
    row = mqa_suite.add_rates(paged_row(result(us=40.0), copy=result('error', message='x', us=None)))
    assert row['copy_gbps'] is None and row['ours_vs_copy'] is None and row['ours_gbps'] is not None


def test_paged_rates_are_gbps_of_deepgemms_bytes_and_ours_over_copy():
    row = mqa_suite.add_rates(paged_row(result(us=250.0), result(us=300.0), result(us=200.0)))
    num_bytes = 256 * 64 * (128 * 2 + 4) + 2_000_000 * 132 + 2_000_000 * 4
    assert row['bytes'] == num_bytes
    assert row['ours_gbps'] == pytest.approx(num_bytes / 250.0 / 1e3)
    assert row['deepgemm_gbps'] == pytest.approx(num_bytes / 300.0 / 1e3)
    assert row['copy_gbps'] == pytest.approx(600_000_000 / 200.0 / 1e3)
    assert row['ours_vs_copy'] == pytest.approx(num_bytes / 250.0 / 3e6)
    assert row['ratio_vs_deepgemm'] == pytest.approx(1.2)
    assert row['ours_tflops'] == pytest.approx(2 * 2_000_000 * 64 * 128 / 250.0 / 1e6)


# ---- report -----------------------------------------------------------------------------------------------------

def sample_report(suite, rows):
    env = {'gpu': 'NVIDIA H200', 'torch': '2.11', 'cuda': '13.0', 'ours': {'version': 'ours-1', 'file': 'x'},
           'deepgemm': {'version': '2.6.1', 'file': 'y'}, 'timer': 'CUDA events', 'rounds': 2,
           'round_combine': stats.ROUND_COMBINE, 'kernel_timer': False}
    return {'environment': env, 'sections': [report.section(suite, None, rows, mqa_suite.NOTES[suite])]}


def test_report_renders_the_mqa_table_and_geomean(tmp_path):
    compressed = mqa_cases.MqaLogits(8192, 65536, 64, 128, True, True)
    rows = [mqa_suite.add_rates(mqa_row(result(us=1000.0), result(us=1500.0))),
            mqa_suite.add_rates(mqa_row(result(us=20000.0), result('error', message='RuntimeError: boom'),
                                        case=compressed))]
    r = sample_report('mqa', rows)
    assert r['sections'][0]['geomeans'] == {'ratio_vs_deepgemm': {'geomean': pytest.approx(1.5), 'rows': 1}}
    text = report.markdown(r)
    assert '## mqa\n' in text and 'TFLOP/s = 2 · cost · H · D / time' in text
    assert '| S | S_kv | H | D | CP | logits | ours µs | ours TFLOP/s | DeepGEMM µs | DeepGEMM TFLOP/s | ' \
           'DeepGEMM / ours | check |' in text
    tflops = rows[0]['ours_tflops']
    assert f'| 2048 | 8192 | 64 | 128 | off | full | 1000.0 | {tflops:.1f} | 1500.0 | {tflops / 1.5:.1f} | 1.50 | ok |' \
        in text
    assert '| 8192 | 65536 | 64 | 128 | on | compressed (57343) | 20000.0 |' in text
    assert '| error | — | — | DeepGEMM error: RuntimeError: boom |' in text
    assert 'Geometric mean: DeepGEMM / ours 1.500 over 1 rows.' in text
    assert report.exit_status(r) == 0  # the peer's error is reported, not a failure
    json_path, md_path = report.write(r, str(tmp_path / 'out'))
    saved = json.load(open(json_path))['sections'][0]['rows'][1]
    assert saved['params']['max_seqlen_k'] == 57343 and saved['params']['cost'] == compressed.cost
    assert open(md_path).read() == text


def test_report_renders_the_paged_table_with_copy_bandwidth():
    rows = [mqa_suite.add_rates(paged_row(result(us=250.0), result(us=300.0), result(us=200.0)))]
    r = sample_report('paged_mqa', rows)
    geomeans = r['sections'][0]['geomeans']
    assert set(geomeans) == {'ratio_vs_deepgemm', 'ours_vs_copy'}
    text = report.markdown(r)
    assert '| B | next_n | H | D | avg kv | ours µs | ours GB/s | DeepGEMM µs | DeepGEMM GB/s | DeepGEMM / ours | ' \
           'copy GB/s | ours / copy | check |' in text
    row = rows[0]
    assert f"| 256 | 1 | 64 | 128 | 8192 | 250.0 | {row['ours_gbps']:.0f} | 300.0 | {row['deepgemm_gbps']:.0f} | " \
           f"1.20 | 3000 | {row['ours_vs_copy']:.2f} | ok |" in text
    assert f"ours / copy GB/s {row['ours_vs_copy']:.3f} over 1 rows" in text


@pytest.mark.parametrize('suite', ['mqa', 'paged_mqa'])
def test_a_mismatch_or_our_failure_fails_the_run(suite):
    make = mqa_row if suite == 'mqa' else paged_row
    mismatch = mqa_suite.add_rates(make(result('mismatch', us=1.0, message='3 positions where the -inf pattern'),
                                        result(us=1.0)))
    r = sample_report(suite, [mismatch])
    assert report.exit_status(r) == 1
    assert f'Failed rows (a mismatch, or our call failing): {suite} {mismatch["shape"]}.' in report.markdown(r)
    assert '| 1.0 ✗ |' in report.markdown(r)
    for status in ('error', 'absent'):
        assert report.exit_status(sample_report(suite, [mqa_suite.add_rates(make(result(status, message='x')))])) == 1
    peer_mismatch = mqa_suite.add_rates(make(result(us=1.0), result('mismatch', us=1.0, message='calc_diff 1')))
    assert report.exit_status(sample_report(suite, [peer_mismatch])) == 1  # any mismatch fails a run


def test_a_case_whose_inputs_failed_still_renders():
    case = suites.SUITES['mqa'][-1]
    row = cli.failed_row(case, 'mqa', RuntimeError('CUDA out of memory'))
    assert row['params'] == mqa_suite.params(case)
    text = report.markdown(sample_report('mqa', [row]))
    assert '| 8192 | 65536 | 64 | 128 | on | compressed | error | — | — | — | — | ours error: bench: RuntimeError: ' \
           'CUDA out of memory |' in text
    case = suites.SUITES['paged_mqa'][0]
    text = report.markdown(sample_report('paged_mqa', [cli.failed_row(case, 'paged_mqa', MemoryError('x'))]))
    assert '| 256 | 1 | 32 | 128 | 8192 | error | — | — | — | — | — | — | ours error: bench: MemoryError: x |' in text


# ---- the run loop -----------------------------------------------------------------------------------------------

def fake_gpu_torch():
    props = SimpleNamespace(multi_processor_count=132)
    cuda = SimpleNamespace(current_device=lambda: 0, get_device_properties=lambda i: props,
                           get_device_name=lambda: 'fake GPU', synchronize=lambda: None, empty_cache=lambda: None)
    return SimpleNamespace(cuda=cuda, __version__='0.0', version=SimpleNamespace(cuda='0.0'))


def test_run_measures_each_case_and_adds_its_rates(monkeypatch):
    seen = []

    def problem(ctx, case):
        seen.append(case.name)
        keys = ('ours', 'deepgemm') + (('copy', ) if hasattr(case, 'batch') else ())
        entries = {k: measure.Entry(fn=(lambda k: lambda: k)(k), verify=lambda out: (True, None, 0.0)) for k in keys}
        extra = {'copy_bytes': 10**9} if hasattr(case, 'batch') else {}
        return measure.Problem(case.name, entries, flops=4e9, num_bytes=10**9,
                               params=mqa_suite.params(case) | extra)
    monkeypatch.setattr(mqa_suite, 'problem', problem)
    monkeypatch.setattr(timing, 'Flusher', lambda torch: None)
    monkeypatch.setattr(timing, 'time_events', lambda torch, fn, flush, w, r: (
        {'ours': 1000.0, 'deepgemm': 1250.0, 'copy': 800.0}[fn()], 10))
    options = cli.parse_args(['--deepgemm', '/tmp/dg', '--suite', 'mqa,paged_mqa', '--rounds', '1',
                              '--shapes', '2048x8192x32x*,256x1x32x*'])
    result = cli.run(fake_gpu_torch(), options, {'ours': deep_gemm, 'deepgemm': SimpleNamespace(utils=None)})
    assert seen == ['2048x8192x32x128-cp', '2048x8192x32x128', '256x1x32x128 kv8192', '256x1x32x128 kv65536']
    mqa, paged = result['sections']
    assert (mqa['suite'], mqa['note'], paged['suite'], paged['note']) == \
        ('mqa', mqa_suite.NOTES['mqa'], 'paged_mqa', mqa_suite.NOTES['paged_mqa'])
    assert [r['ours_tflops'] for r in mqa['rows']] == [pytest.approx(4.0)] * 2
    assert [r['ours_vs_copy'] for r in paged['rows']] == [pytest.approx(0.8)] * 2  # 1 GB/s over 1.25 GB/s
    assert paged['geomeans']['ratio_vs_deepgemm'] == {'geomean': pytest.approx(1.25), 'rows': 2}
    assert report.exit_status(result) == 0


# ---- references and checks on CPU tensors (needs torch) ----------------------------------------------------------

@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def loop_mqa_logits(torch, q, kv, weights, ks, ke):
    s, h, _ = q.shape
    out = torch.full((s, kv.shape[0]), float('-inf'), dtype=torch.float64)
    for m in range(s):
        for n in range(max(int(ks[m]), 0), min(int(ke[m]), kv.shape[0])):
            out[m, n] = sum(max(float(q[m, i].double() @ kv[n].double()), 0.0) * float(weights[m, i])
                            for i in range(h))
    return out


def test_prefill_reference_matches_a_direct_loop_and_its_finite_count_is_the_cost(torch, monkeypatch):
    from deep_gemm.bench import mqa_ref
    g = torch.Generator().manual_seed(1)
    q, kv, w = torch.randn(6, 4, 8, generator=g), torch.randn(20, 8, generator=g), torch.randn(6, 4, generator=g)
    ks = torch.tensor([0, -3, 5, 19, 4, 0], dtype=torch.int32)  # a negative start, an empty and a clamped window
    ke = torch.tensor([1, 7, 5, 25, 12, 20], dtype=torch.int32)
    expected = loop_mqa_logits(torch, q, kv, w, ks, ke)
    whole = mqa_ref.ref_mqa_logits(torch, q, kv, w, ks, ke)
    monkeypatch.setattr(mqa_ref, 'CHUNK_BYTES', 6 * 4 * 4 * 3)  # three kv tokens a chunk
    chunked = mqa_ref.ref_mqa_logits(torch, q, kv, w, ks, ke)
    assert torch.equal(whole.isinf(), expected.isinf()) and torch.equal(chunked.isinf(), expected.isinf())
    assert torch.allclose(whole.double(), expected, atol=1e-5) and torch.allclose(chunked.double(), expected, atol=1e-5)
    for case in (mqa_cases.MqaLogits(8, 16, 32, 8, cp=True), mqa_cases.MqaLogits(8, 16, 32, 8),
                 mqa_cases.MqaLogits(64, 256, 32, 8, cp=True)):
        ks, ke = (torch.tensor(x, dtype=torch.int32) for x in case.windows())
        ref = mqa_ref.ref_mqa_logits(torch, torch.randn(case.seq_len, 32, 8), torch.randn(case.seq_len_kv, 8),
                                     torch.randn(case.seq_len, 32), ks, ke)
        assert int((ref != float('-inf')).sum()) == case.cost


def test_fused_cache_is_deepgemms_cast_and_dequantises_to_its_cast_back(torch):
    from deep_gemm.bench import mqa_ref
    torch.manual_seed(3)
    cache = mqa_ref.fused_kv_cache(torch, 5, 64, 16, 'cpu')
    torch.manual_seed(3)
    expected, cast_back = kv_cache_cast_to_fp8(torch, torch.randn((5, 64, 16), dtype=torch.bfloat16)
                                                        .view(5, 64, 1, 16))
    assert cache.dtype == torch.uint8 and tuple(cache.shape) == (5, 64, 1, 20) and torch.equal(cache, expected)
    assert torch.equal(mqa_ref.dequant_blocks(torch, cache), cast_back.view(5, 64, 16))
    assert torch.equal(mqa_ref.dequant_blocks(torch, cache[torch.tensor([[4, 0], [2, 2]])]),
                       cast_back.view(5, 64, 16)[torch.tensor([[4, 0], [2, 2]])])


def loop_paged_logits(torch, q, cache, weights, lens, table, max_len):
    from deep_gemm.bench.mqa_ref import dequant_blocks
    b, n, h, _ = q.shape
    out = torch.full((b * n, max_len), float('-inf'), dtype=torch.float64)
    for i in range(b):
        for j in range(n):
            for t in range(int(lens[i, j])):
                k = dequant_blocks(torch, cache[int(table[i, t // 64])])[t % 64].double()
                out[i * n + j, t] = sum(max(float(q[i, j, x].double() @ k), 0.0) * float(weights[i * n + j, x])
                                        for x in range(h))
    return out


def test_paged_reference_matches_a_direct_loop_in_chunks_of_sequences(torch, monkeypatch):
    from deep_gemm.bench import mqa_ref
    torch.manual_seed(4)
    cache = mqa_ref.fused_kv_cache(torch, 7, 64, 8, 'cpu')
    q, w = torch.randn(3, 2, 4, 8), torch.randn(6, 4)
    table = torch.tensor([[6, 1, 0], [3, 0, 0], [2, 4, 5]], dtype=torch.int32)  # unused entries 0
    lens = torch.tensor([[100, 130], [0, 64], [150, 192]], dtype=torch.int32)
    expected = loop_paged_logits(torch, q, cache, w, lens, table, 192)
    monkeypatch.setattr(mqa_ref, 'CHUNK_BYTES', 192 * 4 * 8)  # one sequence a chunk
    got = mqa_ref.ref_paged_mqa_logits(torch, q, cache, w, lens, table, 192)
    assert torch.equal(got.isinf(), expected.isinf()) and torch.allclose(got.double(), expected, atol=1e-5)


def test_compare_counts_the_inf_pattern_and_takes_calc_diff_over_the_region(torch):
    from deep_gemm.bench.mqa_ref import compare
    from deep_gemm.testing import calc_diff
    inf = float('-inf')
    ref = torch.tensor([[1.0, 2.0, inf], [inf, 3.0, -1.0]])
    rows = lambda r0, r1: ref[r0:r1]
    assert compare(torch, ref.clone(), rows, 2, 3) == (0, 0.0)
    values = torch.tensor([[1.0, 2.5, inf], [inf, 3.0, -1.0]])
    wrong, diff = compare(torch, values, rows, 2, 3)
    assert wrong == 0 and diff == pytest.approx(float(calc_diff(values.masked_fill(ref == inf, 0),
                                                                ref.masked_fill(ref == inf, 0))))
    wrong, diff = compare(torch, torch.tensor([[1.0, 2.0, 0.0], [inf, 3.0, inf]]), rows, 2, 3)
    assert wrong == 2 and math.isnan(diff)  # a finite value where -inf belongs, and -inf where a value does
    nan = compare(torch, torch.tensor([[1.0, float('nan'), inf], [inf, 3.0, -1.0]]), rows, 2, 3)
    assert nan[0] == 0 and math.isnan(nan[1])
    # outside the region, anything goes (unwritten columns of paged and compressed logits)
    region = lambda r0, r1, r: torch.tensor([[True, True, False], [False, True, True]])[r0:r1]
    garbage = torch.tensor([[1.0, 2.0, float('nan')], [5.0, 3.0, -1.0]])
    assert compare(torch, garbage, rows, 2, 3, region) == (0, 0.0)


# ---- problems end to end on the CPU, with libraries written in torch ---------------------------------------------

def direct_prefill(torch):
    from deep_gemm.bench.mqa_ref import ref_mqa_logits

    def fp8_fp4_mqa_logits(q, kv, weights, ks, ke, clean_logits=True, max_seqlen_k=0, logits_dtype=None):
        full = ref_mqa_logits(torch, q[0].float(), kv[0].float() * kv[1][:, None], weights, ks, ke)
        if not max_seqlen_k:
            return full
        out = torch.full((full.shape[0], max_seqlen_k), float('nan'))  # past each window: unwritten
        for i in range(full.shape[0]):
            out[i, :int(ke[i] - ks[i])] = full[i, int(ks[i]):int(ke[i])]
        return out
    return fp8_fp4_mqa_logits


@pytest.mark.parametrize('case', [mqa_cases.MqaLogits(64, 256, 32, 32, cp=True), mqa_cases.MqaLogits(64, 100, 64, 64),
                                  mqa_cases.MqaLogits(64, 256, 32, 32, cp=True, compressed=True)], ids=lambda c: c.name)
def test_prefill_problem_checks_each_library_on_the_same_inputs(torch, monkeypatch, case):
    monkeypatch.setattr(mqa_suite, 'DEVICE', 'cpu')
    calls = []
    good = direct_prefill(torch)

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return good(*args, **kwargs)
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': SimpleNamespace(fp8_fp4_mqa_logits=recording),
                                                     'deepgemm': SimpleNamespace(fp8_fp4_mqa_logits=recording)})
    problem = mqa_suite.problem(ctx, case)
    assert list(problem.entries) == ['ours', 'deepgemm'] and problem.flops == case.flops
    assert problem.params['cost'] == case.cost and problem.params['max_seqlen_k'] == case.max_seqlen_k
    for key in ('ours', 'deepgemm'):
        entry = problem.entries[key]
        entry.prepare()
        assert entry.verify(entry.fn())[:2] == (True, None)
    (a, ka), (b, kb) = calls
    assert all(x is y for x, y in zip(a[2:], b[2:])) and a[0][0] is b[0][0] and a[1][0] is b[1][0]  # same tensors
    assert a[0][1] is None and a[0][0].dtype == torch.float8_e4m3fn and a[1][1].dtype == torch.float32
    assert ka == kb == {'clean_logits': not case.compressed, 'max_seqlen_k': case.max_seqlen_k,
                        'logits_dtype': torch.float32}


def test_prefill_check_catches_a_wrong_mask_wrong_values_and_a_missing_function(torch, monkeypatch):
    monkeypatch.setattr(mqa_suite, 'DEVICE', 'cpu')
    good, case = direct_prefill(torch), mqa_cases.MqaLogits(64, 256, 32, 32, cp=True)

    def unclean(*args, **kwargs):  # clean_logits ignored: 0 instead of -inf outside the windows
        out = good(*args, **kwargs)
        return out.masked_fill(out == float('-inf'), 0.0)

    def scaled(*args, **kwargs):
        return good(*args, **kwargs) * 1.1
    for f, expected in ((unclean, 'positions where the -inf pattern differs'), (scaled, 'calc_diff')):
        ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': SimpleNamespace(fp8_fp4_mqa_logits=f)})
        ok, message, diff = (lambda e: e.verify(e.fn()))(mqa_suite.problem(ctx, case).entries['ours'])
        assert not ok and expected in message, message
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': SimpleNamespace(), 'deepgemm': SimpleNamespace()})
    entries = mqa_suite.problem(ctx, case).entries
    assert entries['ours'].status == entries['deepgemm'].status == 'absent'


def test_our_functions_come_from_the_top_level():
    for name in ('fp8_fp4_mqa_logits', 'fp8_fp4_paged_mqa_logits', 'get_paged_mqa_logits_metadata', 'get_num_sms'):
        assert mqa_suite.lookup(deep_gemm, name) is getattr(deep_gemm, name), name


def paged_library(torch, schedules, write=True):
    from deep_gemm.bench.mqa_ref import ref_paged_mqa_logits

    def metadata(context_lens, block_kv, num_sms):
        schedules.append((context_lens, block_kv, num_sms))
        return torch.zeros((num_sms + 1, 2), dtype=torch.int32)

    def logits(q, kv_cache, weights, context_lens, block_table, schedule, max_context_len, clean_logits=False,
               logits_dtype=None):
        assert schedule.shape == (schedules[-1][2] + 1, 2) and not clean_logits
        ref = ref_paged_mqa_logits(torch, q[0].float(), kv_cache, weights, context_lens, block_table, max_context_len)
        # past each row's context: garbage, as DeepGEMM leaves it with clean_logits=False
        return ref.masked_fill(ref == float('-inf'), float('nan')) if write else torch.full_like(ref, float('nan'))
    return SimpleNamespace(get_paged_mqa_logits_metadata=metadata, fp8_fp4_paged_mqa_logits=logits,
                           get_num_sms=lambda: 7)


def test_paged_problem_checks_both_libraries_and_copies_the_cache(torch, monkeypatch):
    monkeypatch.setattr(mqa_suite, 'DEVICE', 'cpu')
    schedules = []
    case = mqa_cases.PagedMqaLogits(3, 2, 4, 100, head_dim=16)
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': paged_library(torch, schedules),
                                                     'deepgemm': paged_library(torch, schedules)})
    problem = mqa_suite.problem(ctx, case)
    assert list(problem.entries) == ['ours', 'deepgemm', 'copy']
    assert len(schedules) == 2 and schedules[0][0] is schedules[1][0]  # each its own schedule, same context_lens
    lens, block_kv, num_sms = schedules[0]
    assert (block_kv, num_sms, lens.dtype, tuple(lens.shape)) == (64, 7, torch.int32, (3, 2))
    p = problem.params
    seq_lens = lens[:, -1]
    assert p['sum_lens'] == int(seq_lens.sum()) and all(70 <= int(x) < 130 for x in seq_lens)
    assert bool((lens[:, 0] <= seq_lens).all())
    blocks = (seq_lens + 63) // 64
    assert p['pool_blocks'] == int(blocks.sum()) and p['max_context_len'] == int(blocks.max()) * 64
    assert p['copy_bytes'] == 2 * p['pool_blocks'] * 64 * 20
    assert problem.num_bytes == paged_bytes(case, p['sum_lens']) and problem.flops == paged_flops(case, p['sum_lens'])
    for key in ('ours', 'deepgemm', 'copy'):
        entry = problem.entries[key]
        if entry.prepare:
            entry.prepare()
        ok, message, _ = entry.verify(entry.fn())
        assert ok and message is None, (key, message)
    ctx.libs = {'ours': paged_library(torch, schedules, write=False)}
    ok, message, diff = (lambda e: e.verify(e.fn()))(mqa_suite.problem(ctx, case).entries['ours'])
    assert not ok and math.isnan(diff) and 'calc_diff nan' in message


def test_a_library_refusing_the_schedule_is_an_error_entry(torch, monkeypatch):
    monkeypatch.setattr(mqa_suite, 'DEVICE', 'cpu')
    lib = paged_library(torch, [])

    def refuse(context_lens, block_kv, num_sms):
        raise ValueError('block_kv: expected 64\nmore')
    lib.get_paged_mqa_logits_metadata = refuse
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': lib, 'deepgemm': SimpleNamespace(get_num_sms=lambda: 7)})
    entries = mqa_suite.problem(ctx, mqa_cases.PagedMqaLogits(2, 1, 4, 100, head_dim=16)).entries
    assert (entries['ours'].status, entries['ours'].message) == \
        ('error', 'get_paged_mqa_logits_metadata: ValueError: block_kv: expected 64')
    assert entries['deepgemm'].status == 'absent' and 'fp8_fp4_paged_mqa_logits' in entries['deepgemm'].message
