"""Command line of `python -m deep_gemm.bench`: options, the environment record, and the loop over suites."""
import argparse
import importlib
import math
import sys
import time
from types import SimpleNamespace

from . import (cpp_timer, fp8_fp4_suite, gemm_cases, hc_suite, host_suite, int8_suite, layout_suite, measure, moe_suite,
               mqa_suite,
               report, stats, suites, timing, wq_suite)
from .cublas import block_support
from .inputs import Quantiser
from .peer import describe, load_peer, lookup

DESCRIPTION = """Times our deep_gemm against DeepGEMM 2.6.1 (--deepgemm PATH: a folder that imports as deep_gemm,
loaded into this process) and torch/cuBLAS on the same tensors: every input made once (FP8 with one quantiser,
DeepGEMM's casts, fp32 scales), each call checked against a float64 reference, then timed with CUDA events
after a 256 MB L2 flush (median of --rep-ms of calls after --warmup-ms), in interleaved rounds.
Ratios are their time over ours: > 1 means we are faster. The 'tilegemm bench' column times the plan our call ran
with tilegemm bench's C++ loop (same flush and timer), in the same rounds: the Python path with no Python."""

EPILOG = f"""suites: deepseek (M in 64, 128, 4096 x DeepSeek-V3's six (N, K)), decode (M in 1, 8, 16, 32 x the same),
ragged ({', '.join(c.name for c in suites.RAGGED)}),
grouped (M-grouped contiguous), masked (M-grouped masked), host (host time per call of each exported family),
layout (the scale-layout helpers in GB/s), hc (tf32_hc_prenorm_gemm on DeepGEMM's test shapes, in GB/s: ours with
num_splits=None against DeepGEMM's num_splits=None and 16), wq (deep_gemm.weight_quant.gemm: int4 / int8 / MXFP4
weights against the BF16 GEMM on the dequantised weight and a copy of the packed bytes), int8 (deep_gemm.int8.gemm_nt
against cuBLASLt's int8 GEMM, torch._int_mm, on the DeepSeek shapes for M in 1, 16, 64, 128, 4096), fp8_fp4 (the SM90
FP8 x FP4 GEMM against FP8 x FP8 on the same weights, M in 1, 16, 32, 64, 128, 4096, and masked over 32 DeepSeek-V3
experts at about 1, 8, 32 tokens each), moe (deep_gemm.moe.fp8_moe, DeepSeek-V3's MoE layer on one GPU, against
its unfused steps with our and DeepGEMM's grouped GEMMs, 1 to 8192 tokens), mqa (DeepSeek-V3.2's MQA logits in
prefill, fp8_fp4_mqa_logits, in TFLOP/s: S in 2048, 8192 x S_kv in 8192, 65536 x H in 32, 64, CP on and off),
paged_mqa (fp8_fp4_paged_mqa_logits in decode, in GB/s against a copy of the KV cache: B in 256, 4096 x next_n in 1, 2
x H in 32, 64 x avg kv in 8192, 65536), or all.
exit status: 0; 1 when a result mismatched its reference or our call failed on a GEMM, hc, wq, int8, fp8_fp4, moe,
mqa or paged_mqa case; 2 for a bad option, no torch, no CUDA GPU or a DeepGEMM folder that does not import."""


def _int(text, name, low):
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise ValueError(f'{name}: expected an int >= {low}, got {text!r}') from None
    if value < low:
        raise ValueError(f'{name}: expected an int >= {low}, got {value}')
    return value


def _float(text, name):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f'{name}: expected a number of milliseconds > 0, got {text!r}') from None
    if not (value > 0) or math.isinf(value):
        raise ValueError(f'{name}: expected a number of milliseconds > 0, got {value}')
    return value


