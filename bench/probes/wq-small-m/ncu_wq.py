"""The weight-only GEMM at decode sizes, a few calls per shape, for ncu: where a fused kernel that should stream the
packed weight at DRAM speed spends its time (the wq suite has it at 0.28-0.68 of the read floor at M <= 16).

    ncu --clock-control none -k regex:sm90_wq_gemm --section SpeedOfLight --section WarpStateStats \
        --section LaunchStats --section Occupancy python bench/probes/wq-small-m/ncu_wq.py
"""
import torch

import deep_gemm
from deep_gemm import weight_quant

SHAPES = (('int8', 1, 4096, 7168), ('mxfp4', 1, 4096, 7168), ('int8', 16, 2112, 7168), ('mxfp4', 16, 2112, 7168))


def packed(fmt, n, k):
    if fmt == 'int8':
        q = torch.randint(-128, 128, (n, k), dtype=torch.int8)
        return weight_quant.pack_int8(q, torch.rand(n) * 2 ** -9 + 2 ** -10)
    blocks = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8)
    exponents = torch.randint(118, 124, (n, k // 32), dtype=torch.uint8)
    return weight_quant.pack_mxfp4(blocks, exponents)


for fmt, m, n, k in SHAPES:
    w = packed(fmt, n, k).to('cuda')
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    out = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    for _ in range(2):
        weight_quant.gemm(a, w, out)
    torch.cuda.synchronize()
    print(fmt, m, n, k, deep_gemm.__version__, flush=True)
