"""The GPU robustness run of deep_gemm (scripts/gpu-suite, step robustness). Sections, each writing <out>/<name>.json:

  problems  N seeded random problems (problems.py) in parallel worker processes against float64 references, outputs
            poisoned and guard bands checked (families.py); a worker that crashes or hangs is reported with the
            problem it was on and replaced, so one fault never hides the rest
  graphs    every exported GEMM captured in a CUDA graph and replayed three times on fresh inputs (masked_m too)
  threads   8 Python threads, each on its own stream, running the same problems at once (shared plans and kernels)
  cache     corrupted cache entries (flipped bytes, truncated cubins, garbage metadata), a full disk (a tiny tmpfs)
            and an unwritable cache directory, each in a fresh process: the call succeeds with correct results
  sanitize  compute-sanitizer (memcheck, racecheck, synccheck) over small problems in one process, torch's caching
            allocator off so that every tensor is its own allocation

``report`` merges the section files into robustness.json and robustness.md. ``--backend`` other than deep_gemm
runs a stand-in (checks.py) so the CPU tests can show that a planted fault is caught.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import problems as problem_set  # noqa: E402


def limits(small):
    return problem_set.SMALL if small else problem_set.FULL


def _import_deep_gemm(backend):
    if backend != 'deep_gemm':
        return None
    import deep_gemm
    return deep_gemm


# ---- problems -------------------------------------------------------------------------------------------------

def worker(args):
    """Runs problems args.first, args.first + stride, ... (below args.count) until the deadline; one JSON line per
    problem to args.results, and 'start <index>' to args.progress before each (the parent's hang detector)."""
    from checks import run_case
    dg = _import_deep_gemm(args.backend)
    deadline = args.deadline
    with open(args.results, 'a') as results, open(args.progress, 'a') as progress:
        for index in range(args.first, args.count, args.stride):
            if time.time() > deadline:
                break
            progress.write(f'start {index} {time.time()}\n')
            progress.flush()
            p = problem_set.make_problem(args.seed, index, limits(args.small))
            r = run_case(p, args.device, args.backend, dg=dg)
            r['problem'] = problem_set.describe(p)
            results.write(json.dumps(r) + '\n')
            results.flush()


def _last_start(path):
    try:
        lines = open(path).read().split('\n')
    except OSError:
        return None
    starts = [ln.split() for ln in lines if ln.startswith('start ')]
    return (int(starts[-1][1]), float(starts[-1][2])) if starts else None


def run_problems(args):
    """Parent of the workers: spawns, watches for crashes and hangs, merges the results."""
    work = os.path.join(args.out, 'problems-work')
    os.makedirs(work, exist_ok=True)
    deadline = time.time() + args.deadline_s
    results_path = os.path.join(work, 'results.jsonl')
    open(results_path, 'w').close()
    incidents = []

    def spawn(w, first):
        progress = os.path.join(work, f'progress-{w}.txt')
        open(progress, 'w').close()
        cmd = [sys.executable, os.path.abspath(__file__), 'worker', '--seed', str(args.seed), '--count',
               str(args.count), '--first', str(first), '--stride', str(args.workers), '--device', args.device,
               '--backend', args.backend, '--deadline', str(deadline), '--results', results_path, '--progress',
               progress] + (['--small'] if args.small else [])
        log = open(os.path.join(work, f'worker-{w}.log'), 'a')
        return {'proc': subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), 'progress': progress,
                'log': log}

    workers = {w: spawn(w, w) for w in range(args.workers)}
    while workers:
        time.sleep(0.5)
        for w, info in list(workers.items()):
            rc = info['proc'].poll()
            last = _last_start(info['progress'])
            if rc is None and last and time.time() - last[1] > args.problem_timeout_s:
                info['proc'].kill()
                info['proc'].wait()
                incidents.append({'index': last[0], 'what': f'hang: no result after {args.problem_timeout_s} s'})
                rc = 'killed'
            if rc is None:
                continue
            info['log'].close()
            del workers[w]
            if rc != 0 and last is not None:
                if rc != 'killed':
                    incidents.append({'index': last[0], 'what': f'worker exited with {rc} during this problem'})
                nxt = last[0] + args.workers
                if nxt < args.count and time.time() < deadline:
                    workers[w] = spawn(w, nxt)
    rows = [json.loads(line) for line in open(results_path) if line.strip()]
    done = {r['index'] for r in rows}
    for inc in incidents:
        if inc['index'] not in done:
            p = problem_set.make_problem(args.seed, inc['index'], limits(args.small))
            rows.append({'index': inc['index'], 'kind': p['kind'], 'problem': problem_set.describe(p), 'ok': False,
                         'failures': [inc['what']], 'worst': None, 'seconds': None})
    rows.sort(key=lambda r: r['index'])
    summary = summarize_problems(rows, args)
    summary['incidents'] = incidents
    write_json(args, args.name, summary)
    return summary