def build_parser():
    p = argparse.ArgumentParser(prog='python -m deep_gemm.bench', description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--suite', default='deepseek', help='comma-separated suites, or all (default deepseek)')
    p.add_argument('--dtype', default='bf16,fp8', help='bf16, fp8 or both, comma-separated (default both)')
    p.add_argument('--shapes', default='', help='comma-separated globs a case name must match, e.g. "4096x*"')
    p.add_argument('--deepgemm', metavar='PATH', help='folder that imports as DeepGEMM\'s deep_gemm (e.g. /tmp/dg)')
    p.add_argument('--no-peer', action='store_true', help='time ours and cuBLAS only')
    p.add_argument('--no-cublas', action='store_true', help='leave out the torch/cuBLAS baseline')
    p.add_argument('--no-tilegemm-timer', action='store_true',
                   help="leave out the C++ timer over our call's plan (tilegemm bench's loop, in this process)")
    p.add_argument('--kernel-timer', action='store_true',
                   help='also time the kernels alone (torch.profiler durations of what each call launches)')
    p.add_argument('--rounds', default='2', help='interleaved rounds per case (default 2: A B C, then C B A)')
    p.add_argument('--warmup-ms', default='25', help='warm-up budget per measurement (default 25)')
    p.add_argument('--rep-ms', default='100', help='timed budget per measurement (default 100)')
    p.add_argument('--host-calls', default='200', help='back-to-back calls per host measurement (default 200)')
    p.add_argument('--seed', default='0', help='seed of every input (default 0)')
    p.add_argument('--out', metavar='DIR', help='also write DIR/bench.json and DIR/bench.md')
    return p


def parse_args(argv):
    """Options as a namespace; ValueError naming the option on a bad value (argparse itself exits 2)."""
    a = build_parser().parse_args(argv)
    if a.deepgemm and a.no_peer:
        raise ValueError(f'deepgemm: expected either --deepgemm PATH or --no-peer, got both ({a.deepgemm!r})')
    if not a.deepgemm and not a.no_peer:
        raise ValueError('deepgemm: expected --deepgemm PATH (a folder that imports as DeepGEMM) or --no-peer, '
                         'got neither')
    return SimpleNamespace(
        suites=suites.parse_list(a.suite, tuple(suites.SUITES), 'suite'),
        dtypes=suites.parse_list(a.dtype, suites.DTYPES, 'dtype'),
        keep=suites.shape_filter(a.shapes), shapes=a.shapes, deepgemm=a.deepgemm, cublas=not a.no_cublas,
        kernel_timer=a.kernel_timer, tilegemm_timer=not a.no_tilegemm_timer, rounds=_int(a.rounds, 'rounds', 1),
        warmup_ms=_float(a.warmup_ms, 'warmup-ms'), rep_ms=_float(a.rep_ms, 'rep-ms'),
        host_calls=_int(a.host_calls, 'host-calls', 1), seed=_int(a.seed, 'seed', 0), out=a.out)


def plan(options):
    """(suite, dtype or None, cases) in run order; dtype-free suites once. ValueError when nothing is selected."""
    runs = []
    for suite in options.suites:
        for dtype in ((None, ) if suite in suites.DTYPE_FREE else options.dtypes):
            cases = suites.select(suite, dtype, options.keep)
            if cases:
                runs.append((suite, dtype, cases))
    if not runs:
        raise ValueError(f'shapes: expected a pattern matching a case of {", ".join(options.suites)}, '
                         f'got {options.shapes!r}')
    return runs


def _import_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _alignment(libs):
    values = [lookup(m, 'get_mk_alignment_for_contiguous_layout')() for m in libs.values()
              if lookup(m, 'get_mk_alignment_for_contiguous_layout') is not None]
    return math.lcm(*values) if values else 128


def environment(torch, options, libs, quant_source, cublas_fp8, cublas_reason):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        'gpu': torch.cuda.get_device_name(), 'sms': props.multi_processor_count, 'torch': torch.__version__,
        'cuda': torch.version.cuda, 'ours': describe(libs['ours']),
        'deepgemm': describe(libs['deepgemm']) if 'deepgemm' in libs else None,
        'timer': f'CUDA events per call, median of {options.rep_ms:g} ms of calls after {options.warmup_ms:g} ms '
                 f'of warm-up, {timing.FLUSH_BYTES // 10**6} MB zero_() L2 flush before each call',
        'flush_bytes': timing.FLUSH_BYTES, 'warmup_ms': options.warmup_ms, 'rep_ms': options.rep_ms,
        'rounds': options.rounds, 'round_combine': stats.ROUND_COMBINE, 'kernel_timer': options.kernel_timer,
        'host_calls': options.host_calls, 'seed': options.seed, 'quantiser': quant_source,
        'fp8_arguments': 'disable_ue8m0_cast=True, fp32 scales as per_token/per_block_cast_to_fp8 return them',
        'cublas': options.cublas, 'cublas_fp8': cublas_fp8, 'cublas_fp8_block_unsupported': cublas_reason,
    }


