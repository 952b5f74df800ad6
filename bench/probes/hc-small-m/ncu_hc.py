"""tf32_hc_prenorm_gemm on one small-M and one large-M shape of DeepGEMM's test, a few calls each, for ncu:

    ncu --clock-control none -k regex:hc python bench/probes/hc-small-m/ncu_hc.py
"""
import torch

import deep_gemm

for m, n, k in ((13, 24, 28672), (137, 24, 7168), (8192, 24, 28672)):
    a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(n, k, device='cuda', dtype=torch.float32)
    d = torch.empty(m, n, device='cuda', dtype=torch.float32)
    s = torch.empty(m, device='cuda', dtype=torch.float32)
    for _ in range(3):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, s)
    torch.cuda.synchronize()
    print(m, n, k, 'ok', flush=True)