def summarize_problems(rows, args):
    by_kind = {}
    for r in rows:
        k = by_kind.setdefault(r['kind'], {'run': 0, 'failed': 0, 'worst': 0.0})
        k['run'] += 1
        k['failed'] += not r['ok']
        if r.get('worst') is not None:
            k['worst'] = max(k['worst'], r['worst'])
    failed = [r for r in rows if not r['ok']]
    out = {'seed': args.seed, 'requested': args.count, 'run': len(rows), 'failed': len(failed),
           'limits': 'small' if args.small else 'full', 'backend': args.backend, 'workers': args.workers,
           'by_kind': by_kind, 'failures': failed[:200],
           'seconds': round(sum(r['seconds'] or 0 for r in rows), 1)}
    if args.backend.startswith('fault-'):
        out['fault_visible'] = sum(bool(r.get('fault_visible')) for r in rows)
        out['fault_caught'] = sum(bool(r.get('fault_visible')) and not r['ok'] for r in rows)
    return out


# ---- graphs and threads -------------------------------------------------------------------------------------------

# What the graph section must cover: every GEMM name deep_gemm exports for SM90 (a CPU test holds it to the package).
EXPORTED_GEMMS = (
    [f'{f}_{lay}' for f in ('bf16_gemm', 'cublaslt_gemm', 'fp8_gemm', 'fp8_fp4_gemm') for lay in ('nt', 'nn', 'tn', 'tt')] +
    [f'm_grouped_{f}_gemm_{lay}_contiguous' for f in ('bf16', 'fp8', 'fp8_fp4') for lay in ('nt', 'nn')] +
    ['m_grouped_bf16_gemm_nt_masked', 'bf16_m_grouped_gemm_nt_masked', 'm_grouped_fp8_gemm_nt_masked',
     'm_grouped_fp8_fp4_gemm_nt_masked', 'fp8_m_grouped_gemm_nt_masked', 'k_grouped_bf16_gemm_tn_contiguous',
     'k_grouped_fp8_gemm_nt_contiguous', 'einsum', 'fp8_einsum', 'fp8_gemm_nt_skip_head_mid',
     'tf32_hc_prenorm_gemm'])


# tilegemm's own GEMMs outside DeepGEMM's surface, captured too.
OWN_GEMMS = ['weight_quant.gemm', 'int8.gemm_nt']


def one_problem_per_function(seed, lim):
    """The first non-empty problem of the seed for each function name (every exported GEMM and our own)."""
    found, index = {}, 0
    while index < 20000 and len(found) < len(EXPORTED_GEMMS) + len(OWN_GEMMS):
        p = problem_set.make_problem(seed, index, lim)
        dims = [p[k] for k in ('m', 'n', 'k') if k in p]
        if all(dims):
            found.setdefault(problem_set.function_name(p), p)
        index += 1
    return found


def graph_row(name, p, dg):
    """Eager call, capture, three replays on fresh inputs (and masked_m): a report row."""
    import random

    import torch
    from families import build_case
    row = {'function': name, 'problem': problem_set.describe(p), 'replays': 0, 'ok': False, 'failures': []}
    try:
        case = build_case(p, 'cuda')
        case.fill(p['data_seed'])
        case.prepare()
        case.call(dg)  # compiles and plans outside the capture, on the default stream, as engines warm up
        torch.cuda.synchronize()
        row['failures'] += [f'eager: {f}' for f in case.check()]
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # torch's own capture stream
            case.call(dg)
        for replay in range(3):
            seed = p['data_seed'] + 1 + replay
            if p['kind'].startswith('masked'):
                rng = random.Random(seed)
                case.fill(seed, masked_m=[rng.choice([0, p['m_max'], rng.randint(1, p['m_max'])])
                                          for _ in range(p['groups'])])
            else:
                case.fill(seed)
            case.prepare()
            graph.replay()
            torch.cuda.synchronize()
            row['failures'] += [f'replay {replay}: {f}' for f in case.check()]
            row['replays'] += 1
    except Exception as e:
        row['failures'].append(f'{type(e).__name__}: {e}'[:500])
    row['ok'] = not row['failures']
    return row


