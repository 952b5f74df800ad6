"""The int8 suite: deep_gemm.int8.gemm_nt(a, b, scale_a, scale_b, out) (int8 x int8, exact int32 sums, per-token and
per-channel fp32 scales, bf16 D) against cuBLASLt's int8 GEMM through torch._int_mm (int32 D, no scaling: less
epilogue work, twice the output bytes) on the same operands, DeepSeek-V3's dense shapes."""
from .inputs import seed_for
from .measure import Entry, Problem, unsupported

TOLERANCE = 1e-5  # relative_diff of D against the float64 scaled sums: one bf16 rounding of D
NOTE = ('ours: deep_gemm.int8.gemm_nt on int8 a [M, K] and b [N, K] with fp32 scale_a [M] and scale_b [N], bf16 D. '
        'cuBLAS: torch._int_mm(a, b.T) into a preallocated int32 D (cuBLASLt int8 with int32 output; the scaling is '
        'not timed, and cuBLASLt takes M > 16 only), checked scaled by the same factors. Both against the float64 '
        f'scaled sums: relative diff < {TOLERANCE:g}.')


def problem(ctx, case):
    """The case's entries on one random int8 a, b (the whole range) and positive scales, seeded per case."""
    from .. import int8
    torch = ctx.torch
    generator = torch.Generator().manual_seed(seed_for(ctx.seed, f'int8 {case.name}'))
    m, n, k = case.m, case.n, case.k
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=generator).cuda()
    b = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=generator).cuda()
    sa = torch.exp2(torch.rand(m, generator=generator) * 4 - 14).cuda()
    sb = torch.exp2(torch.rand(n, generator=generator) * 4 - 14).cuda()
    scale = sa.double()[:, None] * sb.double()[None, :]
    reference = (a.double() @ b.double().T) * scale
    d = torch.empty((m, n), dtype=torch.bfloat16, device='cuda')
    entries = {'ours': Entry(fn=lambda: int8.gemm_nt(a, b, sa, sb, d), out=d,
                             label='deep_gemm.int8.gemm_nt(a, b, scale_a, scale_b, d)')}
    if ctx.cublas:
        entries['cublas'] = _cublaslt_entry(torch, a, b, scale, reference)
    return Problem(case.name, entries, reference=reference, tolerance=TOLERANCE, flops=case.flops,
                   num_bytes=(m + n) * k + 2 * m * n + 4 * (m + n), params={'m': m, 'n': n, 'k': k})


def _cublaslt_entry(torch, a, b, scale, reference):
    label = 'torch._int_mm(a, b.T, out=c) (int32 c)'
    if not hasattr(torch, '_int_mm'):
        return unsupported('this torch has no torch._int_mm', label)
    if a.shape[0] <= 16:
        return unsupported('cuBLASLt int8 (torch._int_mm) takes M > 16 only', label)
    from .inputs import relative_diff
    c = torch.empty((a.shape[0], b.shape[0]), dtype=torch.int32, device='cuda')
    bt = b.T

    def verify(out):
        diff = relative_diff(out.double() * scale, reference)
        return diff < TOLERANCE, None if diff < TOLERANCE else f'diff {diff:.3g} against the float64 reference', diff
    return Entry(fn=lambda: torch._int_mm(a, bt, out=c), out=c, prepare=lambda: c.fill_(-2**31), verify=verify,
                 label=label)
