"""Where a cached deep_gemm call's host time goes, family by family: the whole call, the kept plan's launch alone
(the C++ side: checks of the pointers, the family's launcher, cuLaunchKernelEx) and what is left (reading the
tensors, the signature, the lookup: the Python side), medians of back-to-back calls, best of 5 rounds, on the host
suite's problems; with DG_PRINT_CONFIGS=1 each plan's config is printed on its first call.

    scripts/gpu-peer python bench/probes/host-launch-cost/breakdown.py
"""
import torch

import deep_gemm
from deep_gemm.bench import cpp_timer, gemm_cases, host_suite, suites, timing
from deep_gemm.bench.inputs import Quantiser


def host_us(fn, rounds=5):
    """The best over rounds of the median host time of 300 back-to-back calls."""
    return min(timing.time_host(torch, fn, 300)[0] for _ in range(rounds))


def main():
    ctx = gemm_cases.Context(torch, {'ours': deep_gemm}, Quantiser(deep_gemm, 'ours'), cublas=False)
    one = torch.zeros(1, device='cuda')
    print(f'| {torch.cuda.get_device_name()} | call µs | plan launch µs | rest µs |\n|---|---:|---:|---:|')
    print(f'| torch x.add_(1) | {host_us(lambda: one.add_(1)):.2f} | | |')
    for case in suites.HOST:
        fn = host_suite.problem(ctx, case).entries['ours'].fn
        fn()
        runs = cpp_timer.capture_runs(deep_gemm, fn)
        plan, stream, num_sms, pointers = runs[0]
        call, launch = host_us(fn), host_us(lambda: plan.launch(stream, num_sms, *pointers))
        print(f'| {case.name} | {call:.2f} | {launch:.2f} | {call - launch:.2f} |')


if __name__ == '__main__':
    main()