# Long-K problems run again with the split-K and stream-K schemes forced: their workspace is per stream, and the
# capture stream has none yet.
SPLIT_SCHEME_PROBLEMS = (
    {'kind': 'dense_bf16', 'layout': 'nt', 'a_major': 'k', 'b_major': 'k', 'd_dtype': 'bf16', 'c': 'none'},
    {'kind': 'dense_fp8', 'layout': 'nt', 'recipe': '1d2d', 'd_dtype': 'bf16', 'c': 'none', 'fp8_fp4_name': False,
     'sfa_mn_major': False},
)

# tf32_hc_prenorm_gemm on a long K, captured too: the split the library picks (summed in the kernel through a
# per-stream workspace and counters, which the capture stream has none of yet) and the caller's 72 splits (more
# than K's 56 blocks of 128: the spare slices hold zeros).
HC_PRENORM_GRAPH_PROBLEMS = tuple(
    {'kind': 'hc_prenorm', 'm': 64, 'n': 24, 'k': 7168, 'num_splits': splits, 'd_dtype': 'fp32', 'pad_a': False,
     'pad_b': False, 'pad_d': False} for splits in (None, 72))


def run_graphs(args):
    dg = _import_deep_gemm('deep_gemm')
    rows = [graph_row(name, p, dg)
            for name, p in sorted(one_problem_per_function(args.seed, problem_set.SMALL).items())]
    for scheme in ('split-k', 'stream-k'):
        os.environ['TILEGEMM_GEMM_SCHEME'] = scheme
        dg._C.reload_env()
        for i, base in enumerate(SPLIT_SCHEME_PROBLEMS):
            p = {**base, 'm': 64, 'n': 576, 'k': 7168, 'pad_a': False, 'pad_b': False, 'pad_d': False,
                 'index': 100000 + i, 'seed': args.seed, 'data_seed': 77 + i, 'scale': 1.0}
            row = graph_row(problem_set.function_name(p), p, dg)
            row['function'] += f' ({scheme})'
            rows.append(row)
    del os.environ['TILEGEMM_GEMM_SCHEME']
    dg._C.reload_env()
    for i, base in enumerate(HC_PRENORM_GRAPH_PROBLEMS):
        p = {**base, 'index': 100100 + i, 'seed': args.seed, 'data_seed': 177 + i, 'scale': 1.0}
        row = graph_row(problem_set.function_name(p), p, dg)
        row['function'] += f" (num_splits={p['num_splits']}, K={p['k']})"
        rows.append(row)
    summary = {'functions': len(rows), 'failed': sum(not r['ok'] for r in rows), 'rows': rows}
    write_json(args, 'graphs', summary)
    return summary


def run_threads(args):
    import threading

    import torch
    from families import build_case
    dg = _import_deep_gemm('deep_gemm')
    lim = problem_set.Limits(2048, 4096, 1 << 23)
    shared = [problem_set.make_problem(args.seed, i, lim) for i in range(args.per_thread)]
    results = {}

    def body(t):
        stream = torch.cuda.Stream()
        rows = []
        order = shared[t % len(shared):] + shared[:t % len(shared)]  # same problems, each thread its own order
        with torch.cuda.stream(stream):
            for p in order:
                try:
                    case = build_case(p, 'cuda')
                    case.fill(p['data_seed'] + 1000 * (t + 1))  # fresh data per thread
                    case.prepare()
                    case.call(dg)
                    stream.synchronize()
                    failures = case.check()
                except Exception as e:
                    failures = [f'{type(e).__name__}: {e}'[:500]]
                rows.append({'problem': problem_set.describe(p), 'ok': not failures, 'failures': failures})
        results[t] = rows

    threads = [threading.Thread(target=body, args=(t, )) for t in range(args.threads)]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    flat = [r for t in sorted(results) for r in results[t]]
    summary = {'threads': args.threads, 'calls': len(flat), 'failed': sum(not r['ok'] for r in flat),
               'seconds': round(time.perf_counter() - start, 1), 'failures': [r for r in flat if not r['ok']][:50],
               'finished_threads': len(results)}
    write_json(args, 'threads', summary)
    return summary


