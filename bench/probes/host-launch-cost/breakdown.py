"""Where a cached deep_gemm call's Python side spends its host time: medians of back-to-back calls (best of 5
rounds) of the whole call and of its pieces, on the host suite's FP8 and BF16 dense shapes, beside torch's own
one-element ``add_`` (one torch kernel launch through its dispatcher).

    PYTHONPATH=<site with deep_gemm> python breakdown.py
"""
import time

import torch

import deep_gemm
from deep_gemm import _plans, _tensor
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def host_us(fn, calls=300, rounds=5):
    best = float('inf')
    for _ in range(rounds):
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(calls):
            t0 = time.perf_counter_ns()
            fn()
            times.append(time.perf_counter_ns() - t0)
        torch.cuda.synchronize()
        times.sort()
        best = min(best, times[len(times) // 2] / 1e3)
    return best


def main():
    m, n, k = 128, 2112, 1024
    x = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
    a, b = per_token_cast_to_fp8(x, use_ue8m0=False), per_block_cast_to_fp8(w, use_ue8m0=False)
    d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    xb, wb = torch.randn(128, 512, device='cuda', dtype=torch.bfloat16), torch.randn(256, 512, device='cuda',
                                                                                     dtype=torch.bfloat16)
    db = torch.empty(128, 256, device='cuda', dtype=torch.bfloat16)
    one = torch.zeros(1, device='cuda')
    deep_gemm.fp8_gemm_nt(a, b, d)
    deep_gemm.bf16_gemm_nt(xb, wb, db)
    torch.cuda.synchronize()
    plans = list(_plans.table.values())
    fp8_plan = [p for p in plans if p.num_tensors == 6][0]
    ptrs = [a[0].data_ptr(), a[1].data_ptr(), b[0].data_ptr(), b[1].data_ptr(), d.data_ptr(), 0]
    stream = _tensor.current_stream(0)
    sig = _tensor.signature
    rows = [
        ('torch x.add_(1) (one torch launch)', lambda: one.add_(1)),
        ('deep_gemm.bf16_gemm_nt 128x256x512', lambda: deep_gemm.bf16_gemm_nt(xb, wb, db)),
        ('deep_gemm.fp8_gemm_nt 128x2112x1024', lambda: deep_gemm.fp8_gemm_nt(a, b, d)),
        ('  kept plan launch alone (FP8)', lambda: fp8_plan.launch(stream, 0, *ptrs)),
        ('  five signatures (FP8 key tensors)', lambda: (sig(a[0]), sig(a[1]), sig(b[0]), sig(b[1]), sig(d))),
        ('  five data_ptr()', lambda: (a[0].data_ptr(), a[1].data_ptr(), b[0].data_ptr(), b[1].data_ptr(),
                                        d.data_ptr())),
        ('  current_stream', lambda: _tensor.current_stream(0)),
    ]
    print(f'| {torch.cuda.get_device_name()} | host µs per call |\n|---|---:|')
    for name, fn in rows:
        print(f'| {name} | {host_us(fn):.2f} |')


if __name__ == '__main__':
    main()
