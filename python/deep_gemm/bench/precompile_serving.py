"""What a serving engine's warm-up costs with deep_gemm.precompile: DeepSeek-V3's dense FP8 weights ((N, K) of the
deepseek suite) for every M in 1..max_m, compiled on all cores into an empty JIT cache; then, in a new process with
compiling forbidden (set_jit_compile(False)), one real call of every (M, N, K) on the GPU: any call whose kernel
the precompile missed raises. Needs a GPU for the second part only.

    python -m deep_gemm.bench.precompile_serving [--max-m 4096] [--sf-layout mn-major] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WEIGHTS = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]

_CALLS = '''
import json, sys, time, torch, deep_gemm
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
max_m, sf_layout, weights = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
deep_gemm.set_jit_compile(False)
failed, calls, start = [], 0, time.perf_counter()
for n, k in weights:
    b = per_block_cast_to_fp8(torch.randn(n, k, device='cuda', dtype=torch.bfloat16), use_ue8m0=False)
    x = torch.randn(max_m, k, device='cuda', dtype=torch.bfloat16)
    a_all = per_token_cast_to_fp8(x, use_ue8m0=False)
    for m in range(1, max_m + 1):
        sf = a_all[1][:m].contiguous()
        if sf_layout == 'mn-major':
            sf = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
        d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
        try:
            deep_gemm.fp8_gemm_nt((a_all[0][:m], sf), b, d)
            calls += 1
        except RuntimeError as e:
            failed.append(f'{m}x{n}x{k}: {str(e)[:200]}')
torch.cuda.synchronize()
print(json.dumps({'calls': calls, 'failed': len(failed), 'first_failures': failed[:5],
                  'seconds': round(time.perf_counter() - start, 1)}))
'''


def main(argv=None):
    p = argparse.ArgumentParser(prog='python -m deep_gemm.bench.precompile_serving', description=__doc__.split('\n\n')[0])
    p.add_argument('--max-m', type=int, default=4096)
    p.add_argument('--sf-layout', default='mn-major', choices=['mn-major', 'row-major'])
    p.add_argument('--out', metavar='DIR', help='also write DIR/precompile_serving.json and .md')
    args = p.parse_args(argv)
    cache = tempfile.mkdtemp(prefix='deep_gemm-precompile-')
    os.environ['DG_JIT_CACHE_DIR'] = cache
    import deep_gemm
    start = time.perf_counter()
    compiled = [deep_gemm.precompile('fp8_gemm_nt', m=range(1, args.max_m + 1), n=n, k=k, sf_layout=args.sf_layout)
                for n, k in WEIGHTS]
    result = {'max_m': args.max_m, 'sf_layout': args.sf_layout, 'cores': os.cpu_count(),
              'precompile_seconds': round(time.perf_counter() - start, 1),
              'kernels': sum(r['kernels'] for r in compiled), 'compiled': sum(r['compiled'] for r in compiled),
              'per_weight': [dict(n=n, k=k, **r) for (n, k), r in zip(WEIGHTS, compiled)]}
    out = subprocess.run([sys.executable, '-c', _CALLS, str(args.max_m), args.sf_layout, json.dumps(WEIGHTS)],
                         capture_output=True, text=True)
    result['calls_after'] = json.loads(out.stdout) if out.returncode == 0 else {'error': out.stderr[-2000:]}
    after = result['calls_after']
    text = (f"DeepSeek-V3 dense FP8 weights, every M in 1..{args.max_m} ({len(WEIGHTS)} (N, K), {args.sf_layout} A "
            f"scales): {result['kernels']} kernels compiled in {result['precompile_seconds']} s on "
            f"{result['cores']} cores; then {after.get('calls', 0)} real calls with compiling forbidden, "
            f"{after.get('failed', 'n/a')} failed.\n")
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, 'precompile_serving.json'), 'w') as f:
            json.dump(result, f, indent=1)
        with open(os.path.join(args.out, 'precompile_serving.md'), 'w') as f:
            f.write(text)
    return 0 if after.get('failed') == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
