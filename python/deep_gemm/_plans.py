"""Checked GEMM calls kept per argument signature, so that a call on a signature already seen runs with no check.

A signature holds everything the Python and C++ checks read apart from the data pointers: per tensor its shape,
strides, dtype and device index, which optional tensors are given, and the scalar arguments together with their
types (so ``1`` never finds the plan of ``True``, nor ``128.0`` that of ``128``). A plan is kept under
``(prefix, _C.tensors_key(*tensors))``: the prefix, a tuple the GEMM function builds, names the function and holds
its scalar arguments; the tensors are given in the plan's pointer order (None for an absent one). A call first asks
``run_kept(prefix, *tensors)``, which reads the tensors, finds the plan and runs it in one C++ call. What the checks
read from the pointers (null or not, the address modulo 16, which tensors share an address, as ``c`` given as ``d``)
and the process settings (the set_num_sms value, the DG_* environment after a reload, set_deterministic) are compared by
the C++ plan on every run: a run it turns down goes through the full checks again, which make a new plan.

A plan is kept only once every check passed. On a machine without a GPU the calls check their arguments and
then raise the library's RuntimeError, so the second call of a signature takes the kept plan there too (and
raises the same RuntimeError): that is what the CPU tests observe through ``deep_gemm._plan_cache_info()``.
"""
import functools
import threading

from . import _C, _torch_ops

# Plans kept at most; past it the oldest goes first. A serving process sees a few hundred signatures (every M it
# serves times its weights); a plan and its signature take a kilobyte or two.
CAPACITY = 4096

# (prefix, tensors' signature) -> _C.Plan. The GEMM functions' fast path reads it in C++: run_kept(prefix, *tensors).
table = {}
_misses = [0]
run_kept = functools.partial(_C.run_kept, table)


def kept_key(prefix, *tensors):
    """The key a call's plan is kept under; None when a tensor cannot be read or the prefix cannot be hashed (the
    call's checks then name the argument, and no plan is kept)."""
    signature = None if prefix is None else _C.tensors_key(*tensors)
    if signature is None:
        return None
    key = (prefix, signature)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def typed(x):
    """A scalar argument for a signature: with its type, as ``1 == True`` and ``128.0 == 128``."""
    return type(x), x


def typed_sequence(x):
    """A tuple or list argument (a recipe, ks_cpu) for a signature: its type, items and item types."""
    return type(x), tuple(x), tuple(map(type, x))


class Collected(BaseException):
    """What a call raises once its plan is made while collect() runs (a BaseException, so that no ``except
    Exception`` between the checks and the caller takes it for a failure)."""


_collecting = threading.local()  # .plans: the list collect() fills on this thread


def collect(make_calls):
    """The plans of the calls make_calls() makes on this thread, none of them run or kept (deep_gemm.precompile)."""
    _collecting.plans = []
    try:
        make_calls()
        return _collecting.plans
    finally:
        _collecting.plans = None


def run_checked(key, make_plan, stream, num_sms, pointers):
    """The slow path of a call: ``make_plan()`` runs the C++ checks (the caller ran the Python ones) and returns
    the plan, kept under ``key`` (None: not kept, e.g. an argument that cannot be part of a signature); then its
    first run on ``pointers``. While collect() runs, the plan is collected instead."""
    collecting = getattr(_collecting, 'plans', None)
    if collecting is not None:
        collecting.append(make_plan())
        raise Collected
    _misses[0] += 1
    _torch_ops.register_if_torch_imported()  # the first checked call of a process that imported torch later
    while True:
        plan = make_plan()
        if key is not None:
            if len(table) >= CAPACITY:
                del table[next(iter(table))]
            table[key] = plan
        # False only when a setting changed between the checks and the run (another thread): check again.
        if plan.first_launch(stream, num_sms, pointers):
            return


def plan_cache_info():
    """{'hits': calls run by a kept plan, 'misses': calls that passed the full checks and made a plan, 'declined':
    kept plans turned down (pointers or settings not those they were checked with), 'size': plans kept,
    'capacity': CAPACITY}. Calls that fail a check count in none of them."""
    stats = _C.plan_stats()
    return {'hits': stats['hits'], 'misses': _misses[0], 'declined': stats['declined'], 'size': len(table),
            'capacity': CAPACITY}


def clear_plan_cache():
    """Forgets every kept plan (the counters keep counting)."""
    table.clear()
