"""Running one robustness case: through deep_gemm, or (CPU tests of the harness itself) through a stand-in that
writes the reference, correctly or with a planted fault the checks must catch."""
import os
import time

import torch

from families import build_case
from operands import ACC, REL

# Stand-ins for deep_gemm (CPU tests): 'reference' writes exactly what the contract asks; the others plant one
# fault each (fault-crash and fault-hang on problems 5, 45, 85, ... only: the run must report them and go on).
BACKENDS = ('deep_gemm', 'reference', 'fault-guard', 'fault-skip', 'fault-value', 'fault-input', 'fault-crash',
            'fault-hang')


def write_reference(case, fault=None):
    for o in case.outputs:
        v = o.g.view
        if v.numel() == 0:
            continue
        value = o.ref.to(v.dtype)
        if o.rows is None:
            v.copy_(value)
        else:
            rows = o.rows
            while rows.dim() < v.dim():
                rows = rows.unsqueeze(-1)
            v.copy_(torch.where(rows, value, v))
        first = tuple(0 for _ in v.shape)
        if fault == 'fault-skip':
            o.g.poison_view()
        elif fault == 'fault-value':
            bound = REL[v.dtype] * o.ref[first].abs().item() + ACC[o.operand_dtype] * o.absref[first].item()
            v[first] = o.ref[first].item() + 1 + 4 * bound
    if fault == 'fault-guard':
        g = case.outputs[0].g
        g.buffer[g.offset - 1] = 0
    if fault == 'fault-input' and case.inputs:
        g = case.inputs[0]
        g.buffer.view(torch.uint8)[0] ^= 1


def expected_to_fail(case, backend):
    """Whether a planted fault is visible on this case (a skipped write needs an output element the contract
    defines)."""
    if backend in ('deep_gemm', 'reference', 'fault-crash', 'fault-hang'):
        return False
    if backend == 'fault-input':
        return bool(case.inputs)
    if backend == 'fault-guard':
        return True
    o = case.outputs[0]
    if o.g.view.numel() == 0:
        return False
    if backend == 'fault-skip':
        return o.rows is None or bool(o.rows.any())
    return o.rows is None or bool(o.rows.reshape(-1)[0])


def run_case(p, device, backend='deep_gemm', seed=None, dg=None):
    """Builds, fills, runs and checks one problem; a dict for the report."""
    start = time.perf_counter()
    result = {'index': p['index'], 'kind': p['kind']}
    try:
        case = build_case(p, device)
        case.fill(p['data_seed'] if seed is None else seed)
        case.prepare()
        if backend == 'deep_gemm':
            case.call(dg)
        elif backend in ('fault-crash', 'fault-hang'):
            if p['index'] % 40 == 5:
                os.abort() if backend == 'fault-crash' else time.sleep(3600)
            write_reference(case)
        else:
            write_reference(case, None if backend == 'reference' else backend)
        if device != 'cpu':
            torch.cuda.synchronize()
        failures = case.check()
        result.update(ok=not failures, failures=failures, worst=round(case.worst, 4))
        if backend.startswith('fault-'):
            result['fault_visible'] = expected_to_fail(case, backend)
    except Exception as e:  # every generated problem is legal: any exception is a failure
        result.update(ok=False, failures=[f'{type(e).__name__}: {e}'[:500]], worst=None)
    result['seconds'] = round(time.perf_counter() - start, 4)
    return result
