"""The host suite's problems: one small call per exported family, with the operand layouts its name says, so the
median host time of back-to-back calls is what the call costs the CPU. Shapes (suites.HOST) read:
dense (M, N, K); m-grouped (G, rows per group, N, K), masked (G, expected m, N, K) with max_m 256; k-grouped
(G, M, N, K per group); einsum (b, h, r, d) for 'bhr,hdr->bhd'."""
from . import gemm_cases
from .gemm_cases import FP8_KWARGS, library_entries
from .inputs import (BF16_TOLERANCE, FP8_TOLERANCE, dequant_block, dequant_channel, dequant_token, randn,
                     seed_for)
from .measure import Problem
from .suites import Grouped, Masked

EINSUM = 'bhr,hdr->bhd'


def _dense_layout(ctx, case, dtype):
    """bf16/fp8_gemm_{nt,nn,tn,tt}: first letter t takes a as [K, M], second letter n takes b as [K, N]. BF16
    operands are stored that way; FP8 ones stay K-major and are passed as transposed views (SM90 reads FP8 only
    K-major), as DeepGEMM's own alias tests do."""
    torch = ctx.torch
    m, n, k = case.shape
    layout = case.function.rsplit('_', 1)[1]
    a_t, b_n = layout[0] == 't', layout[1] == 'n'
    if dtype == 'bf16':
        a = randn(torch, (k, m) if a_t else (m, k))
        b = randn(torch, (k, n) if b_n else (n, k))
        a_mk, b_nk = (a.t() if a_t else a), (b.t() if b_n else b)
        reference, kwargs, tolerance = a_mk.double() @ b_nk.double().t(), {}, BF16_TOLERANCE
        a_in, b_in = a, b
    else:
        a8, b8 = ctx.quant.token(randn(torch, (m, k))), ctx.quant.block(randn(torch, (n, k)))
        reference = dequant_token(torch, a8) @ dequant_block(torch, b8).t()
        a_in = (a8[0].t(), a8[1].t()) if a_t else a8
        b_in = (b8[0].t(), b8[1].t()) if b_n else b8
        kwargs, tolerance = FP8_KWARGS, FP8_TOLERANCE
    entries = library_entries(ctx, case.function, (m, n), torch.bfloat16, lambda d: (a_in, b_in, d), kwargs)
    return Problem(case.name, entries, reference, tolerance=tolerance, flops=2 * m * n * k)


def _k_major_blocks(torch, x, ks):
    """[ΣK, MN] -> each group's [MN, k] block K-major, one after another, flat (DeepGEMM's SM90 K-grouped FP8
    operand). Through uint8 views: concatenating float8 tensors is not supported by every torch."""
    blocks, start = [], 0
    for k in ks:
        blocks.append(x[start:start + k].view(torch.uint8).t().contiguous().reshape(-1))
        start += k
    return torch.cat(blocks).view(x.dtype)


def _k_grouped(ctx, case, dtype):
    """k_grouped_bf16_gemm_tn_contiguous (a [ΣK, M], b [ΣK, N]) and k_grouped_fp8_gemm_nt_contiguous (K-major
    per group, 128x1 scales): D[g] = C[g] + A_gᵀ·B_g, with c = d as DeepGEMM's tests call them."""
    torch = ctx.torch
    groups, m, n, k = case.shape
    ks = [k] * groups
    layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    a, b = randn(torch, (groups * k, m)), randn(torch, (groups * k, n))
    c0 = torch.randn((groups, m, n), dtype=torch.float32, device='cuda')
    if dtype == 'bf16':
        a64, b64, tolerance, kwargs = a.double(), b.double(), BF16_TOLERANCE, {}
        a_in, b_in = a, b
    else:
        a8, b8 = ctx.quant.channel(a), ctx.quant.channel(b)
        a64, b64, tolerance, kwargs = dequant_channel(torch, a8), dequant_channel(torch, b8), FP8_TOLERANCE, {}
        a_in = (_k_major_blocks(torch, a8[0], ks), a8[1].t())
        b_in = (_k_major_blocks(torch, b8[0], ks), b8[1].t())
    reference = torch.stack([c0[g].double() + a64[g * k:(g + 1) * k].t() @ b64[g * k:(g + 1) * k]
                             for g in range(groups)])
    entries = library_entries(ctx, case.function, (groups, m, n), torch.float32,
                              lambda d: (a_in, b_in, d, ks, layout, d), kwargs)
    for entry in entries.values():
        if entry.out is not None:
            entry.prepare = (lambda d: lambda: d.copy_(c0))(entry.out)
    return Problem(case.name, entries, reference, tolerance=tolerance, flops=2 * groups * m * n * k)


def _einsum(ctx, case, dtype):
    torch = ctx.torch
    b, h, r, d = case.shape
    x, y = randn(torch, (b, h, r)), randn(torch, (h, d, r))
    if dtype == 'bf16':
        reference, tolerance = torch.einsum(EINSUM, x.double(), y.double()), BF16_TOLERANCE
        x_in, y_in = x, y
    else:
        xt = ctx.quant.token(x.view(-1, r))
        x_in = (xt[0].view(b, h, r), xt[1].view(b, h, -1))
        y_in = ctx.quant.block_grouped(torch, y)
        reference = torch.einsum(EINSUM, dequant_token(torch, xt).view(b, h, r), dequant_block(torch, y_in))
        tolerance = FP8_TOLERANCE
    entries = library_entries(ctx, case.function, (b, h, d), torch.bfloat16, lambda z: (EINSUM, x_in, y_in, z))
    return Problem(case.name, entries, reference, tolerance=tolerance, flops=2 * b * h * r * d)


def problem(ctx, case):
    """The host-suite problem of one family (no cuBLAS entry: the suite compares the two packages' host cost)."""
    ctx.torch.manual_seed(seed_for(ctx.seed, case.name))
    function = case.function
    if function.startswith('m_grouped') and function.endswith('_contiguous'):
        p = gemm_cases.grouped(ctx, Grouped(*case.shape), case.dtype)
    elif function.startswith('m_grouped') and function.endswith('_masked'):
        p = gemm_cases.masked(ctx, Masked(*case.shape, max_m=256), case.dtype)
    elif function.startswith('k_grouped'):
        p = _k_grouped(ctx, case, case.dtype)
    elif 'einsum' in function:
        p = _einsum(ctx, case, case.dtype)
    else:
        p = _dense_layout(ctx, case, case.dtype)
    p.name = case.name
    return p
