"""The report: Markdown tables per suite and dtype (times, ratios, checks, geometric means) and the JSON and
Markdown files. A report is a dict: {'environment': {...}, 'sections': [{'suite', 'dtype', 'rows', ...}]}."""
import json
import os

from . import stats

GEMM_SUITES = ('deepseek', 'decode', 'ragged', 'grouped', 'masked')
# Suites whose rows fail the run when our call fails (a mismatch fails it in any suite).
FAILING_SUITES = GEMM_SUITES + ('hc', 'wq', 'int8', 'fp8_fp4', 'moe', 'mqa', 'paged_mqa')
NAMES = {'ours': 'ours', 'tilegemm': 'tilegemm bench', 'deepgemm': 'DeepGEMM', 'deepgemm_split16': 'DeepGEMM 16 splits',
         'cublas': 'cuBLAS', 'copy': 'copy', 'ours_bf16': 'our BF16'}


def _num(value, digits=1):
    return '—' if value is None else f'{value:.{digits}f}'


def _ratio(value, digits=2):
    return '—' if value is None else f'{value:.{digits}f}'


def _time(row, key, metric='us'):
    r = row['results'].get(key)
    if r is None:
        return '—'
    if r['status'] in ('ok', 'mismatch') and r.get(metric) is not None:
        return _num(r[metric]) + (' ✗' if r['status'] == 'mismatch' else '')
    return '—' if r['status'] in ('ok', 'mismatch') else r['status']


def _short(text, limit=90):
    text = ' '.join(str(text).split()).replace('|', '\\|')
    return text if len(text) <= limit else text[:limit - 1] + '…'


def check_cell(row):
    """'ok' when every library that ran matched its reference; otherwise what went wrong, per library."""
    notes = []
    for key, r in row['results'].items():
        if r['status'] == 'ok':
            continue
        detail = f": {_short(r['message'])}" if r.get('message') else ''
        notes.append(f"{NAMES.get(key, key)} {r['status'].upper() if r['status'] == 'mismatch' else r['status']}"
                     f"{detail}")
    return '; '.join(notes) if notes else 'ok'


def row_failed(row):
    """A mismatch anywhere, or our call failing on a case that it should run."""
    results = row['results']
    return any(r['status'] == 'mismatch' for r in results.values()) or \
        results.get('ours', {}).get('status') in ('error', 'absent')


def geomeans(rows, keys=('ratio_vs_deepgemm', 'ratio_vs_cublas')):
    out = {}
    for key in keys:
        values = [r.get(key) for r in rows if r.get(key) is not None]
        out[key] = {'geomean': stats.geomean(values), 'rows': len(values)}
    return out


def _gemm_table(section, kernel_timer):
    tilegemm = any('tilegemm' in row['results'] for row in section['rows'])
    cols = ['shape', 'ours µs'] + (['tilegemm bench µs'] if tilegemm else []) + ['DeepGEMM µs', 'cuBLAS µs']
    if kernel_timer:
        cols += ['ours kernel µs', 'DeepGEMM kernel µs', 'cuBLAS kernel µs']
    cols += ['ours TFLOP/s'] + (['ours / tilegemm bench'] if tilegemm else []) + \
        ['DeepGEMM / ours', 'cuBLAS / ours', 'check']
    lines = ['| ' + ' | '.join(cols) + ' |', '|' + '|'.join(['---'] + ['---:'] * (len(cols) - 2) + ['---']) + '|']
    for row in section['rows']:
        ours = row['results'].get('ours', {})
        cells = [row['shape'], _time(row, 'ours')] + ([_time(row, 'tilegemm')] if tilegemm else []) + \
            [_time(row, 'deepgemm'), _time(row, 'cublas')]
        if kernel_timer:
            cells += [_time(row, k, 'kernel_us') for k in ('ours', 'deepgemm', 'cublas')]
        us = ours.get('us') if ours.get('status') == 'ok' else None
        cells += [_num(stats.tflops(row.get('flops'), us))] + \
            ([_ratio(row.get('ours_vs_tilegemm'), 3)] if tilegemm else []) + \
            [_ratio(row['ratio_vs_deepgemm']), _ratio(row['ratio_vs_cublas']), check_cell(row)]
        lines.append('| ' + ' | '.join(cells) + ' |')
    return lines


