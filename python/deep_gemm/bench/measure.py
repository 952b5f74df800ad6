"""One case, measured: each library's call is checked once, then timed in interleaved rounds (A B C, then
C B A, ...) on the same tensors; the result is one report row (a dict)."""
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

from . import cpp_timer, stats, timing
from .inputs import relative_diff

# The order of the first round; later rounds alternate between reversed and this. 'tilegemm' is the C++ timer over the
# plan our call ran (cpp_timer). Keys of a problem that are not listed here (the hc suite's second DeepGEMM call)
# come after these, in the problem's order.
LIBRARY_ORDER = ('ours', 'tilegemm', 'deepgemm', 'cublas', 'copy')
TILEGEMM = 'tilegemm'
# How far the Python path may read from the C++ loop over the same plan: 3%, or 1 µs on short calls.
TILEGEMM_GOAL_RATIO, TILEGEMM_GOAL_US = 0.03, 1.0
# Our call and the C++ loop over its plan time the same kernel, so within a round they alternate in this many slices
# of rep_ms / PAIR_SLICES each (ours, C++, C++, ours, ...): at the power cap the clock drifts over a 100 ms
# measurement, and two measurements one after the other would each see a different part of that drift.
PAIR_SLICES = 6


@dataclass
class Entry:
    """One library's call on a case. `out` is what fn writes (filled with NaN before the check, so a call that
    writes nothing fails it); without `out`, fn returns its result. `prepare` replaces the NaN fill where the
    call reads its output (D += ...). `verify` replaces the problem's check, `reference` its reference: verify(out)
    returns (ok, message), or (ok, message, diff) to record the difference it measured."""
    fn: Optional[Callable] = None
    out: Any = None
    prepare: Optional[Callable] = None
    reference: Any = None
    verify: Optional[Callable] = None
    status: str = 'ok'
    message: Optional[str] = None
    label: Optional[str] = None


def absent(name):
    return Entry(status='absent', message=f'{name} is not exported')


def library_entries(ctx, keys, function, shape, call, label):
    """Entries of each library's `function` for the libraries ctx loaded: keys maps an entry key to 'ours' or
    'deepgemm'; call(f, out) runs f into a bf16 out of `shape` of its own. 'absent' where a library lacks it."""
    from .peer import lookup
    torch, entries = ctx.torch, {}
    for key, lib in keys.items():
        if lib not in ctx.libs:
            continue
        f = lookup(ctx.libs[lib], function)
        if f is None:
            entries[key] = absent(function)
            continue
        out = torch.empty(shape, dtype=torch.bfloat16, device='cuda')
        entries[key] = Entry(fn=lambda f=f, out=out: call(f, out), out=out, label=label)
    return entries


def unsupported(message, label=None):
    return Entry(status='unsupported', message=message, label=label)


@dataclass
class Problem:
    name: str
    entries: Dict[str, Entry]
    reference: Any = None
    valid: Optional[Callable] = None  # output -> the elements compared (all when None)
    tolerance: float = 0.0
    flops: Optional[float] = None
    num_bytes: Optional[int] = None
    params: dict = field(default_factory=dict)


def _first_line(error):
    text = str(error).strip().splitlines()
    return f'{type(error).__name__}: {text[0] if text else ""}'.strip()


def check(torch, problem, key):
    """Runs one library's call once and compares its output; returns the result dict of that library."""
    entry = problem.entries[key]
    result = {'status': entry.status, 'message': entry.message, 'label': entry.label, 'diff': None}
    if entry.status != 'ok':
        return result
    try:
        if entry.prepare is not None:
            entry.prepare()
        elif entry.out is not None:
            entry.out.fill_(float('nan'))
        returned = entry.fn()
        torch.cuda.synchronize()
        out = entry.out if entry.out is not None else returned
        if entry.verify is not None:
            verdict = entry.verify(out)
            ok, result['message'] = verdict[:2]
            if len(verdict) > 2:
                result['diff'] = verdict[2]
        else:
            reference = problem.reference if entry.reference is None else entry.reference
            compared = out if problem.valid is None else problem.valid(out)
            result['diff'] = relative_diff(compared, reference)
            ok = result['diff'] < problem.tolerance
            if not ok:
                result['message'] = f"diff {result['diff']:.3g} against the float64 reference " \
                                    f"(tolerance {problem.tolerance:g})"
    except Exception as e:  # a library refusing a case is a result to report, not a crash of the bench
        result.update(status='unsupported' if key == 'cublas' else 'error', message=_first_line(e))
        return result
    result['status'] = 'ok' if ok else 'mismatch'
    return result


def _rounds(keys, rounds):
    for r in range(rounds):
        yield list(keys) if r % 2 == 0 else list(reversed(keys))


def _ordered(problem):
    return [k for k in LIBRARY_ORDER if k in problem.entries] + \
        [k for k in problem.entries if k not in LIBRARY_ORDER]


def _tilegemm_result(problem, results, ours):
    """The C++ timer's entry: our call's one plan run, captured; 'unsupported' when the call ran no plan or several
    (then no single kernel stands for it)."""
    try:
        runs = cpp_timer.capture_runs(ours, problem.entries['ours'].fn)
    except Exception as e:
        return {'status': 'error', 'message': _first_line(e)}, None
    if len(runs) != 1:
        return {'status': 'unsupported', 'message': f'the call ran {len(runs)} plans, not one'}, None
    return {'status': 'ok', 'message': None, 'label': 'tilegemm bench (C++ loop, same plan)', 'diff': None}, runs[0]


