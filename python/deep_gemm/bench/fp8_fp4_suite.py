"""The fp8_fp4 suite: the SM90 FP8 x FP4 GEMM (deep_gemm._fp8_fp4_sm90.fp8_fp4_gemm_nt: A e4m3 1x128, B packed E2M1
with 1x32 UE8M0 scales, bf16 D) against the FP8 x FP8 GEMM on the same weights quantised 128x128 to e4m3 (ours:
fp8_gemm_nt; DeepGEMM's when loaded, which runs FP4 operands on SM100 only), DeepSeek-V3's dense shapes. What
FP4 saves is half of B's bytes; small M is bound by reading them."""
from . import stats
from .inputs import seed_for
from .measure import Entry, Problem, library_entries

TOLERANCE = 0.01  # relative_diff against the unquantised product: DeepGEMM's FP8 x FP4 bound (FP8 x FP8 meets 1e-3)
FP8_KEY = 'ours_fp8'  # our fp8_gemm_nt on FP8 B, beside ours (FP4 B) and deepgemm (FP8 B)
MXFP8_KEY = 'ours_mxfp8'  # our MXFP8 GEMM (same kernel, B e4m3, 1x32 scales on both), dense rows
NOTE = ('ours: deep_gemm._fp8_fp4_sm90.fp8_fp4_gemm_nt((a, sfa), (b_fp4, sfb), d), B packed E2M1 two per byte with '
        'UE8M0 scales per row and 32 k (DeepGEMM\'s per_token_cast_to_fp4, gran_k=32). Our FP8 / DeepGEMM: '
        'fp8_gemm_nt on the same weight cast 128x128 to e4m3 and the same A. FP8 / ours: what FP4 saves. Our MXFP8: '
        '_fp8_fp4_sm90.mxfp8_gemm_nt on x and w cast to e4m3 with UE8M0 scales per 32 k (dense rows); FP8 / MXFP8 its '
        f'speed against FP8 1D2D. All against the unquantised a @ w.T in float64: relative diff < {TOLERANCE:g}.')


def cast_to_fp4(torch, w):
    """[N, K] -> (int8 [N, K / 2] packed E2M1 codes, fp32 [N, K / 32] UE8M0 scales): each 32-k group scaled by the
    power of two at or above amax / 6 (as DeepGEMM's per_token_cast_to_fp4), codes rounded to the nearest value (ties to
    the smaller magnitude)."""
    n, k = w.shape
    x = w.float().view(n, k // 32, 32)
    scale = torch.exp2(torch.ceil(torch.log2(x.abs().amax(dim=2).clamp_min(1e-4) / 6.0)))
    y = (x / scale[:, :, None]).clamp(-6, 6)
    values = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6], device=w.device)
    magnitude = (y.abs()[..., None] - values).abs().argmin(dim=-1)  # ties go to the smaller value's index
    codes = (magnitude | ((y < 0) & (magnitude > 0)).to(magnitude.dtype) * 8).to(torch.uint8).view(n, k)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).view(torch.int8)
    return packed.contiguous(), scale.contiguous()


