"""Host cost of a deep_gemm call three ways: the plain function, its torch.library op called eagerly
(torch.ops.deep_gemm.<name>: torch's dispatcher in front of the same call), and a torch.compile'd function whose
graph holds the op (inductor). Median of back-to-back calls (timing.time_host), best of interleaved rounds.

    python -m deep_gemm.bench.op_cost [--out DIR]   (DIR/op_cost.json and DIR/op_cost.md)
"""
import argparse
import inspect
import json
import os
import sys

from . import timing

M, N, K = 256, 512, 512  # small, so that the GPU keeps up with back-to-back launches


def _cases(torch, deep_gemm):
    from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    def rand(*shape):
        return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)

    x, w, w3 = rand(M, K), rand(N, K), rand(2, N, K)
    token = per_token_cast_to_fp8(x, use_ue8m0=False)
    block = per_block_cast_to_fp8(w, use_ue8m0=False)
    blocks = [per_block_cast_to_fp8(w3[g], use_ue8m0=False) for g in range(2)]
    grouped = torch.stack([b[0] for b in blocks]), torch.stack([b[1] for b in blocks])
    rows = torch.arange(M, device='cuda', dtype=torch.int32) // (M // 2)
    xm = [per_token_cast_to_fp8(rand(128, K), use_ue8m0=False) for _ in range(2)]
    masked_a = torch.stack([t[0] for t in xm]), torch.stack([t[1] for t in xm])
    masked_m = torch.tensor([128, 77], dtype=torch.int32, device='cuda')

    def d(*shape):
        return torch.empty(*shape, device='cuda', dtype=torch.bfloat16)

    return [
        ('bf16_gemm_nt', deep_gemm.bf16_gemm_nt, (x, w, d(M, N))),
        ('fp8_gemm_nt', deep_gemm.fp8_gemm_nt, (token, block, d(M, N))),
        ('m_grouped_fp8_gemm_nt_contiguous', deep_gemm.m_grouped_fp8_gemm_nt_contiguous, (token, grouped, d(M, N),
                                                                                          rows)),
        ('m_grouped_fp8_gemm_nt_masked', deep_gemm.m_grouped_fp8_gemm_nt_masked, (masked_a, grouped, d(2, 128, N),
                                                                                  masked_m, 128)),
    ]


def measure(torch, deep_gemm, rounds=5, calls=200):
    from deep_gemm import _torch_ops
    deep_gemm.register_torch_ops()
    rows = []
    for name, fn, args in _cases(torch, deep_gemm):
        bound = inspect.signature(fn).bind(*args)
        bound.apply_defaults()
        op = _torch_ops._registry[name]
        values = op.op_values(list(bound.arguments.values()))
        op_fn = _torch_ops._ops[name]
        compiled = torch.compile(lambda: fn(*args), fullgraph=True)
        ways = {'plain': lambda: fn(*args), 'op': lambda: op_fn(*values), 'compiled': compiled}
        best = {way: float('inf') for way in ways}
        for _ in range(rounds):
            for way, call in ways.items():
                host_us, _ = timing.time_host(torch, call, calls)
                best[way] = min(best[way], host_us)
        rows.append({'function': name, **{f'{way}_us': round(us, 2) for way, us in best.items()}})
    return rows


def markdown(rows, gpu):
    lines = [f'Host µs per call ({gpu}; median of back-to-back calls, best of interleaved rounds)', '',
             '| function | plain | torch.ops.deep_gemm | torch.compile |', '|---|---:|---:|---:|']
    for r in rows:
        lines.append(f"| {r['function']} | {r['plain_us']:.2f} | {r['op_us']:.2f} | {r['compiled_us']:.2f} |")
    return '\n'.join(lines) + '\n'


def main(argv=None):
    p = argparse.ArgumentParser(prog='python -m deep_gemm.bench.op_cost', description=__doc__.split('\n\n')[0])
    p.add_argument('--out', metavar='DIR', help='also write DIR/op_cost.json and DIR/op_cost.md')
    args = p.parse_args(argv)
    import torch
    import deep_gemm
    if not torch.cuda.is_available():
        print('op_cost needs a CUDA GPU', file=sys.stderr)
        return 77
    gpu = torch.cuda.get_device_name()
    rows = measure(torch, deep_gemm)
    text = markdown(rows, gpu)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, 'op_cost.json'), 'w') as f:
            json.dump({'gpu': gpu, 'torch': torch.__version__, 'rows': rows}, f, indent=1)
        with open(os.path.join(args.out, 'op_cost.md'), 'w') as f:
            f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