def _host_table(section):
    lines = ['| call | ours host µs | DeepGEMM host µs | DeepGEMM / ours | ours wall µs/call | '
             'DeepGEMM wall µs/call | check |', '|---|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        lines.append(f"| {row['shape']} | {_time(row, 'ours', 'host_us')} | {_time(row, 'deepgemm', 'host_us')} | "
                     f"{_ratio(row['ratio_vs_deepgemm'])} | {_time(row, 'ours', 'wall_us')} | "
                     f"{_time(row, 'deepgemm', 'wall_us')} | {check_cell(row)} |")
    return lines


def _layout_table(section):
    lines = ['| helper | scales | MB moved | ours µs | ours GB/s | DeepGEMM µs | DeepGEMM GB/s | copy GB/s | '
             'ours/copy GB/s | DeepGEMM/copy GB/s | DeepGEMM / ours | check |',
             '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        scales = (f"{p['groups']}x" if p['groups'] > 1 else '') + f"{p['mn']}x{p['kb']} (K {p['k']})"
        lines.append(f"| {p['helper']} | {scales} | {row['bytes'] / 1e6:.1f} | {_time(row, 'ours')} | "
                     f"{_num(row.get('ours_gbps'), 0)} | {_time(row, 'deepgemm')} | "
                     f"{_num(row.get('deepgemm_gbps'), 0)} | {_num(row.get('copy_gbps'), 0)} | "
                     f"{_ratio(row.get('ours_vs_copy'))} | {_ratio(row.get('deepgemm_vs_copy'))} | "
                     f"{_ratio(row['ratio_vs_deepgemm'])} | {check_cell(row)} |")
    return lines


def _hc_table(section):
    lines = ['| m | n | k | ours µs | ours GB/s | DeepGEMM none µs | DeepGEMM none GB/s | DeepGEMM 16 µs | '
             'DeepGEMM 16 GB/s | DeepGEMM none / ours | DeepGEMM best / ours | check |',
             '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        lines.append(f"| {p.get('m', '—')} | {p.get('n', '—')} | {p.get('k', '—')} | {_time(row, 'ours')} | "
                     f"{_num(row.get('ours_gbps'), 0)} | {_time(row, 'deepgemm')} | "
                     f"{_num(row.get('deepgemm_gbps'), 0)} | {_time(row, 'deepgemm_split16')} | "
                     f"{_num(row.get('deepgemm_split16_gbps'), 0)} | {_ratio(row.get('ratio_vs_deepgemm'))} | "
                     f"{_ratio(row.get('ratio_vs_deepgemm_best'))} | {check_cell(row)} |")
    return lines


def _m_cell(params):
    """The m column: the rows, or for MoE rows experts x ~tokens per expert."""
    return f"{params['experts']}x~{params['expected_m']}" if 'experts' in params else params.get('m', '—')


def _wq_table(section):
    lines = ['| weight | m | n | k | packed MB | ours µs | our BF16 µs | BF16 / ours | DeepGEMM BF16 µs | read floor µs | '
             'floor / ours | check |',
             '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        packed = p.get('packed_bytes')
        lines.append(f"| {p.get('weight', '—')} | {_m_cell(p)} | {p.get('n', '—')} | {p.get('k', '—')} | "
                     f"{_num(None if packed is None else packed / 1e6, 2)} | {_time(row, 'ours')} | "
                     f"{_time(row, 'ours_bf16')} | {_ratio(row.get('ratio_vs_bf16'))} | {_time(row, 'deepgemm')} | "
                     f"{_num(row.get('read_floor_us'), 2)} | {_ratio(row.get('floor_vs_ours'))} | {check_cell(row)} |")
    return lines


def _fp8_fp4_table(section):
    lines = ['| m | n | k | ours (FP4 B) µs | our FP8 µs | FP8 / ours | our MXFP8 µs | FP8 / MXFP8 | DeepGEMM FP8 µs | '
             'check |', '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        lines.append(f"| {_m_cell(p)} | {p.get('n', '—')} | {p.get('k', '—')} | {_time(row, 'ours')} | "
                     f"{_time(row, 'ours_fp8')} | {_ratio(row.get('ratio_vs_fp8'))} | {_time(row, 'ours_mxfp8')} | "
                     f"{_ratio(row.get('mxfp8_vs_fp8'))} | {_time(row, 'deepgemm')} | "
                     f"{check_cell(row)} |")
    return lines


def _moe_table(section):
    lines = ['| tokens | experts | active | ours µs | our unfused µs | unfused / ours | DeepGEMM unfused µs | '
             'DeepGEMM unfused / ours | read floor µs | floor / ours | check |',
             '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        lines.append(f"| {p.get('tokens', '—')} | top-{p.get('topk', '—')} of {p.get('experts', '—')} | "
                     f"{p.get('active_experts', '—')} | {_time(row, 'ours')} | {_time(row, 'ours_unfused')} | "
                     f"{_ratio(row.get('unfused_vs_ours'))} | {_time(row, 'deepgemm')} | "
                     f"{_ratio(row.get('ratio_vs_deepgemm'))} | {_num(row.get('read_floor_us'))} | "
                     f"{_ratio(row.get('floor_vs_ours'))} | {check_cell(row)} |")
    return lines


def _mqa_table(section):
    lines = ['| S | S_kv | H | D | CP | logits | ours µs | ours TFLOP/s | DeepGEMM µs | DeepGEMM TFLOP/s | '
             'DeepGEMM / ours | check |', '|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        logits = f"compressed ({p['max_seqlen_k']})" if p.get('max_seqlen_k') else \
            'compressed' if p.get('compressed') else 'full'
        lines.append(f"| {p.get('seq_len', '—')} | {p.get('seq_len_kv', '—')} | {p.get('heads', '—')} | "
                     f"{p.get('head_dim', '—')} | {'on' if p.get('cp') else 'off'} | {logits} | {_time(row, 'ours')} | "
                     f"{_num(row.get('ours_tflops'))} | {_time(row, 'deepgemm')} | "
                     f"{_num(row.get('deepgemm_tflops'))} | {_ratio(row.get('ratio_vs_deepgemm'))} | "
                     f"{check_cell(row)} |")
    return lines


def _paged_mqa_table(section):
    lines = ['| B | next_n | H | D | avg kv | ours µs | ours GB/s | DeepGEMM µs | DeepGEMM GB/s | DeepGEMM / ours | '
             'copy GB/s | ours / copy | check |', '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for row in section['rows']:
        p = row['params']
        lines.append(f"| {p.get('batch', '—')} | {p.get('next_n', '—')} | {p.get('heads', '—')} | "
                     f"{p.get('head_dim', '—')} | {p.get('avg_kv', '—')} | {_time(row, 'ours')} | "
                     f"{_num(row.get('ours_gbps'), 0)} | {_time(row, 'deepgemm')} | "
                     f"{_num(row.get('deepgemm_gbps'), 0)} | {_ratio(row.get('ratio_vs_deepgemm'))} | "
                     f"{_num(row.get('copy_gbps'), 0)} | {_ratio(row.get('ours_vs_copy'))} | {check_cell(row)} |")
    return lines


def _geomean_line(section):
    parts = []
    for key, label in (('ratio_vs_deepgemm', 'DeepGEMM / ours'), ('ratio_vs_deepgemm_best', 'DeepGEMM best / ours'),
                       ('ratio_vs_cublas', 'cuBLAS / ours'), ('ratio_vs_bf16', 'our BF16 / ours'),
                       ('floor_vs_ours', 'read floor / ours'), ('ours_vs_copy', 'ours / copy GB/s'),
                       ('unfused_vs_ours', 'our unfused / ours')):
        g = section['geomeans'].get(key)
        if g and g['rows']:
            parts.append(f"{label} {g['geomean']:.3f} over {g['rows']} rows")
    line = 'Geometric mean: ' + ('; '.join(parts) if parts else 'no ratio (a library missing on every row)') + '.'
    judged = [r['within_tilegemm_goal'] for r in section['rows'] if r.get('within_tilegemm_goal') is not None]
    if judged:
        worst = max(r['ours_vs_tilegemm'] for r in section['rows'] if r.get('ours_vs_tilegemm') is not None)
        line += (f' Through deep_gemm against tilegemm bench (the C++ loop over the same plan): {sum(judged)} of '
                 f'{len(judged)} rows within 3% or 1 µs; largest ratio {worst:.3f}.')
    return line


def markdown(report):
    env = report['environment']
    lines = ['# deep_gemm peer benchmark', '',
             f"GPU {env.get('gpu')}, torch {env.get('torch')}, CUDA {env.get('cuda')}; ours {env['ours']['version']}"
             f"; DeepGEMM {(env.get('deepgemm') or {}).get('version', 'not loaded')}.",
             f"Timer: {env['timer']}. Rounds: {env['rounds']} ({env['round_combine']}). "
             f"Ratios are their time over ours (> 1: we are faster).", '']
    for section in report['sections']:
        lines.append(f"## {section['suite']}" + (f", {section['dtype']}" if section.get('dtype') else ''))
        if section.get('note'):
            lines += ['', section['note']]
        lines.append('')
        if section['suite'] == 'host':
            lines += _host_table(section)
        elif section['suite'] == 'layout':
            lines += _layout_table(section)
        elif section['suite'] == 'hc':
            lines += _hc_table(section)
        elif section['suite'] == 'wq':
            lines += _wq_table(section)
        elif section['suite'] == 'fp8_fp4':
            lines += _fp8_fp4_table(section)
        elif section['suite'] == 'moe':
            lines += _moe_table(section)
        elif section['suite'] == 'mqa':
            lines += _mqa_table(section)
        elif section['suite'] == 'paged_mqa':
            lines += _paged_mqa_table(section)
        else:
            lines += _gemm_table(section, env.get('kernel_timer', False))
        lines += ['', _geomean_line(section), '']
    failed = [f"{s['suite']} {s.get('dtype') or ''} {r['shape']}".replace('  ', ' ')
              for s in report['sections'] for r in s['rows'] if s['suite'] in FAILING_SUITES and row_failed(r)]
    if failed:
        lines += ['Failed rows (a mismatch, or our call failing): ' + ', '.join(failed) + '.', '']
    return '\n'.join(lines)


def section(suite, dtype, rows, note=None):
    keys = ('ratio_vs_deepgemm', ) if suite in ('host', 'layout') else \
        ('ratio_vs_deepgemm', 'ratio_vs_deepgemm_best') if suite == 'hc' else \
        ('ratio_vs_bf16', 'floor_vs_ours', 'ratio_vs_deepgemm') if suite == 'wq' else \
        ('ratio_vs_fp8', 'mxfp8_vs_fp8', 'ratio_vs_deepgemm') if suite == 'fp8_fp4' else \
        ('unfused_vs_ours', 'ratio_vs_deepgemm', 'floor_vs_ours') if suite == 'moe' else \
        ('ratio_vs_deepgemm', ) if suite == 'mqa' else \
        ('ratio_vs_deepgemm', 'ours_vs_copy') if suite == 'paged_mqa' else \
        ('ratio_vs_deepgemm', 'ratio_vs_cublas', 'ours_vs_tilegemm')
    return {'suite': suite, 'dtype': dtype, 'note': note, 'rows': rows, 'geomeans': geomeans(rows, keys)}


def exit_status(report):
    """1 when a row of a FAILING_SUITES suite failed (see row_failed) or any library's result mismatched anywhere,
    else 0."""
    for s in report['sections']:
        for row in s['rows']:
            if any(r['status'] == 'mismatch' for r in row['results'].values()):
                return 1
            if s['suite'] in FAILING_SUITES and row_failed(row):
                return 1
    return 0


def _plain(value):
    """JSON-safe copy: tuples become lists, NaN and infinities become None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float('inf'), float('-inf'))):
        return None
    return value


def write(report, out_dir):
    """bench.json and bench.md in out_dir (created if needed); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    json_path, md_path = os.path.join(out_dir, 'bench.json'), os.path.join(out_dir, 'bench.md')
    with open(json_path, 'w', encoding='utf-8') as f:
        json.dump(_plain(report), f, indent=1)
    with open(md_path, 'w', encoding='utf-8') as f:
        f.write(markdown(report))
    return json_path, md_path
