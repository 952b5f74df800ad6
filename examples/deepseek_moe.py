#!/usr/bin/env python3
"""A DeepSeek-V3 MoE layer's GEMMs through deep_gemm, timed next to torch.matmul (needs a GPU and torch).

Per token group: the shared-expert up/gate (7168 -> 2x2048) and down (2048 -> 7168) projections as dense
GEMMs, then the routed experts' up/gate (7168 -> 2x2048) and down (2048 -> 7168) as M-grouped contiguous
GEMMs over 8 experts of one rank, BF16 throughout.
"""
import sys

try:
    import torch
except ImportError:
    sys.exit('deepseek_moe.py needs PyTorch with CUDA (pip install torch); it is not installed')
if not torch.cuda.is_available():
    sys.exit('deepseek_moe.py needs a CUDA GPU (SM90); torch.cuda.is_available() is False')

import deep_gemm
from deep_gemm.testing import bench, calc_diff

HIDDEN, INTER, EXPERTS, TOKENS_PER_EXPERT = 7168, 2048, 8, 512


def report(name, flops, ours, theirs, diff):
    print(f'{name:<28} deep_gemm {ours * 1e6:8.1f} us ({flops / ours / 1e12:6.1f} TFLOP/s)   '
          f'torch {theirs * 1e6:8.1f} us ({flops / theirs / 1e12:6.1f} TFLOP/s)   diff {diff:.1e}')


def dense(name, m, n, k):
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
    d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    deep_gemm.bf16_gemm_nt(a, b, d)
    diff = float(calc_diff(d, a @ b.T))
    report(name, 2 * m * n * k, bench(lambda: deep_gemm.bf16_gemm_nt(a, b, d)), bench(lambda: torch.matmul(a, b.T)),
           diff)


def grouped(name, n, k):
    m = EXPERTS * TOKENS_PER_EXPERT
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(EXPERTS, n, k, device='cuda', dtype=torch.bfloat16)
    d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    layout = torch.arange(EXPERTS, device='cuda', dtype=torch.int32).repeat_interleave(TOKENS_PER_EXPERT)
    deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)
    chunks = a.view(EXPERTS, TOKENS_PER_EXPERT, k)
    ref = torch.bmm(chunks, b.transpose(1, 2)).view(m, n)
    report(name, 2 * m * n * k, bench(lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)),
           bench(lambda: torch.bmm(chunks, b.transpose(1, 2))), float(calc_diff(d, ref)))


if __name__ == '__main__':
    print(f'{torch.cuda.get_device_name()}, {deep_gemm.get_num_sms()} SMs, deep_gemm {deep_gemm.__version__}')
    for tokens in (128, 4096):
        dense(f'shared up/gate M={tokens}', tokens, 2 * INTER, HIDDEN)
        dense(f'shared down M={tokens}', tokens, HIDDEN, INTER)
    grouped(f'experts up/gate x{EXPERTS}', 2 * INTER, HIDDEN)
    grouped(f'experts down x{EXPERTS}', HIDDEN, INTER)
