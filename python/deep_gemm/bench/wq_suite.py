"""The wq suite: the weight-only quantised GEMM deep_gemm.weight_quant.gemm(a, w, out) (int4 with group scales,
int8 with channel scales, MXFP4) against our own BF16 GEMM on the same weight dequantised to bf16 (what the packed
weight saves), DeepGEMM's BF16 GEMM on it (the peer, when loaded) and a copy of the packed bytes (the read floor).
Activations bf16, D bf16."""
from . import stats
from .inputs import seed_for
from .measure import Entry, Problem, library_entries
from .suites import wq_group_size

TOLERANCE = 1e-4  # relative_diff of D against a.float() @ W.T in fp32 (W the float64 weight): one bf16 rounding of D
BF16_KEY = 'ours_bf16'  # our bf16_gemm_nt on the dequantised weight, beside ours, deepgemm and copy
NOTE = ('ours: deep_gemm.weight_quant.gemm on the packed weight (MoE rows E x ~m x N x K: '
        'm_grouped_gemm_masked over E experts, about m tokens each, m the column). Our BF16 / DeepGEMM BF16: '
        'bf16_gemm_nt (m_grouped_bf16_gemm_nt_masked) on the same weights dequantised to bf16 (exactly the values '
        'the kernels decode). BF16 / ours: the speed-up of packing. '
        'Read floor: the packed bytes (codes, scales, zero points) at the bandwidth of a device-to-device copy of the '
        'codes (2 bytes moved per byte copied); floor / ours: the fraction of that floor reached. Checked against '
        f'a.float() @ W.T (W exact in float64): relative diff < {TOLERANCE:g}.')