def _cublas_note(suite, dtype, env):
    if suite not in ('deepseek', 'decode', 'ragged') or not env['cublas']:
        return 'No cuBLAS column: the baseline is dense only.' if suite in ('grouped', 'masked') else None
    if dtype == 'bf16':
        return 'cuBLAS: torch.matmul into a preallocated D.'
    if env['cublas_fp8'] == 'block':
        return 'cuBLAS: torch._scaled_mm (cuBLASLt) on the same FP8 bytes, 1x128 / 128x128 fp32 block scales.'
    return ('cuBLAS: torch._scaled_mm with per-tensor scales on operands of its own (this torch takes no block '
            f"scales: {env['cublas_fp8_block_unsupported']}), checked against their own reference.")


def _note(suite, dtype, env):
    if suite == 'wq':
        return wq_suite.NOTE
    if suite == 'int8':
        return int8_suite.NOTE
    if suite == 'fp8_fp4':
        return fp8_fp4_suite.NOTE
    if suite == 'moe':
        return moe_suite.NOTE
    if suite in mqa_suite.NOTES:
        return mqa_suite.NOTES[suite]
    return hc_suite.NOTE if suite == 'hc' else _cublas_note(suite, dtype, env)


def failed_row(case, suite, error):
    """The row of a case whose inputs could not be made: our result is the error, so the run exits 1."""
    message = f'bench: {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ""}'
    row = {'shape': case.name, 'params': {}, 'flops': None, 'bytes': 0, 'ratio_vs_deepgemm': None,
           'ratio_vs_cublas': None, 'results': {'ours': {'status': 'error', 'message': message}}}
    if suite == 'layout':
        row['params'] = {'helper': case.helper, 'mn': case.mn, 'k': case.k, 'kb': (case.k + 127) // 128,
                         'groups': case.groups}
    elif suite in ('hc', 'int8', 'fp8_fp4'):
        row['params'] = {'m': getattr(case, 'expected_m', getattr(case, 'm', None)), 'n': case.n, 'k': case.k}
    elif suite == 'wq':
        row['params'] = {'m': getattr(case, 'expected_m', getattr(case, 'm', None)), 'n': case.n, 'k': case.k,
                         'weight': case.weight}
    elif suite in mqa_suite.NOTES:
        row['params'] = mqa_suite.params(case)
    elif suite == 'moe':
        row['params'] = {'tokens': case.tokens, 'experts': case.experts, 'topk': case.topk, 'hidden': case.hidden,
                         'inter': case.inter}
    return row


def _progress(text):
    print(text, file=sys.stderr, flush=True)


