"""`tilegemm bench`'s timer in this process: the C++ loop of tilegemm::bench (CUDA events around each run, an L2 flush
before it) over the plan our deep_gemm call ran, on the same tensors and stream. It times the kernel the Python call
launches with no Python between runs, so the two columns differ by what the Python path adds; being in the same
process and interleaved with the other calls, both see the same clocks under the power cap."""
from .timing import FLUSH_BYTES


class _Recorder:
    """Stands in for a kept plan during one call: notes each run (plan, stream, num_sms, pointers), then runs it."""

    def __init__(self, plan, runs):
        self._plan, self._runs = plan, runs

    def launch(self, stream, num_sms, *pointers):
        self._runs.append((self._plan, stream, num_sms, list(pointers[:self._plan.num_tensors])))
        return self._plan.launch(stream, num_sms, *pointers)

    def first_launch(self, stream, num_sms, pointers):
        self._runs.append((self._plan, stream, num_sms, list(pointers)))
        return self._plan.first_launch(stream, num_sms, pointers)


def capture_runs(ours, fn):
    """The plan runs of one call of ``fn`` (a call into ``ours``, our deep_gemm module, on a signature it has kept a
    plan for): a list of (plan, stream, num_sms, pointers). The kept plans are restored afterwards."""
    table = ours._plans.table
    saved = dict(table)
    runs = []
    try:
        for key, plan in saved.items():
            table[key] = _Recorder(plan, runs)
        fn()
    finally:
        for key, plan in saved.items():
            table[key] = plan
    return runs


def supported(ours):
    """Whether our package's plans carry the C++ timer (an older build does not)."""
    plans = getattr(ours, '_plans', None)
    return plans is not None and hasattr(getattr(ours, '_C', None), 'Plan') and hasattr(ours._C.Plan, 'time_runs')


def time_run(run, warmup_ms, rep_ms):
    """(median µs, timed runs) of the C++ loop over one captured run."""
    plan, stream, num_sms, pointers = run
    return plan.time_runs(stream, num_sms, pointers, warmup_ms, rep_ms, FLUSH_BYTES)
