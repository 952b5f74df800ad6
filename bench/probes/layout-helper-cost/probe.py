"""Where get_mn_major_tma_aligned_tensor's time goes on fp32 scales of 1 MB and more: per call, the host time
(median of back-to-back calls), the CUDA-event time after a 256 MB flush (the layout suite's timer), and the GPU
activity under torch.profiler (each kernel's name and duration), beside dst.copy_(src) of the same bytes.

    scripts/gpu-peer python bench/probes/layout-helper-cost/probe.py
"""
import torch

import deep_gemm
from deep_gemm.bench import timing


def event_us(fn, flush, calls=100):
    fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    for i in range(calls):
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))[calls // 2]


def gpu_activity(fn):
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
    return [(e.key, e.count, e.device_time_total / max(e.count, 1)) for e in prof.key_averages()]


def main():
    flush = torch.empty(256 * 10**6 // 4, dtype=torch.int32, device='cuda')
    for mn, kb in ((4096, 56), (32768, 128)):
        sf = torch.rand(mn, kb, device='cuda') + 0.5
        src = torch.empty(mn * kb * 4, dtype=torch.uint8, device='cuda')
        dst = torch.empty_like(src)
        for name, fn in (('ours', lambda: deep_gemm.get_mn_major_tma_aligned_tensor(sf)),
                         ('copy', lambda: dst.copy_(src))):
            host = timing.time_host(torch, fn, 200)[0]
            print(f'{mn}x{kb} {name}: host {host:.1f} us, events {event_us(fn, flush):.1f} us, '
                  f'gpu {[(k, c, round(t, 1)) for k, c, t in gpu_activity(fn)]}', flush=True)


if __name__ == '__main__':
    main()