def measure(torch, problem, options, flush, ours=None):
    """Checks every entry, then times those that ran with CUDA events (and optionally the kernel timer). With
    ``ours`` (our deep_gemm module, whose plans carry the C++ timer), our call's plan is also timed by the C++ loop in
    the same rounds (key 'tilegemm')."""
    results = {key: check(torch, problem, key) for key in _ordered(problem)}
    run = None
    if ours is not None and results.get('ours', {}).get('status') == 'ok':
        results[TILEGEMM], run = _tilegemm_result(problem, results, ours)
        results = {k: results[k] for k in LIBRARY_ORDER if k in results} | results
    timed = [k for k in results if results[k]['status'] in ('ok', 'mismatch')]
    for key in timed:
        results[key]['rounds_us'] = []

    def time_once(key, warmup_ms, rep_ms):
        if key == TILEGEMM:
            return cpp_timer.time_run(run, warmup_ms, rep_ms)
        return timing.time_events(torch, problem.entries[key].fn, flush, warmup_ms, rep_ms)

    paired = TILEGEMM in timed and 'ours' in timed
    for order in _rounds([k for k in timed if not (paired and k == TILEGEMM)], options.rounds):
        for key in order:
            keys = ('ours', TILEGEMM) if paired and key == 'ours' else (key, )
            if any(results[k]['status'] == 'error' for k in keys):
                continue
            try:
                for k, us, calls in _time_slices(keys, time_once, options.warmup_ms, options.rep_ms):
                    results[k]['rounds_us'].append(us)
                    results[k]['calls'] = calls
            except Exception as e:
                for k in keys:
                    results[k].update(status='error', message=_first_line(e))
    for key in timed:
        if results[key]['rounds_us']:
            results[key]['us'] = stats.combine_rounds(results[key]['rounds_us'])
        if options.kernel_timer and results[key]['status'] != 'error' and key != TILEGEMM:
            try:
                results[key]['kernel_us'], results[key]['span_us'] = \
                    timing.time_kernels(torch, problem.entries[key].fn, flush)
            except Exception as e:
                results[key]['kernel_message'] = _first_line(e)
    row = _row(problem, results, 'us')
    if TILEGEMM in results:
        ours_us, cpp_us = _time(results, 'ours', 'us'), _time(results, TILEGEMM, 'us')
        row['ours_vs_tilegemm'] = stats.ratio(ours_us, cpp_us)
        row['within_tilegemm_goal'] = None if row['ours_vs_tilegemm'] is None else \
            abs(ours_us - cpp_us) <= max(TILEGEMM_GOAL_RATIO * cpp_us, TILEGEMM_GOAL_US)
    return row


def _time_slices(keys, time_once, warmup_ms, rep_ms):
    """[(key, µs, timed calls)] for one round: one library timed once, or our call and the C++ loop over its plan in
    PAIR_SLICES alternating slices (ABBA...), each key's time the mean of its slice medians, its calls their sum.
    Only each key's first slice warms up."""
    if len(keys) == 1:
        us, calls = time_once(keys[0], warmup_ms, rep_ms)
        return [(keys[0], us, calls)]
    slices = {k: [] for k in keys}
    for i in range(PAIR_SLICES):
        for k in (keys if i % 2 == 0 else keys[::-1]):
            slices[k].append(time_once(k, warmup_ms if not slices[k] else 0, rep_ms / PAIR_SLICES))
    return [(k, sum(us for us, _ in s) / len(s), sum(calls for _, calls in s)) for k, s in slices.items()]


def measure_host(torch, problem, options):
    """Checks every entry, then takes the median host time of back-to-back calls, in interleaved rounds."""
    results = {key: check(torch, problem, key) for key in _ordered(problem)}
    timed = [k for k in results if results[k]['status'] in ('ok', 'mismatch')]
    for key in timed:
        results[key].update(rounds_host_us=[], rounds_wall_us=[])
    for order in _rounds(timed, options.rounds):
        for key in order:
            try:
                host_us, wall_us = timing.time_host(torch, problem.entries[key].fn, options.host_calls)
            except Exception as e:
                results[key].update(status='error', message=_first_line(e))
                continue
            results[key]['rounds_host_us'].append(host_us)
            results[key]['rounds_wall_us'].append(wall_us)
    for key in timed:
        if results[key]['rounds_host_us']:
            results[key]['host_us'] = stats.combine_rounds(results[key]['rounds_host_us'])
            results[key]['wall_us'] = stats.combine_rounds(results[key]['rounds_wall_us'])
    return _row(problem, results, 'host_us')


def _time(results, key, metric):
    r = results.get(key)
    return r.get(metric) if r is not None and r['status'] == 'ok' else None


def _row(problem, results, metric):
    ours = _time(results, 'ours', metric)
    row = {'shape': problem.name, 'params': problem.params, 'flops': problem.flops, 'bytes': problem.num_bytes,
           'results': results,
           'ratio_vs_deepgemm': stats.ratio(_time(results, 'deepgemm', metric), ours),
           'ratio_vs_cublas': stats.ratio(_time(results, 'cublas', metric), ours)}
    return row
