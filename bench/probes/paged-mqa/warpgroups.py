"""fp8_fp4_paged_mqa_logits on the paged_mqa suite's cases, our kernel with its consumer warpgroups and KV stages
per warpgroup pinned (TILEGEMM_CONFIG_FILTER math_wg / stages) against the default, DeepGEMM and a copy of the
cache, in one process on the same inputs: CUDA-event time after a 256 MB flush (the suite's timer), each plan checked
against the suite's float32 reference first.

    scripts/gpu-peer python bench/probes/paged-mqa/warpgroups.py [build-peer/deepgemm] [--quick]
"""
from types import SimpleNamespace

import torch

import deep_gemm
from deep_gemm.bench import timing
from deep_gemm.bench.mqa_cases import PAGED_MQA
from deep_gemm.bench.mqa_suite import paged_problem
from deep_gemm.bench.probe import command_line, pin

# 'default' is the selector's pick; the others pin it (stages alone: as many as fit).
PLANS = ('default', 'math_wg=2,stages=6', 'math_wg=3,stages=4', 'math_wg=4,stages=2', 'math_wg=4,stages=3',
         'math_wg=4,stages=4')
QUICK = ('256x1x32x128 kv8192', '256x2x64x128 kv8192', '4096x2x64x128 kv8192')


def main():
    peer, flags = command_line()
    cases = [c for c in PAGED_MQA if '--quick' not in flags or c.name in QUICK]
    ctx = SimpleNamespace(torch=torch, seed=0, libs={'ours': deep_gemm, **({'deepgemm': peer} if peer else {})})
    flush = timing.Flusher(torch)
    print('| case | run | check | events us | GB/s |\n|---|---|---|---:|---:|', flush=True)
    for case in cases:
        problem = paged_problem(ctx, case)
        runs = [(plan, problem.entries['ours']) for plan in PLANS] + \
            [(key, problem.entries[key]) for key in ('deepgemm', 'copy') if key in problem.entries]
        for name, entry in runs:
            nbytes = problem.params['copy_bytes'] if name == 'copy' else problem.num_bytes
            try:
                pin(name if entry is problem.entries['ours'] else 'default')
                if entry.prepare:
                    entry.prepare()
                out = entry.fn()
                torch.cuda.synchronize()
                ok, message, _ = entry.verify(out)
                us, _ = timing.time_events(torch, entry.fn, flush, 5, 20)
            except Exception as e:  # noqa: BLE001 - a probe: print and go on
                print(f'| {case.name} | {name} | {type(e).__name__}: {str(e)[:100]} | | |', flush=True)
                continue
            check = 'ok' if ok else f'WRONG {message}'
            print(f'| {case.name} | {name} | {check} | {us:.1f} | {nbytes / us / 1e3:.0f} |', flush=True)
        del problem
        torch.cuda.empty_cache()
    pin('default')


if __name__ == '__main__':
    main()
