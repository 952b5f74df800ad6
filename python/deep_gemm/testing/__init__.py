"""DeepGEMM's test and benchmark helpers (torch is imported when they are called)."""
from .bench import bench, bench_kineto, empty_suppress, suppress_stdout_stderr
from .numeric import calc_diff, count_bytes

__all__ = ['bench', 'bench_kineto', 'empty_suppress', 'suppress_stdout_stderr', 'calc_diff', 'count_bytes']
