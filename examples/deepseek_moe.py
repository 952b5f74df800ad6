#!/usr/bin/env python3
"""A DeepSeek-V3 MoE layer's GEMMs through deep_gemm, timed next to torch.matmul (needs a GPU and torch).

Per token count: the shared expert's up/gate (7168 -> 2x2048) and down (2048 -> 7168) projections as dense
GEMMs, then the routed experts' up/gate and down as M-grouped contiguous GEMMs over 8 experts of one rank.
Each runs three ways: torch.matmul in BF16 (the baseline), deep_gemm's BF16 GEMM, and deep_gemm's FP8 GEMM
with DeepSeek's recipe (activations cast per token 1x128, weights per block 128x128, "1D2D", BF16 out).
Times are GEMM-only averages (deep_gemm.testing.bench: L2 flushed, warmed up); the FP8 weights are cast once
up front, as a serving stack would, and the activation cast is timed on its own line. "diff" is DeepGEMM's
calc_diff against an FP32 reference computed from the unquantised inputs.

Exit status: 0 when every path ran, 1 when one failed (its error is printed), 77 without torch or a GPU.
"""
import sys

try:
    import torch
except ImportError:
    print('deepseek_moe.py needs PyTorch with CUDA (pip install torch); it is not installed')
    sys.exit(77)
if not torch.cuda.is_available():
    print('deepseek_moe.py needs a CUDA GPU (SM90); torch.cuda.is_available() is False')
    sys.exit(77)

import deep_gemm  # noqa: E402
from deep_gemm.testing import bench, calc_diff  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

HIDDEN, INTER, EXPERTS, TOKENS_PER_EXPERT = 7168, 2048, 8, 512
failures = []


def timed(label, fn, flops):
    """'  123.4 us (456.7 TFLOP/s)' for fn, or the error it raised (recorded as a failure)."""
    try:
        fn()
        torch.cuda.synchronize()
        seconds = bench(fn)
    except (RuntimeError, ValueError) as e:
        failures.append(f'{label}: {e}')
        return f'{"failed":>28}', None
    return f'{seconds * 1e6:9.1f} us ({flops / seconds / 1e12:6.1f} TFLOP/s)', seconds


def diff_of(out, ref):
    return f'{float(calc_diff(out.float(), ref)):.1e}'


def row(name, cells):
    print(f'{name:<26}' + ' | '.join(f'{c:<30}' for c in cells))


def cast_weights_per_block(w):
    """[G, N, K] BF16 -> (fp8 [G, N, K], fp32 [G, ceil(N/128), ceil(K/128)]), one expert at a time."""
    pairs = [per_block_cast_to_fp8(w[g], use_ue8m0=False) for g in range(w.size(0))]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def dense(name, m, n, k):
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
    ref = a.float() @ b.float().T
    flops = 2 * m * n * k
    d_bf16 = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    d_fp8 = torch.empty_like(d_bf16)
    a_fp8, b_fp8 = per_token_cast_to_fp8(a, use_ue8m0=False), per_block_cast_to_fp8(b, use_ue8m0=False)

    torch_cell, _ = timed(f'{name} torch', lambda: torch.matmul(a, b.T), flops)
    bf16_cell, ok_bf16 = timed(f'{name} bf16', lambda: deep_gemm.bf16_gemm_nt(a, b, d_bf16), flops)
    fp8_cell, ok_fp8 = timed(f'{name} fp8', lambda: deep_gemm.fp8_gemm_nt(a_fp8, b_fp8, d_fp8), flops)
    row(name, [torch_cell, bf16_cell, fp8_cell])
    row('', ['diff ' + diff_of(torch.matmul(a, b.T), ref), 'diff ' + (diff_of(d_bf16, ref) if ok_bf16 else '-'),
             'diff ' + (diff_of(d_fp8, ref) if ok_fp8 else '-')])
    cast = bench(lambda: per_token_cast_to_fp8(a, use_ue8m0=False))
    row('', ['', '', f'(+ activation cast {cast * 1e6:.1f} us)'])


def grouped(name, n, k):
    m = EXPERTS * TOKENS_PER_EXPERT
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(EXPERTS, n, k, device='cuda', dtype=torch.bfloat16)
    layout = torch.arange(EXPERTS, device='cuda', dtype=torch.int32).repeat_interleave(TOKENS_PER_EXPERT)
    chunks = a.view(EXPERTS, TOKENS_PER_EXPERT, k)
    ref = torch.bmm(chunks.float(), b.float().transpose(1, 2)).view(m, n)
    flops = 2 * m * n * k
    d_bf16 = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    d_fp8 = torch.empty_like(d_bf16)
    a_fp8, b_fp8 = per_token_cast_to_fp8(a, use_ue8m0=False), cast_weights_per_block(b)

    torch_cell, _ = timed(f'{name} torch', lambda: torch.bmm(chunks, b.transpose(1, 2)), flops)
    bf16_cell, ok_bf16 = timed(f'{name} bf16',
                               lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d_bf16, layout), flops)
    fp8_cell, ok_fp8 = timed(f'{name} fp8',
                             lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(a_fp8, b_fp8, d_fp8, layout), flops)
    row(name, [torch_cell, bf16_cell, fp8_cell])
    row('', ['diff ' + diff_of(torch.bmm(chunks, b.transpose(1, 2)).view(m, n), ref),
             'diff ' + (diff_of(d_bf16, ref) if ok_bf16 else '-'), 'diff ' + (diff_of(d_fp8, ref) if ok_fp8 else '-')])


if __name__ == '__main__':
    print(f'{torch.cuda.get_device_name()}, {deep_gemm.get_num_sms()} SMs, deep_gemm {deep_gemm.__version__}, '
          f'torch {torch.__version__}')
    row('GEMM', ['torch.matmul (bf16)', 'deep_gemm bf16', 'deep_gemm fp8 1D2D'])
    for tokens in (128, 4096):
        dense(f'shared up/gate M={tokens}', tokens, 2 * INTER, HIDDEN)
        dense(f'shared down M={tokens}', tokens, HIDDEN, INTER)
    grouped(f'experts up/gate x{EXPERTS}', 2 * INTER, HIDDEN)
    grouped(f'experts down x{EXPERTS}', HIDDEN, INTER)
    for failure in failures:
        print('FAILED', failure)
    sys.exit(1 if failures else 0)
