"""BF16 GEMMs at ragged M through deep_gemm.bf16_gemm_nt, run plain and with A and B exchanged (swap_ab=1, pinned
with TILEGEMM_CONFIG_FILTER), against cuBLAS (torch.matmul) and DeepGEMM in the same process: kernel time
(torch.profiler durations) and CUDA-event time after a 256 MB flush, each plan checked against float64 first.

    DG_PRINT_CONFIGS=1 scripts/gpu-peer python bench/probes/ragged-bf16/swap_ab.py [build-peer/deepgemm] [--quick]
"""
import torch

import deep_gemm
from deep_gemm.bench import timing
from deep_gemm.bench.probe import command_line, pin

# The BF16 suite's ragged shapes, decode and its M = 64/128 neighbours of the same weights.
SHAPES = ((257, 24576, 1536), (129, 4096, 7168), (129, 7168, 2048), (65, 2112, 7168), (65, 7168, 2048),
          (2048, 7168, 2048), (128, 24576, 1536), (64, 7168, 2048), (32, 7168, 2048), (1, 4096, 7168))
QUICK_SHAPES = ((257, 24576, 1536), (129, 4096, 7168), (129, 7168, 2048), (65, 2112, 7168))
PLANS = ('default', 'swap_ab=0', 'swap_ab=1')


def error(d, a, b):
    """Largest error of D relative to sum |a*b| against float64."""
    a64, b64 = a.double(), b.double()
    return ((d.double() - a64 @ b64.T).abs() / (a64.abs() @ b64.abs().T).clamp_min(1e-30)).max().item()


def main():
    peer, flags = command_line()
    shapes = QUICK_SHAPES if '--quick' in flags else SHAPES
    flush = timing.Flusher(torch)
    print('| shape | run | err | kernel us | events us |\n|---|---|---:|---:|---:|', flush=True)
    for m, n, k in shapes:
        a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
        runs = [(plan, deep_gemm.bf16_gemm_nt) for plan in PLANS] + [('cublas', None)]
        if peer is not None:
            runs.append(('deepgemm', peer.bf16_gemm_nt))
        for name, gemm in runs:
            d = torch.full((m, n), float('nan'), device='cuda', dtype=torch.bfloat16)
            if gemm is None:
                fn = lambda: torch.matmul(a, b.T, out=d)  # noqa: E731
            else:
                fn = lambda: gemm(a, b, d)  # noqa: E731
            try:
                if gemm is deep_gemm.bf16_gemm_nt:
                    pin(name)
                fn()
                torch.cuda.synchronize()
                err = error(d, a, b)
                kernel, _ = timing.time_kernels(torch, fn, flush, calls=20)
                events, _ = timing.time_events(torch, fn, flush, 5, 10)
            except Exception as e:  # noqa: BLE001 - a probe: print and go on
                print(f'| {m}x{n}x{k} | {name} | {type(e).__name__}: {str(e)[:100]} | | |', flush=True)
                continue
            bad = '' if err < 2**-7 else ' WRONG'
            print(f'| {m}x{n}x{k} | {name} | {err:.2g}{bad} | {kernel:.1f} | {events:.1f} |', flush=True)
    pin('default')


if __name__ == '__main__':
    main()
