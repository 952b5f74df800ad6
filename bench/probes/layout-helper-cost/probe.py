"""Where the scale-layout helpers' time goes on fp32 scales of 1 MB and more: per call, the host time (median of
back-to-back calls), the CUDA-event time after a 256 MB flush (the layout suite's timer), and the GPU activity under
torch.profiler (each kernel's name and duration), beside dst.copy_(src) of the bytes the helper reads; then the host
time of each step of get_mn_major_tma_aligned_tensor's Python path.

    scripts/gpu-peer python bench/probes/layout-helper-cost/probe.py
"""
import time

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


def host_us(fn, calls=300):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return sorted(times)[calls // 2] / 1e3


def steps(sf):
    """Host time of each step of the helper's Python path, and whether each step waits for the GPU: its host time
    right after torch.cuda._sleep keeps the stream busy for about 1 ms (a step that synchronises takes that long)."""
    from deep_gemm import _C, _sf_layout, _tensor
    out = _sf_layout._mn_major_empty(sf, sf.shape[-1], sf.dtype)
    target = _sf_layout._launch_target(sf, 'sf')
    vb, vo = _tensor.view(sf, 'sf'), _tensor.view(out, 'out')
    parts = {
        'require_sf': lambda: _sf_layout._require_sf(sf),
        'has_layout': lambda: _sf_layout._has_deepgemm_layout(sf),
        'new_empty_strided': lambda: _sf_layout._mn_major_empty(sf, sf.shape[-1], sf.dtype),
        'two views': lambda: (_tensor.view(sf, 'sf'), _tensor.view(out, 'out')),
        'launch_target': lambda: _sf_layout._launch_target(sf, 'sf'),
        '_C.sf_transpose': lambda: _C.sf_transpose(vb, vo, *target),
        'whole call': lambda: deep_gemm.get_mn_major_tma_aligned_tensor(sf),
    }
    for name, fn in parts.items():
        print(f'  {name}: {host_us(fn):.2f} us', flush=True)
    for name, fn in parts.items():
        torch.cuda.synchronize()
        torch.cuda._sleep(2_000_000)
        t0 = time.perf_counter_ns()
        fn()
        waited = (time.perf_counter_ns() - t0) / 1e3
        torch.cuda.synchronize()
        print(f'  {name} behind a ~1 ms GPU sleep: host {waited:.1f} us', flush=True)


def cases():
    """(name, helper call, bytes the helper reads) on the layout suite's kinds of scales."""
    ue8m0 = lambda shape: torch.exp2(torch.randint(-20, 20, shape, device='cuda').float())  # noqa: E731
    t2, t3 = torch.rand(4096, 56, device='cuda') + 0.5, torch.rand(8, 4096, 56, device='cuda') + 0.5
    t_big, p_small, p_big = torch.rand(32768, 128, device='cuda') + 0.5, ue8m0((4096, 56)), ue8m0((32768, 128))
    kg = ue8m0((16 * 16, 7168))
    ks = [2048] * 16
    layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    return (('transpose 4096x56', lambda: deep_gemm.get_mn_major_tma_aligned_tensor(t2), t2),
            ('transpose 8x4096x56', lambda: deep_gemm.get_mn_major_tma_aligned_tensor(t3), t3),
            ('transpose 32768x128', lambda: deep_gemm.get_mn_major_tma_aligned_tensor(t_big), t_big),
            ('packed 4096x56', lambda: deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(p_small), p_small),
            ('packed 32768x128', lambda: deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(p_big), p_big),
            ('k-grouped 16x7168x16', lambda: deep_gemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
                kg, layout, ks, 128, 128), kg))


def main():
    flush = torch.empty(256 * 10**6 // 4, dtype=torch.int32, device='cuda')
    for name, helper, sf in cases():
        src = torch.empty(sf.numel() * 4, dtype=torch.uint8, device='cuda')
        dst = torch.empty_like(src)
        for who, fn in (('ours', helper), ('copy', lambda: dst.copy_(src))):
            host = timing.time_host(torch, fn, 200)[0]
            print(f'{name} {who}: host {host:.1f} us, events {event_us(fn, flush):.1f} us, '
                  f'gpu {[(k, c, round(t, 1)) for k, c, t in gpu_activity(fn) if t > 0]}', flush=True)
    steps(torch.rand(4096, 56, device='cuda') + 0.5)


if __name__ == '__main__':
    main()
