"""Where tf32_hc_prenorm_gemm's time goes at small M: kernel time (torch.profiler durations) and CUDA-event time
after a 256 MB flush, for ours and DeepGEMM at each caller-chosen num_splits (and None), on DeepGEMM's test shapes
at M = 13, 137 and 4096 and the seed's 8192 x 24 x 28672, then with one K block per CTA (a CTA's fixed cost). Fits
of time against stages per CTA separate a fixed cost from a per-stage one.

    scripts/gpu-peer python bench/probes/hc-small-m/splits.py build-peer/deepgemm
"""
import sys

import torch

import deep_gemm
from deep_gemm.bench import timing
from deep_gemm.bench.peer import load_peer

SHAPES = ((13, 24, 28672), (13, 24, 7168), (137, 24, 28672), (137, 24, 7168), (4096, 24, 28672), (8192, 24, 28672))
SPLITS = (None, 1, 2, 4, 8, 16, 32)
# One 128-wide K block per CTA (K = 128 x splits): what a CTA costs beyond streaming its stages.
FIXED = tuple(((13, 24, 128 * s), (s, )) for s in (1, 8, 32))


def call(lib, a, b, m, n, splits):
    d = torch.empty((splits, m, n) if splits else (m, n), device='cuda', dtype=torch.float32)
    s = torch.empty((splits, m) if splits else (m, ), device='cuda', dtype=torch.float32)
    return lambda: lib.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=splits)


def main():
    libs = {'ours': deep_gemm}
    if len(sys.argv) > 1:
        libs['deepgemm'] = load_peer(sys.argv[1])
    flush = timing.Flusher(torch)
    print('| shape | splits | lib | kernel us | span us | events us |\n|---|---:|---|---:|---:|---:|', flush=True)
    for (m, n, k), splits_list in tuple((shape, SPLITS) for shape in SHAPES) + FIXED:
        a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        b = torch.randn(n, k, device='cuda', dtype=torch.float32)
        for splits in splits_list:
            for name, lib in libs.items():
                fn = call(lib, a, b, m, n, splits)
                try:
                    kernel, span = timing.time_kernels(torch, fn, flush, calls=20)
                    events, _ = timing.time_events(torch, fn, flush, 5, 10)
                except Exception as e:  # noqa: BLE001 - a probe: print and go on
                    print(f'| {m}x{n}x{k} | {splits} | {name} | {type(e).__name__}: {str(e)[:80]} | | |', flush=True)
                    continue
                print(f'| {m}x{n}x{k} | {splits} | {name} | {kernel:.1f} | {span:.1f} | {events:.1f} |', flush=True)


if __name__ == '__main__':
    main()