def cast_to_mxfp8(torch, x):
    """[R, K] -> (e4m3 [R, K], fp32 [R, K / 32]): each 32-k group scaled by the power of two at or above amax / 448."""
    r, k = x.shape
    g = x.float().view(r, k // 32, 32)
    scale = torch.exp2(torch.ceil(torch.log2(g.abs().amax(dim=2).clamp_min(1e-4) / 448.0)))
    return (g / scale[:, :, None]).to(torch.float8_e4m3fn).view(r, k), scale.contiguous()


def masked_problem(ctx, case):
    """MoE decoding over `case.groups` experts: ours (m_grouped_fp8_fp4_gemm_nt_masked) against the FP8 masked GEMM
    on the same experts cast 128x128; only each expert's masked_m rows are compared."""
    import random

    from .. import _fp8_fp4_sm90
    from .suites import masked_rows
    torch = ctx.torch
    seed = seed_for(ctx.seed, f'fp8_fp4 {case.name}')
    generator = torch.Generator().manual_seed(seed)
    e, m, n, k = case.groups, case.max_m, case.n, case.k
    rows = masked_rows(e, case.expected_m, m, random.Random(seed))
    masked_m = torch.tensor(rows, dtype=torch.int32, device='cuda')
    x = torch.randn((e, m, k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    w = torch.randn((e, n, k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    reference = torch.cat([(x[i, :r].double() @ w[i].double().T).reshape(-1) for i, r in enumerate(rows)])

    def valid(out):
        return torch.cat([out[i, :r].reshape(-1) for i, r in enumerate(rows)])
    a = ctx.quant.token_grouped(x)
    fp4 = [cast_to_fp4(torch, w[i]) for i in range(e)]
    b4 = torch.stack([p for p, _ in fp4]), torch.stack([s for _, s in fp4])
    b8 = ctx.quant.block_grouped(torch, w)
    d = torch.empty((e, m, n), dtype=torch.bfloat16, device='cuda')
    entries = {'ours': Entry(fn=lambda: _fp8_fp4_sm90.m_grouped_fp8_fp4_gemm_nt_masked(a, b4, d, masked_m,
                                                                                      case.expected_m),
                             out=d, label='_fp8_fp4_sm90.m_grouped_fp8_fp4_gemm_nt_masked(a, b_fp4, d, masked_m, m)')}
    entries.update(_fp8_entries(ctx, 'm_grouped_fp8_gemm_nt_masked', (e, m, n),
                                lambda f, out: f(a, b8, out, masked_m, case.expected_m)))
    return Problem(case.name, entries, reference=reference, valid=valid, tolerance=TOLERANCE,
                   flops=2 * sum(rows) * n * k, num_bytes=e * n * k // 2,
                   params={'m': sum(rows), 'n': n, 'k': k, 'experts': e, 'expected_m': case.expected_m,
                           'masked_m': rows})


def _fp8_entries(ctx, function, shape, call):
    """Our and DeepGEMM's FP8 `function` (where loaded): call(f, out) runs it into a bf16 out of `shape` of its own."""
    return library_entries(ctx, {FP8_KEY: 'ours', 'deepgemm': 'deepgemm'}, function, shape, call,
                           f'{function} on FP8 B')


def problem(ctx, case):
    """The case's entries on one random x [M, K] and w [N, K] (torch.randn, bf16), seeded per case."""
    if hasattr(case, 'groups'):
        return masked_problem(ctx, case)
    from .. import _fp8_fp4_sm90
    torch = ctx.torch
    generator = torch.Generator().manual_seed(seed_for(ctx.seed, f'fp8_fp4 {case.name}'))
    m, n, k = case.m, case.n, case.k
    x = torch.randn((m, k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    w = torch.randn((n, k), generator=generator).to(device='cuda', dtype=torch.bfloat16)
    reference = x.double() @ w.double().T
    a = ctx.quant.token(x)
    b4 = cast_to_fp4(torch, w)
    b8 = ctx.quant.block(w)
    d = torch.empty((m, n), dtype=torch.bfloat16, device='cuda')
    entries = {'ours': Entry(fn=lambda: _fp8_fp4_sm90.fp8_fp4_gemm_nt(a, b4, d), out=d,
                             label='_fp8_fp4_sm90.fp8_fp4_gemm_nt((a, sfa), (b_fp4, sfb), d)')}
    entries.update(_fp8_entries(ctx, 'fp8_gemm_nt', (m, n), lambda f, out: f(a, b8, out)))
    a_mx, b_mx = cast_to_mxfp8(torch, x), cast_to_mxfp8(torch, w)
    d_mx = torch.empty((m, n), dtype=torch.bfloat16, device='cuda')
    entries[MXFP8_KEY] = Entry(fn=lambda: _fp8_fp4_sm90.mxfp8_gemm_nt(a_mx, b_mx, d_mx), out=d_mx,
                               label='_fp8_fp4_sm90.mxfp8_gemm_nt((a, sfa_1x32), (b, sfb_1x32), d)')
    return Problem(case.name, entries, reference=reference, tolerance=TOLERANCE, flops=case.flops,
                   num_bytes=m * k + n * k // 2 + 2 * m * n, params={'m': m, 'n': n, 'k': k})


def add_rates(row):
    """FP8 / ours: our FP8 x FP8 time over our FP8 x FP4 time on the same shape."""
    row['ratio_vs_fp8'] = stats.ratio(stats.ok_us(row, FP8_KEY), stats.ok_us(row, 'ours'))
    row['mxfp8_vs_fp8'] = stats.ratio(stats.ok_us(row, FP8_KEY), stats.ok_us(row, MXFP8_KEY))
    return row