# ---- cache ------------------------------------------------------------------------------------------------------

CACHE_PROBLEMS = 'dense_bf16', 'dense_fp8', 'masked_fp8'


def _limit_file_size(limit):
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _child(cache_dir, seed, indices, fsize_limit=None):
    """Runs problems in a fresh process with DG_JIT_CACHE_DIR=cache_dir: (ok, detail, stderr tail)."""
    env = {**os.environ, 'DG_JIT_CACHE_DIR': cache_dir}
    cmd = [sys.executable, os.path.abspath(__file__), 'child', '--seed', str(seed), '--indices',
           ','.join(map(str, indices))]
    preexec = None if fsize_limit is None else (lambda: _limit_file_size(fsize_limit))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, preexec_fn=preexec)
    try:
        rows = json.loads(proc.stdout.strip().split('\n')[-1])
    except (ValueError, IndexError):
        return False, f'exit {proc.returncode}, no result', proc.stderr[-800:]
    bad = [r for r in rows if not r['ok']]
    detail = f'{len(rows) - len(bad)}/{len(rows)} correct' + (f'; {bad[0]["failures"][0]}' if bad else '')
    return proc.returncode == 0 and not bad, detail, proc.stderr[-800:]


def child(args):
    from checks import run_case
    dg = _import_deep_gemm('deep_gemm')
    rows = []
    for i in map(int, args.indices.split(',')):
        p = problem_set.make_problem(args.seed, i, problem_set.SMALL)
        rows.append(run_case(p, 'cuda', dg=dg))
    print(json.dumps(rows))


def _cubins(cache_dir):
    for root, _, files in os.walk(os.path.join(cache_dir, 'kernels')):
        for f in files:
            yield os.path.join(root, f)