def _quantised(torch, case, generator):
    """A random packed weight of the case's format on the CPU (codes uniform; scales of either sign)."""
    from .. import weight_quant
    n, k = case.n, case.k
    if case.weight.startswith('int4'):
        group = wq_group_size(case.weight)
        q = torch.randint(0, 16, (n, k), dtype=torch.uint8, generator=generator)
        scales = (torch.rand((n, k // group), generator=generator) * 2 ** -6 + 2 ** -7).to(torch.bfloat16)
        zeros = torch.randint(0, 16, (n, k // group), dtype=torch.uint8, generator=generator) \
            if case.weight.endswith('z') else None
        return weight_quant.pack_int4(q, scales, zeros)
    if case.weight == 'int8':
        q = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=generator)
        return weight_quant.pack_int8(q, torch.rand(n, generator=generator) * 2 ** -9 + 2 ** -10)
    blocks = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, generator=generator)
    exponents = torch.randint(118, 124, (n, (k + 31) // 32), dtype=torch.uint8, generator=generator)
    return weight_quant.pack_mxfp4(blocks, exponents)


def _bf16_entries(ctx, function, shape, call, label):
    """Our and DeepGEMM's BF16 `function` (where loaded) on the dequantised weight: call(f, out) runs it into a bf16
    out of `shape` of its own."""
    return library_entries(ctx, {BF16_KEY: 'ours', 'deepgemm': 'deepgemm'}, function, shape, call, label)


def _packed_experts(torch, case, generator):
    """`case.experts` random packed weights of the case's format, stacked, on the GPU."""
    from .. import weight_quant
    return weight_quant.stack([_quantised(torch, case, generator) for _ in range(case.experts)]).to('cuda')


def masked_problem(ctx, case):
    """Masked MoE: ours (weight_quant.m_grouped_gemm_masked) against the BF16 masked GEMM on the dequantised
    experts; only each expert's masked_m rows are compared."""
    import random

    from .. import weight_quant
    from .suites import masked_rows
    torch = ctx.torch
    seed = seed_for(ctx.seed, f'wq {case.name}')
    generator = torch.Generator().manual_seed(seed)
    rows = masked_rows(case.experts, case.expected_m, case.max_m, random.Random(seed))
    masked_m = torch.tensor(rows, dtype=torch.int32, device='cuda')
    w = _packed_experts(torch, case, generator)
    w64 = [weight_quant.reference_weight(w.expert(e)) for e in range(case.experts)]
    w_bf16 = torch.stack([x.to(device='cuda', dtype=torch.bfloat16) for x in w64])
    a = torch.randn((case.experts, case.max_m, case.k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    reference = torch.cat([(a[e, :r].float() @ w64[e].to(device='cuda', dtype=torch.float).T).double().reshape(-1)
                           for e, r in enumerate(rows)])

    def valid(out):
        return torch.cat([out[e, :r].reshape(-1) for e, r in enumerate(rows)])
    shape = (case.experts, case.max_m, case.n)
    d = torch.empty(shape, dtype=torch.bfloat16, device='cuda')
    entries = {'ours': Entry(fn=lambda: weight_quant.m_grouped_gemm_masked(a, w, masked_m, case.expected_m, d),
                             out=d, label='weight_quant.m_grouped_gemm_masked(a, w, masked_m, expected_m, d)')}
    entries.update(_bf16_entries(ctx, 'm_grouped_bf16_gemm_nt_masked', shape,
                                 lambda f, out: f(a, w_bf16, out, masked_m, case.expected_m),
                                 'm_grouped_bf16_gemm_nt_masked(a, dequantised experts, d, masked_m, expected_m)'))
    src = w.data.reshape(-1)
    dst = torch.empty_like(src)
    entries['copy'] = Entry(fn=lambda: dst.copy_(src), label='packed codes: dst.copy_(src)',
                            verify=lambda out: (True, None, None))
    return Problem(case.name, entries, reference=reference, valid=valid, tolerance=TOLERANCE,
                   flops=2 * sum(rows) * case.n * case.k, num_bytes=w.nbytes,
                   params={'m': sum(rows), 'n': case.n, 'k': case.k, 'weight': case.weight, 'experts': case.experts,
                           'expected_m': case.expected_m, 'masked_m': rows, 'packed_bytes': w.nbytes,
                           'copy_bytes': 2 * src.numel()})


def problem(ctx, case):
    """The case's entries on one a [M, K] bf16 (torch.randn) and one packed weight, seeded per case."""
    if hasattr(case, 'experts'):
        return masked_problem(ctx, case)
    from .. import weight_quant
    torch = ctx.torch
    generator = torch.Generator().manual_seed(seed_for(ctx.seed, f'wq {case.name}'))
    w_cpu = _quantised(torch, case, generator)
    w, w64 = w_cpu.to('cuda'), weight_quant.reference_weight(w_cpu)
    w_bf16 = w64.to(device='cuda', dtype=torch.bfloat16)  # exact: each weight is a bf16 value (int4: rounded once)
    a = torch.randn((case.m, case.k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    reference = (a.float() @ w64.to(device='cuda', dtype=torch.float).T).double()
    entries = {}
    d = torch.empty((case.m, case.n), dtype=torch.bfloat16, device='cuda')
    entries['ours'] = Entry(fn=lambda: weight_quant.gemm(a, w, d), out=d, label='weight_quant.gemm(a, w, d)')
    entries.update(_bf16_entries(ctx, 'bf16_gemm_nt', tuple(d.shape), lambda f, out: f(a, w_bf16, out),
                                 'bf16_gemm_nt(a, dequantised w, d)'))
    src = w.data.reshape(-1)
    dst = torch.empty_like(src)
    entries['copy'] = Entry(fn=lambda: dst.copy_(src), label='packed codes: dst.copy_(src)',
                            verify=lambda out: (True, None, None))
    return Problem(case.name, entries, reference=reference, tolerance=TOLERANCE, flops=case.flops,
                   num_bytes=w.nbytes + a.numel() * 2 + d.numel() * 2,
                   params={'m': case.m, 'n': case.n, 'k': case.k, 'weight': case.weight, 'packed_bytes': w.nbytes,
                           'copy_bytes': 2 * src.numel()})


def add_rates(row):
    """The speed-up over BF16 (ours and DeepGEMM's BF16 time over ours) and the read floor: the packed bytes at the
    copy's bandwidth, and that floor over our time."""
    row['ratio_vs_bf16'] = stats.ratio(stats.ok_us(row, BF16_KEY), stats.ok_us(row, 'ours'))
    return stats.add_read_floor(row, row['params']['packed_bytes'])

