"""The fp8_fp4 suite: the SM90 FP8 x FP4 GEMM (deep_gemm._fp8_fp4_sm90.fp8_fp4_gemm_nt: A e4m3 1x128, B packed E2M1
with 1x32 UE8M0 scales, bf16 D) against the FP8 x FP8 GEMM on the same weights quantised 128x128 to e4m3 (ours:
fp8_gemm_nt; DeepGEMM's when loaded, which runs FP4 operands on SM100 only), DeepSeek-V3's dense shapes. What
FP4 saves is half of B's bytes; small M is bound by reading them."""
from .inputs import seed_for
from .measure import Entry, Problem, absent
from .peer import lookup

TOLERANCE = 0.01  # relative_diff against the unquantised product: DeepGEMM's FP8 x FP4 bound (FP8 x FP8 meets 1e-3)
FP8_KEY = 'ours_fp8'  # our fp8_gemm_nt on FP8 B, beside ours (FP4 B) and deepgemm (FP8 B)
NOTE = ('ours: deep_gemm._fp8_fp4_sm90.fp8_fp4_gemm_nt((a, sfa), (b_fp4, sfb), d), B packed E2M1 two per byte with '
        'UE8M0 scales per row and 32 k (DeepGEMM\'s per_token_cast_to_fp4, gran_k=32). Our FP8 / DeepGEMM: '
        'fp8_gemm_nt on the same weight cast 128x128 to e4m3 and the same A. FP8 / ours: what FP4 saves. All against '
        f'the unquantised a @ w.T in float64: relative diff < {TOLERANCE:g}.')


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


def problem(ctx, case):
    """The case's entries on one random x [M, K] and w [N, K] (torch.randn, bf16), seeded per case."""
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
    for key, lib in ((FP8_KEY, 'ours'), ('deepgemm', 'deepgemm')):
        if lib not in ctx.libs:
            continue
        f = lookup(ctx.libs[lib], 'fp8_gemm_nt')
        if f is None:
            entries[key] = absent('fp8_gemm_nt')
            continue
        out = torch.empty((m, n), dtype=torch.bfloat16, device='cuda')
        entries[key] = Entry(fn=lambda f=f, out=out: f(a, b8, out), out=out, label='fp8_gemm_nt((a, sfa), (b_fp8, sfb), d)')
    return Problem(case.name, entries, reference=reference, tolerance=TOLERANCE, flops=case.flops,
                   num_bytes=m * k + n * k // 2 + 2 * m * n, params={'m': m, 'n': n, 'k': k})


def add_rates(row):
    """FP8 / ours: our FP8 x FP8 time over our FP8 x FP4 time on the same shape."""
    from . import stats
    results = row['results']

    def us(key):
        r = results.get(key)
        return r.get('us') if r is not None and r['status'] == 'ok' else None
    row['ratio_vs_fp8'] = stats.ratio(us(FP8_KEY), us('ours'))
    return row