def _corrupt(cache_dir, how):
    count = 0
    for path in _cubins(cache_dir):
        name = os.path.basename(path)
        if how in ('flip', 'truncate') and name != 'kernel.cubin':
            continue
        if how == 'meta' and name != 'kernel.meta':
            continue
        data = bytearray(open(path, 'rb').read())
        if how == 'flip':
            for i in range(len(data) // 3, len(data) // 3 + 64):
                data[i] ^= 0x5A
        elif how == 'truncate':
            data = data[:len(data) // 2]
        else:
            data = bytearray(b'\xff garbage \x00' * 3)
        open(path, 'wb').write(bytes(data))
        count += 1
    return count


def run_cache(args):
    import shutil
    import tempfile
    indices = []
    for kind in CACHE_PROBLEMS:  # one small problem of each kind: bf16, FP8 and a grouped kernel
        i = 0
        while True:
            p = problem_set.make_problem(args.seed, i, problem_set.SMALL)
            if p['kind'] == kind and all(p[k] for k in ('n', 'k')) and p.get('m', 1):
                indices.append(i)
                break
            i += 1
    rows = []
    base = tempfile.mkdtemp(prefix='dg-cache-')
    cache = os.path.join(base, 'cache')
    ok, detail, _ = _child(cache, args.seed, indices)
    rows.append({'scenario': 'cold cache: compile, publish', 'ok': ok, 'detail': detail})
    for how, what in (('flip', '64 bytes flipped in every cubin (size unchanged)'),
                      ('truncate', 'every cubin cut to half its size'),
                      ('meta', 'every kernel.meta replaced by garbage')):
        n = _corrupt(cache, how)
        ok, detail, err = _child(cache, args.seed, indices)
        rows.append({'scenario': f'{what} ({n} files)', 'ok': ok and n > 0, 'detail': detail,
                     'stderr': err[-300:]})
    # Full disk: a 64 KB tmpfs holds no cubin; the process keeps kernels in memory and says so. Where mounting is not
    # permitted, a file-size limit of 4 KB (RLIMIT_FSIZE, SIGXFSZ ignored) makes every cubin write fail instead.
    tiny = os.path.join(base, 'tiny')
    os.makedirs(tiny)
    mounted = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', tiny], capture_output=True,
                             text=True)
    if mounted.returncode == 0:
        what, limit = 'full disk (64 KB tmpfs as the cache)', None
    else:
        what, limit = 'full disk (writes over 4 KB fail: RLIMIT_FSIZE; tmpfs mount not permitted)', 4096
    ok, detail, err = _child(tiny, args.seed, indices, fsize_limit=limit)
    warned = 'not writable' in err
    rows.append({'scenario': what, 'ok': ok and warned, 'detail': detail + ('' if warned else '; no warning printed'),
                 'stderr': err[-300:]})
    if mounted.returncode == 0:
        subprocess.run(['umount', tiny], capture_output=True)
    blocker = os.path.join(base, 'a-file')
    open(blocker, 'w').write('not a directory')
    ok, detail, err = _child(blocker, args.seed, indices)
    rows.append({'scenario': 'cache path is a regular file', 'ok': ok, 'detail': detail, 'stderr': err[-300:]})
    shutil.rmtree(base, ignore_errors=True)
    summary = {'scenarios': len(rows), 'failed': sum(r['ok'] is False for r in rows),
               'not_run': sum(r['ok'] is None for r in rows), 'rows': rows}
    write_json(args, 'cache', summary)
    return summary


# ---- compute-sanitizer -------------------------------------------------------------------------------------------

def run_sanitize(args):
    import re
    rows = []
    env = {**os.environ, 'PYTORCH_NO_CUDA_MEMORY_CACHING': '1'}
    for tool, count in (('memcheck', args.sanitize_count), ('racecheck', max(4, args.sanitize_count // 3)),
                        ('synccheck', max(4, args.sanitize_count // 3))):
        name = f'sanitizer-{tool}'
        cmd = ['compute-sanitizer', '--tool', tool, '--error-exitcode', '99', '--print-limit', '20', sys.executable,
               os.path.abspath(__file__), 'problems', '--in-process', '--small', '--count', str(count), '--seed',
               str(args.seed), '--out', args.out, '--name', name]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.sanitize_timeout_s)
            text, rc = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            text, rc = (e.stdout or b'').decode(errors='replace') + (e.stderr or b'').decode(errors='replace'), 'timeout'
        except FileNotFoundError:
            text, rc = 'compute-sanitizer not found', 'missing'
        # memcheck and synccheck end with 'ERROR SUMMARY: N errors', racecheck with 'RACECHECK SUMMARY: ... (N errors'.
        errors = re.findall(r'(?:ERROR SUMMARY: |RACECHECK SUMMARY: \d+ hazards displayed \()(\d+) error', text)
        section = {}
        path = os.path.join(args.out, f'{name}.json')
        if os.path.exists(path):
            section = json.load(open(path))
            os.remove(path)
        rows.append({'tool': tool, 'rc': rc, 'errors': int(errors[-1]) if errors else None,
                     'problems': section.get('run'), 'failed': section.get('failed'),
                     'seconds': round(time.perf_counter() - start, 1),
                     'first_errors': [ln for ln in text.split('\n') if ln.startswith('========= ') and
                                      'ERROR SUMMARY' not in ln][:12]})
    clean = [r['rc'] == 0 and r['errors'] == 0 and r['failed'] == 0 for r in rows]
    summary = {'tools': len(rows), 'failed': len(rows) - sum(clean), 'rows': rows}
    write_json(args, 'sanitize', summary)
    return summary


# ---- report -----------------------------------------------------------------------------------------------------

def write_json(args, name, data):
    data['commit'] = os.environ.get('TILEGEMM_COMMIT', 'unknown')
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f'{name}.json'), 'w') as f:
        json.dump(data, f, indent=1)
    print(f'{name}: ' + json.dumps({k: v for k, v in data.items() if not isinstance(v, (list, dict))}))


def report(args):
    sections = {}
    for name in ('problems', 'graphs', 'threads', 'cache', 'sanitize'):
        path = os.path.join(args.out, f'{name}.json')
        if os.path.exists(path):
            sections[name] = json.load(open(path))
    report_dir = args.report_dir or args.out
    with open(os.path.join(report_dir, 'robustness.json'), 'w') as f:
        json.dump(sections, f, indent=1)
    lines = ['| section | result |', '|---|---|']
    if 'problems' in sections:
        s = sections['problems']
        lines.append(f"| random problems (seed {s['seed']}) | {s['run']} of {s['requested']} run, {s['failed']} failed |")
    if 'graphs' in sections:
        s = sections['graphs']
        lines.append(f"| CUDA graphs | {s['functions']} calls (every exported GEMM; split-K and stream-K forced on two; "
                     f"long-K HC pre-norm split two ways) × 3 replays, {s['failed']} failed |")
    if 'threads' in sections:
        s = sections['threads']
        lines.append(f"| threads | {s['threads']} threads, {s['calls']} calls, {s['failed']} failed |")
    if 'cache' in sections:
        s = sections['cache']
        lines.append(f"| cache | {s['scenarios']} scenarios, {s['failed']} failed, {s['not_run']} not run |")
    if 'sanitize' in sections:
        for r in sections['sanitize']['rows']:
            lines.append(f"| compute-sanitizer {r['tool']} | {r['problems']} problems, {r['errors']} errors, "
                         f"{r['failed']} failed, rc {r['rc']} |")
    if 'problems' in sections:
        lines += ['', '| kind | run | failed | worst error / bound |', '|---|---:|---:|---:|']
        for kind, k in sorted(sections['problems']['by_kind'].items()):
            lines.append(f"| {kind} | {k['run']} | {k['failed']} | {k['worst']:.3g} |")
    with open(os.path.join(report_dir, 'robustness.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('section', choices=['problems', 'graphs', 'threads', 'cache', 'sanitize', 'report', 'worker',
                                        'child'])
    ap.add_argument('--out', default='robustness-out', help='folder of the section files')
    ap.add_argument('--report-dir', help='where report writes robustness.json/.md (default --out)')
    ap.add_argument('--sanitize-count', type=int, default=120)
    ap.add_argument('--sanitize-timeout-s', type=float, default=130)
    ap.add_argument('--seed', type=int, default=2026)
    ap.add_argument('--count', type=int, default=10000)
    ap.add_argument('--workers', type=int, default=8)
    ap.add_argument('--deadline-s', type=float, default=420)
    ap.add_argument('--problem-timeout-s', type=float, default=240)
    ap.add_argument('--small', action='store_true', help='SMALL limits (CPU tests, compute-sanitizer)')
    ap.add_argument('--device', default='cuda')
    ap.add_argument('--backend', default='deep_gemm', help='deep_gemm, or a CPU stand-in of checks.py (reference, '
                    'fault-guard, ...)')
    ap.add_argument('--name', default='problems', help='section file name for problems (e.g. sanitizer-problems)')
    ap.add_argument('--in-process', action='store_true', help='problems without worker processes (sanitizers)')
    ap.add_argument('--threads', type=int, default=8)
    ap.add_argument('--per-thread', type=int, default=24)
    # worker/child internals
    ap.add_argument('--first', type=int, default=0)
    ap.add_argument('--stride', type=int, default=1)
    ap.add_argument('--deadline', type=float, default=0)
    ap.add_argument('--results')
    ap.add_argument('--progress')
    ap.add_argument('--indices')
    args = ap.parse_args(argv)
    from checks import BACKENDS  # torch from here on
    if args.backend not in BACKENDS:
        ap.error(f'--backend: expected one of {", ".join(BACKENDS)}, got {args.backend!r}')
    if args.section == 'worker':
        worker(args)
        return 0
    if args.section == 'child':
        return child(args)
    if args.section == 'problems':
        if args.in_process:
            from checks import run_case
            dg = _import_deep_gemm(args.backend)
            rows = []
            indices = map(int, args.indices.split(',')) if args.indices else range(args.count)
            for i in indices:
                p = problem_set.make_problem(args.seed, i, limits(args.small))
                r = run_case(p, args.device, args.backend, dg=dg)
                r['problem'] = problem_set.describe(p)
                rows.append(r)
            summary = summarize_problems(rows, args)
            write_json(args, args.name, summary)
        else:
            summary = run_problems(args)
        return 1 if summary['failed'] and not args.backend.startswith('fault-') else 0
    if args.section == 'graphs':
        return 1 if run_graphs(args)['failed'] else 0
    if args.section == 'threads':
        return 1 if run_threads(args)['failed'] else 0
    if args.section == 'cache':
        return 1 if run_cache(args)['failed'] else 0
    if args.section == 'sanitize':
        return 1 if run_sanitize(args)['failed'] else 0
    return report(args)


if __name__ == '__main__':
    sys.exit(main())
