"""tf32_hc_prenorm_gemm with the library's split summed in clusters (distributed shared memory) against the last-CTA
sum it replaces, and DeepGEMM's unsummed splits: kernel time (torch.profiler durations) and CUDA-event time after a
256 MB flush, each plan checked against float64 first. Plans are pinned with TILEGEMM_CONFIG_FILTER (split_k,
cluster_m); 'default' is the selector's pick and 'cluster_m=1' its best plan without clusters (the previous kernel).

    DG_PRINT_CONFIGS=1 scripts/gpu-peer python bench/probes/hc-small-m/clusters.py [build-peer/deepgemm] [--quick|--large]
"""
import torch

import deep_gemm
from deep_gemm.bench import timing
from deep_gemm.bench.probe import command_line, pin

SHAPES = ((13, 24, 7168), (13, 24, 7680), (13, 24, 28672), (137, 24, 7168), (137, 24, 7680), (137, 24, 28672),
          (4096, 24, 7168), (4096, 24, 28672), (8192, 24, 28672))
PLANS = ('default', 'cluster_m=1', 'split_k=8,cluster_m=8', 'split_k=16,cluster_m=8', 'split_k=16,cluster_m=4',
         'split_k=32,cluster_m=8', 'split_k=64,cluster_m=8', 'split_k=24,cluster_m=8')
# --quick: the selector's plan against one and two clusters of eight, at DeepGEMM's small test M.
QUICK_PLANS = ('default', 'split_k=8,cluster_m=8', 'split_k=16,cluster_m=8')
QUICK_SHAPES = ((13, 24, 7168), (13, 24, 28672), (137, 24, 7168))
# --large: the selector's plan (two splits summed by the last CTA at M = 4096) against the same split in a cluster of 2.
LARGE_PLANS = ('default', 'split_k=2,cluster_m=2')
LARGE_SHAPES = ((4096, 24, 7168), (4096, 24, 28672), (8192, 24, 28672))
PEER_SPLITS = (None, 16, 32)


def check(lib, a, b, m, n, splits):
    """Largest error of D relative to sum |a*b| and of sqr_sum, against float64 (splits added for the peer)."""
    d = torch.empty((splits, m, n) if splits else (m, n), device='cuda', dtype=torch.float32)
    s = torch.empty((splits, m) if splits else (m, ), device='cuda', dtype=torch.float32)
    d.fill_(float('nan')), s.fill_(float('nan'))
    lib.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=splits)
    torch.cuda.synchronize()
    if splits:
        d, s = d.double().sum(0), s.double().sum(0)
    a64, b64 = a.double(), b.double()
    ref, mag = a64 @ b64.T, a64.abs() @ b64.abs().T
    sq = (a64 * a64).sum(1)
    return ((d.double() - ref).abs() / mag).max().item(), ((s.double() - sq).abs() / sq).max().item()


def call(lib, a, b, m, n, splits):
    d = torch.empty((splits, m, n) if splits else (m, n), device='cuda', dtype=torch.float32)
    s = torch.empty((splits, m) if splits else (m, ), device='cuda', dtype=torch.float32)
    return lambda: lib.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=splits)


def main():
    peer, flags = command_line()
    plans, shapes = ((QUICK_PLANS, QUICK_SHAPES) if '--quick' in flags else
                     (LARGE_PLANS, LARGE_SHAPES) if '--large' in flags else (PLANS, SHAPES))
    flush = timing.Flusher(torch)
    print('| shape | plan | lib | err D | err sq | kernel us | events us |\n|---|---|---|---:|---:|---:|---:|', flush=True)
    for m, n, k in shapes:
        a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        b = torch.randn(n, k, device='cuda', dtype=torch.float32)
        runs = [('ours', plan, None) for plan in plans]
        if peer is not None:
            runs += [('deepgemm', f'splits={s}', s) for s in PEER_SPLITS]
        for name, plan, splits in runs:
            lib = deep_gemm if name == 'ours' else peer
            try:
                if name == 'ours':
                    pin(plan)
                err_d, err_s = check(lib, a, b, m, n, splits)
                fn = call(lib, a, b, m, n, splits)
                kernel, _ = timing.time_kernels(torch, fn, flush, calls=20)
                events, _ = timing.time_events(torch, fn, flush, 5, 10)
            except Exception as e:  # noqa: BLE001 - a probe: print and go on
                print(f'| {m}x{n}x{k} | {plan} | {name} | {type(e).__name__}: {str(e)[:100]} | | | |', flush=True)
                continue
            bad = '' if err_d < 2**-10 and err_s < 1e-5 else ' WRONG'
            print(f'| {m}x{n}x{k} | {plan} | {name} | {err_d:.2g}{bad} | {err_s:.2g} | {kernel:.1f} | {events:.1f} |',
                  flush=True)
    pin('default')


if __name__ == '__main__':
    main()
