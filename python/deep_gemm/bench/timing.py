"""Timers: CUDA events around each call after an L2 flush (triton do_bench's loop), kernel durations from the
torch profiler, and host time per call. torch is imported by the functions that need it."""
import json
import os
import tempfile
import time

from .stats import median

FLUSH_BYTES = 256 * 1000 * 1000
MAX_CALLS = 100000
# Each profiled call is preceded by the flush and by one tiny kernel of this op, which no GEMM call launches:
# the profile's GPU activity is cut into calls at these marker kernels.
MARKER_OP = 'bitwise_not'
GPU_CATEGORIES = ('kernel', 'gpu_memset', 'gpu_memcpy')


class Flusher:
    """Zero-fills a 256 MB buffer (more than the H200's 60 MiB L2) so no call finds its operands cached."""

    def __init__(self, torch):
        self.buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device='cuda')

    def __call__(self):
        self.buffer.zero_()


def time_events(torch, fn, flush, warmup_ms, rep_ms):
    """Median CUDA-event time of fn in microseconds, and the number of timed calls: one untimed call, a
    five-call estimate (each after a flush), warmup_ms of calls back to back, then rep_ms of calls, each after a flush
    outside its events: do_bench's loop, and tilegemm::bench's (the C++ timer the report sets beside this one), so
    that both warm the GPU up the same way under the power cap."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        fn()
    calls = min(MAX_CALLS, max(1, int(rep_ms / estimate_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    for i in range(calls):
        flush()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return median([s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]), calls


def call_segments(trace_events, marker=MARKER_OP):
    """GPU activity of each profiled call, from a chrome trace's events: what runs after a marker kernel up to
    the next marker, less the last activity before that marker (the next call's flush)."""
    gpu = sorted((e for e in trace_events if e.get('ph') == 'X' and e.get('cat') in GPU_CATEGORIES),
                 key=lambda e: float(e['ts']))
    marks = [i for i, e in enumerate(gpu) if e.get('cat') == 'kernel' and marker in e.get('name', '')]
    segments = []
    for j, i in enumerate(marks):
        last = j + 1 == len(marks)
        segments.append(gpu[i + 1:] if last else gpu[i + 1:marks[j + 1] - 1])
    return segments


def segment_times(segment):
    """(sum of the durations, first start to last end) of one call's GPU activity, in microseconds."""
    if not segment:
        return 0.0, 0.0
    busy = sum(float(e.get('dur', 0)) for e in segment)
    span = max(float(e['ts']) + float(e.get('dur', 0)) for e in segment) - float(segment[0]['ts'])
    return busy, span


def time_kernels(torch, fn, flush, calls=20):
    """Median over calls of the summed GPU durations of what fn launches (no launch gaps), and of its span."""
    marker = torch.zeros(1, dtype=torch.int32, device='cuda')
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        for _ in range(calls):
            flush()
            marker.bitwise_not_()
            fn()
        torch.cuda.synchronize()
    handle, path = tempfile.mkstemp(suffix='.json')
    os.close(handle)
    try:
        profile.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    events = trace['traceEvents'] if isinstance(trace, dict) else trace
    times = [segment_times(s) for s in call_segments(events)]
    if len(times) != calls:
        raise RuntimeError(f'kernel timer: expected {calls} marked calls in the profile, found {len(times)}')
    return median([t[0] for t in times]), median([t[1] for t in times])


def time_host(torch, fn, calls):
    """Median host time of one call over `calls` back-to-back calls with no synchronisation between them, and
    the wall time per call until the GPU has finished them all (both in microseconds)."""
    fn()
    torch.cuda.synchronize()
    times = []
    begin = time.perf_counter_ns()
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    wall = time.perf_counter_ns() - begin
    return median(times) / 1e3, wall / calls / 1e3
