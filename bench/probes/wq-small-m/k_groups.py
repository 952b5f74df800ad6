"""The small-M mma.sync kernels against K groups and K splits. For each shape and each pinned (k_groups, split_k)
plan (TILEGEMM_CONFIG_FILTER), D is checked first, then timed by kernel time (torch.profiler) and by CUDA events after
a 256 MB flush, beside the library's own pick.
  Weight-only (int8, int4 g128, MXFP4): against float64, beside a copy of the packed codes (the read floor: the packed
  bytes at the copy's bandwidth) and the model's time of each plan (src/heuristics/wq_config.cpp).
  --fp8-fp4: FP8 x FP4 and MXFP8 against the unquantised product, beside our FP8 x FP8 GEMM on the same weight.

    scripts/gpu-peer python bench/probes/wq-small-m/k_groups.py [--quick] [--fp8-fp4]
"""
import sys

import torch

import deep_gemm
import deep_gemm.weight_quant as wq
from deep_gemm.bench import timing
from deep_gemm.bench.probe import pin

SHAPES = ((1, 4096, 7168), (1, 2112, 7168), (1, 7168, 2048), (16, 4096, 7168), (16, 2112, 7168))
WEIGHTS = ('int8', 'int4g128', 'mxfp4')
PLANS = ((1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (4, 1), (4, 2), (1, 8), (2, 4), (4, 4))
QUICK_SHAPES, QUICK_PLANS = SHAPES[:1] + SHAPES[3:4], ((1, 1), (1, 4), (2, 1), (2, 2), (4, 1), (4, 2))


def weight(kind, n, k):
    if kind == 'int8':
        return wq.pack_int8(torch.randint(-128, 128, (n, k), dtype=torch.int8), torch.rand(n) * 2**-9 + 2**-10)
    if kind == 'int4g128':
        scales = (torch.rand((n, k // 128)) * 2**-6 + 2**-7).to(torch.bfloat16)
        return wq.pack_int4(torch.randint(0, 16, (n, k), dtype=torch.uint8), scales, None)
    return wq.pack_mxfp4(torch.randint(0, 256, (n, k // 2), dtype=torch.uint8),
                         torch.randint(118, 124, (n, k // 32), dtype=torch.uint8))


def timed(fn, flush):
    kernel, _ = timing.time_kernels(torch, fn, flush, calls=20)
    events, _ = timing.time_events(torch, fn, flush, 5, 10)
    return kernel, events


def fp8_fp4(flush, quick):
    """FP8 x FP4 and MXFP8 at each pinned plan, beside FP8 x FP8 (fp8_gemm_nt, 128x128 weight scales)."""
    from deep_gemm import _fp8_fp4_sm90 as f4
    from deep_gemm.bench.fp8_fp4_suite import cast_to_fp4, cast_to_mxfp8
    from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
    shapes = ((1, 2112, 7168), (16, 2112, 7168), (64, 2112, 7168), (16, 7168, 2048))
    plans = (None, (1, 1), (1, 4), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4), (1, 8))
    print('| kind | m x n x k | plan | kernel us | events us | FP8 x FP8 events us | FP8 / this | check |\n'
          '|---|---|---|---:|---:|---:|---:|---|', flush=True)
    for m, n, k in shapes[:2] if quick else shapes:
        x = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
        ref = x.double() @ w.double().T
        a, b8 = per_token_cast_to_fp8(x, use_ue8m0=False), per_block_cast_to_fp8(w, use_ue8m0=False)
        d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
        pin(None)
        fp8_us = timed(lambda: deep_gemm.fp8_gemm_nt(a, b8, d), flush)[1]
        for kind in ('fp8_fp4', 'mxfp8'):
            args = (a, cast_to_fp4(torch, w)) if kind == 'fp8_fp4' else (cast_to_mxfp8(torch, x), cast_to_mxfp8(torch, w))
            run = f4.fp8_fp4_gemm_nt if kind == 'fp8_fp4' else f4.mxfp8_gemm_nt
            for plan in plans:
                pin(None if plan is None else f'k_groups={plan[0]},split_k={plan[1]}')
                label = 'library' if plan is None else f'g{plan[0]} s{plan[1]}'
                try:
                    d.fill_(float('nan'))
                    run(*args, d)
                    diff = float(deep_gemm.testing.calc_diff(d.double(), ref))
                    ok = 'ok' if diff < 0.01 else f'DIFF {diff:.2e}'
                    kernel, events = timed(lambda: run(*args, d), flush)  # noqa: B023 - timed at once
                except Exception as e:  # noqa: BLE001 - a probe: print and go on
                    print(f'| {kind} | {m}x{n}x{k} | {label} | {type(e).__name__}: {str(e)[:100]} | | | | |', flush=True)
                    continue
                print(f'| {kind} | {m}x{n}x{k} | {label} | {kernel:.1f} | {events:.1f} | {fp8_us:.1f} | '
                      f'{fp8_us / events:.2f} | {ok} |', flush=True)
    pin(None)


def main():
    quick = '--quick' in sys.argv
    flush = timing.Flusher(torch)
    if '--fp8-fp4' in sys.argv:
        fp8_fp4(flush, quick)
        return
    print('| weight | m x n x k | plan | model us | kernel us | events us | floor us | floor / events | check |\n'
          '|---|---|---|---:|---:|---:|---:|---:|---|', flush=True)
    for kind in WEIGHTS:
        for m, n, k in QUICK_SHAPES if quick else SHAPES:
            w = weight(kind, n, k).to('cuda')
            a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
            ref = (a.double() @ wq.reference_weight(w).to('cuda').double().T)
            d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
            src = w.data.reshape(-1)
            dst = torch.empty_like(src)
            copy_us, _ = timing.time_events(torch, lambda: dst.copy_(src), flush, 5, 10)
            floor = w.nbytes / (2 * src.numel() / copy_us)
            for plan in (None, ) + (QUICK_PLANS if quick else PLANS):
                pin(None if plan is None else f'k_groups={plan[0]},split_k={plan[1]}')
                label = 'library' if plan is None else f'g{plan[0]} s{plan[1]}'
                try:
                    line = wq.plan(m, w, torch.bfloat16)[0]
                    model = float(line.split('model fused ')[1].split(' us')[0])
                    if plan is None:
                        label += ' (' + ' '.join(f for f in line.split() if f.startswith(('splits=', 'k_groups=',
                                                                                           'block_m=', 'stages='))) + ')'
                    d.fill_(float('nan'))
                    wq.gemm(a, w, d)
                    diff = deep_gemm.testing.calc_diff(d.double(), ref)
                    ok = 'ok' if diff < 1e-4 else f'DIFF {diff:.2e}'
                    kernel, events = timed(lambda: wq.gemm(a, w, d), flush)  # noqa: B023 - timed at once
                except Exception as e:  # noqa: BLE001 - a probe: print and go on
                    print(f'| {kind} | {m}x{n}x{k} | {label} | {type(e).__name__}: {str(e)[:100]} | | | | | |',
                          flush=True)
                    continue
                print(f'| {kind} | {m}x{n}x{k} | {label} | {model:.1f} | {kernel:.1f} | {events:.1f} | {floor:.1f} | '
                      f'{floor / events:.2f} | {ok} |', flush=True)
    pin(None)


if __name__ == '__main__':
    main()
