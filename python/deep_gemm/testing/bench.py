"""DeepGEMM's timing helpers: CUDA-event timing (bench) and profiler kernel times (bench_kineto)."""
import inspect
import os
import sys
from typing import Callable, Optional

__all__ = ['bench', 'bench_kineto', 'empty_suppress', 'suppress_stdout_stderr']


def bench(fn, num_warmups: int = 5, num_tests: int = 10, high_precision: bool = False):
    """Average seconds per call of ``fn`` over ``num_tests`` calls, after flushing L2 and warming up."""
    import torch
    torch.cuda.synchronize()
    flush = torch.empty(int(256e6 // 4), dtype=torch.int, device='cuda')
    flush.zero_()
    for _ in range(num_warmups):
        fn()
    if high_precision:
        # A long kernel in front hides the CPU launch overhead of the timed calls.
        x = torch.randn((8192, 8192), dtype=torch.float, device='cuda')
        y = torch.randn((8192, 8192), dtype=torch.float, device='cuda')
        x @ y
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(num_tests):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / num_tests / 1e3


class empty_suppress:
    def __enter__(self):
        return self

    def __exit__(self, *_):
        pass


class suppress_stdout_stderr:
    """Silences file descriptors 1 and 2 (the profiler prints from C++)."""

    def __enter__(self):
        # Text Python buffered before the redirection still goes where it was written.
        sys.stdout.flush()
        sys.stderr.flush()
        self._null = open(os.devnull, 'w')
        self._saved = [(fd, os.dup(fd)) for fd in (sys.stdout.fileno(), sys.stderr.fileno())]
        self._streams = sys.stdout, sys.stderr
        for fd, _ in self._saved:
            os.dup2(self._null.fileno(), fd)
        sys.stdout = sys.stderr = self._null
        return self

    def __exit__(self, *_):
        self._null.flush()
        sys.stdout, sys.stderr = self._streams
        for fd, saved in self._saved:
            os.dup2(saved, fd)
            os.close(saved)
        self._null.close()


def _parse_time(text):
    for unit, scale in (('ms', 1e3), ('us', 1e6)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) / scale
    if text.endswith('s'):
        return float(text[:-1])
    raise ValueError(f'unparsable profiler time {text!r}')


def _kernel_times(table_lines, names, with_multiple_kernels):
    """Average seconds per launch of the kernels whose profiler-table row contains each name (a substring, as
    DeepGEMM matches: 'gemm_' finds sm90_fp8_gemm_1d2d_impl); 0 for a name no row contains. Rows end with the
    average device time and the call count. Unless with_multiple_kernels, a name may match one row only."""
    times = []
    for name in names:
        rows = [line for line in table_lines if name in line]
        if len(rows) > 1 and not with_multiple_kernels:
            raise ValueError(f'kernel_names: expected {name!r} to match one kernel of the profile, got {len(rows)} '
                             f'rows (pass with_multiple_kernels=True to average them): {rows}')
        total, count = 0.0, 0
        for row in rows:
            fields = row.split()
            calls = int(fields[-1])
            total += _parse_time(fields[-2]) * calls
            count += calls
        times.append(total / count if count > 0 else 0)
    return times


def bench_kineto(fn, kernel_names, num_tests: int = 30, suppress_kineto_output: bool = False,
                 trace_path: str = None, flush_l2: bool = True, with_multiple_kernels: bool = False,
                 barrier: Optional[Callable] = None):
    """Average GPU seconds per launch of each kernel whose name contains one of ``kernel_names`` (a str or a
    tuple of str; the result has the same form), measured with torch.profiler over ``num_tests`` calls, each
    after an 8 GB memset that flushes L2 (flush_l2). ``barrier`` (multi-GPU runs) is called before each call,
    behind a ~10 ms sleep kernel, so that every rank starts together. DG_USE_NVIDIA_TOOLS=1 skips profiling
    (it conflicts with Nsight and compute-sanitizer) and returns 1 per name."""
    if not isinstance(kernel_names, (str, tuple)):
        raise TypeError(f'kernel_names: expected a str or a tuple of str, got {type(kernel_names).__name__}')
    is_tuple = isinstance(kernel_names, tuple)
    if int(os.environ.get('DG_USE_NVIDIA_TOOLS', 0)):
        return (1, ) * len(kernel_names) if is_tuple else 1

    import torch
    fn()  # a first call outside the profile: JIT compilation and auto-tuning prints
    suppress = suppress_stdout_stderr if suppress_kineto_output else empty_suppress
    with suppress():
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1)
        options = {}
        # Accumulating events across steps (newer torch) keeps the warm-up step's events out of the table.
        if 'acc_events' in inspect.signature(torch.profiler.profile).parameters:
            options['acc_events'] = True
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], schedule=schedule,
                                    **options) as profiler:
            for _ in range(2):
                for _ in range(num_tests):
                    if flush_l2:
                        torch.empty(int(8e9 // 4), dtype=torch.int, device='cuda').zero_()
                    if barrier is not None:
                        torch.cuda._sleep(int(2e7))
                        barrier()
                    fn()
                torch.cuda.synchronize()
                profiler.step()

    lines = profiler.key_averages().table(sort_by='cuda_time_total', max_name_column_width=100).split('\n')
    times = _kernel_times(lines, kernel_names if is_tuple else (kernel_names, ), with_multiple_kernels)
    if trace_path is not None:
        profiler.export_chrome_trace(trace_path)
    return tuple(times) if is_tuple else times[0]