def run(torch, options, libs, on_row=None):
    """Every selected case, measured; on_row(report so far) after each one (the files are rewritten as the run
    goes, so a run stopped by a time limit keeps what it measured)."""
    quant_key = 'deepgemm' if 'deepgemm' in libs else 'ours'
    quant = Quantiser(libs[quant_key], {'deepgemm': "DeepGEMM's deep_gemm.utils"}.get(quant_key, 'our deep_gemm.utils'))
    cublas_fp8, reason = 'block', None
    if options.cublas and 'fp8' in options.dtypes:
        supported, reason = block_support(torch)
        cublas_fp8 = 'block' if supported else 'per-tensor'
    ctx = gemm_cases.Context(torch, libs, quant, cublas=options.cublas, cublas_fp8=cublas_fp8, seed=options.seed,
                             alignment=_alignment(libs))
    env = environment(torch, options, libs, quant.source, cublas_fp8, reason)
    env['alignment'] = ctx.alignment
    flush = timing.Flusher(torch)
    tilegemm_timer = getattr(options, 'tilegemm_timer', False) and cpp_timer.supported(libs['ours'])
    env['tilegemm_timer'] = tilegemm_timer
    sections, begin = [], time.monotonic()
    result = {'environment': env, 'sections': sections}
    for suite, dtype, cases in plan(options):
        rows = []
        sections.append(report.section(suite, dtype, rows, _note(suite, dtype, env)))
        for i, case in enumerate(cases, 1):
            label = f"{suite}{' ' + dtype if dtype else ''} [{i}/{len(cases)}] {case.name}"
            try:
                if suite == 'host':
                    row = measure.measure_host(torch, host_suite.problem(ctx, case), options)
                elif suite == 'layout':
                    row = layout_suite.add_bandwidth(measure.measure(torch, layout_suite.problem(ctx, case),
                                                                     options, flush))
                elif suite == 'wq':
                    row = wq_suite.add_rates(measure.measure(torch, wq_suite.problem(ctx, case), options, flush))
                elif suite == 'int8':
                    row = measure.measure(torch, int8_suite.problem(ctx, case), options, flush)
                elif suite == 'fp8_fp4':
                    row = fp8_fp4_suite.add_rates(measure.measure(torch, fp8_fp4_suite.problem(ctx, case), options,
                                                                  flush))
                elif suite == 'moe':
                    row = moe_suite.add_rates(measure.measure(torch, moe_suite.problem(ctx, case), options, flush))
                elif suite in mqa_suite.NOTES:
                    row = mqa_suite.add_rates(measure.measure(torch, mqa_suite.problem(ctx, case), options, flush))
                elif suite == 'hc':
                    with hc_suite.tf32_matmul(torch):  # the reference is a TF32 torch matmul, as in DeepGEMM's test
                        row = hc_suite.add_rates(measure.measure(torch, hc_suite.problem(ctx, case), options, flush))
                else:
                    row = measure.measure(torch, gemm_cases.BUILDERS[suite](ctx, case, dtype), options, flush,
                                          libs['ours'] if tilegemm_timer else None)
            except Exception as e:  # making the inputs failed (memory, a torch without an op): record, go on
                row = failed_row(case, suite, e)
            rows.append(row)
            sections[-1] = report.section(suite, dtype, rows, _note(suite, dtype, env))
            torch.cuda.empty_cache()
            _progress(f'{label}: {report.check_cell(row)} ({time.monotonic() - begin:.0f} s)')
            if on_row is not None:
                on_row(result)
    return result


def main(argv=None):
    try:
        options = parse_args(sys.argv[1:] if argv is None else argv)
        plan(options)
    except ValueError as e:
        print(f'deep_gemm.bench: {e}', file=sys.stderr)
        return 2
    torch = _import_torch()
    if torch is None:
        print('deep_gemm.bench: torch is not installed; the benchmark needs torch with CUDA and a GPU',
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print('deep_gemm.bench: no CUDA GPU is visible to torch (torch.cuda.is_available() is False)',
              file=sys.stderr)
        return 2
    libs = {'ours': importlib.import_module('deep_gemm')}
    if options.deepgemm:
        try:
            libs['deepgemm'] = load_peer(options.deepgemm)
        except ValueError as e:
            print(f'deep_gemm.bench: {e}', file=sys.stderr)
            return 2
        except Exception as e:  # DeepGEMM's own import failing (its build, its CUDA): say so and stop
            print(f'deep_gemm.bench: deepgemm: importing deep_gemm from {options.deepgemm!r} failed: '
                  f'{type(e).__name__}: {e}', file=sys.stderr)
            return 2
    result = run(torch, options, libs, (lambda r: report.write(r, options.out)) if options.out else None)
    text = report.markdown(result)
    try:
        print(text)
    except UnicodeEncodeError:  # a terminal that cannot show µ or ✗: the files keep them
        print(text.encode(sys.stdout.encoding or 'ascii', 'replace').decode(sys.stdout.encoding or 'ascii'))
    if options.out:
        for path in report.write(result, options.out):
            _progress(f'wrote {path}')
    return report.exit_status(result)
