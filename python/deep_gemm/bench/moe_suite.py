"""The moe suite: deep_gemm.moe.fp8_moe, DeepSeek-V3's FP8 MoE layer on one GPU (256 experts, top-8, H 7168, I 2048),
against the same layer as separate steps (moe.unfused: PyTorch routing, gather, per-token casts and SwiGLU around the
grouped GEMMs) with our grouped GEMMs and with DeepGEMM's, and against the read floor of the active experts' weights."""
from . import stats
from .inputs import seed_for
from .measure import Entry, Problem

TOLERANCE = 1e-3  # calc_diff against the float64 layer (moe.reference): the intermediate's FP8 rounding
UNFUSED_KEY = 'ours_unfused'
NOTE = ('ours: deep_gemm.moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out, workspace) (route, dispatch, grouped GEMM, '
        'SwiGLU + quantisation, grouped GEMM, combine: six kernels). Our unfused / DeepGEMM unfused: moe.unfused, the '
        'same layer as PyTorch steps around m_grouped_fp8_gemm_nt_contiguous (psum layout), ours or DeepGEMM\'s. '
        'Tokens routed by torch.topk over random scores, weights 128x128-block FP8. Read floor: the active experts\' '
        'weight bytes at the bandwidth of a device-to-device copy; floor / ours: the fraction reached. Checked '
        f'against the float64 layer: calc_diff < {TOLERANCE:g}.')
_WEIGHTS = {}  # (experts, hidden, inter) -> (w1, w2): generating 11 GB of weights once per run, not per case
_COPY_BYTES = 1 << 29


def _weights(torch, case, seed):
    key = (case.experts, case.hidden, case.inter)
    if key not in _WEIGHTS:
        from ..utils.math import per_block_cast_to_fp8
        _WEIGHTS.clear()
        generator = torch.Generator(device='cuda').manual_seed(seed)

        def cast(n, k):
            data = torch.empty((case.experts, n, k), dtype=torch.float8_e4m3fn, device='cuda')
            sf = torch.empty((case.experts, n // 128, k // 128), dtype=torch.float32, device='cuda')
            for e in range(case.experts):
                w = torch.randn((n, k), generator=generator, device='cuda', dtype=torch.bfloat16) * k**-0.5
                data[e], sf[e] = per_block_cast_to_fp8(w, use_ue8m0=False)
            return data, sf
        _WEIGHTS[key] = cast(2 * case.inter, case.hidden), cast(case.hidden, case.inter)
    return _WEIGHTS[key]


def problem(ctx, case):
    from .. import moe
    from ..moe._reference import unfused_steps
    torch = ctx.torch
    seed = seed_for(ctx.seed, f'moe {case.name}')
    w1, w2 = _weights(torch, case, seed_for(ctx.seed, 'moe weights'))
    generator = torch.Generator(device='cuda').manual_seed(seed)
    t, e, k, h = case.tokens, case.experts, case.topk, case.hidden
    x = torch.randn((t, h), generator=generator, device='cuda', dtype=torch.bfloat16)
    scores = torch.randn((t, e), generator=generator, device='cuda')
    topk_weights, topk_idx = torch.topk(scores.softmax(-1), k, dim=-1)
    topk_weights = topk_weights.float()
    reference = moe.reference(x, topk_idx, topk_weights, w1, w2)
    ws = moe.Workspace(t, k, e, h, case.inter, x.device)
    y = torch.empty((t, h), dtype=torch.bfloat16, device='cuda')
    entries = {'ours': Entry(fn=lambda: moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out=y, workspace=ws), out=y,
                             label='moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out=y, workspace=ws)')}
    for key, lib in ((UNFUSED_KEY, 'ours'), ('deepgemm', 'deepgemm')):
        if lib in ctx.libs:
            gemm = ctx.libs[lib].m_grouped_fp8_gemm_nt_contiguous
            entries[key] = Entry(fn=lambda gemm=gemm: unfused_steps(gemm, x, topk_idx, topk_weights, w1, w2),
                                 label=f'moe.unfused with {lib}\'s m_grouped_fp8_gemm_nt_contiguous')
    src = w1[0].reshape(-1)[:_COPY_BYTES]
    dst = torch.empty_like(src)
    entries['copy'] = Entry(fn=lambda: dst.copy_(src), label='weight bytes: dst.copy_(src)',
                            verify=lambda out: (True, None, None))
    active = int(torch.unique(topk_idx).numel())
    weight_bytes = active * (w1[0][0].nbytes + w1[1][0].nbytes + w2[0][0].nbytes + w2[1][0].nbytes)
    return Problem(case.name, entries, reference=reference, tolerance=TOLERANCE, flops=case.flops,
                   num_bytes=weight_bytes + 4 * t * h,
                   params={'tokens': t, 'experts': e, 'topk': k, 'hidden': h, 'inter': case.inter,
                           'active_experts': active, 'weight_bytes': weight_bytes, 'copy_bytes': 2 * src.numel()})


def add_rates(row):
    """Unfused / ours (our separate steps' time over the fused layer's), DeepGEMM unfused / ours, and the read
    floor: the active experts' weight bytes at the copy's bandwidth, and that floor over our time."""
    ours = stats.ok_us(row, 'ours')
    row['unfused_vs_ours'] = stats.ratio(stats.ok_us(row, UNFUSED_KEY), ours)
    row['ratio_vs_deepgemm'] = stats.ratio(stats.ok_us(row, 'deepgemm'), ours)
    return stats.add_read_floor(row, row['params']['weight_bytes'])
