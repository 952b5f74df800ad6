"""The GEMM cases as problems: the operands (made once, shared by every library), each library's call with the
same arguments (DeepGEMM's defaults; FP8 with disable_ue8m0_cast=True and fp32 scales, as on SM90) and the float64
reference of the elements that are compared."""
import random
from dataclasses import dataclass
from typing import Any, Dict

from . import cublas
from .inputs import BF16_TOLERANCE, FP8_TOLERANCE, Quantiser, dequant_block, dequant_token, randn, seed_for
from .measure import Entry, Problem, absent
from .peer import lookup
from .suites import contiguous_layout, masked_rows


@dataclass
class Context:
    """What every case builder needs: torch, the libraries by key ('ours', 'deepgemm'), the one quantiser,
    whether to add cuBLAS and which FP8 scaling it takes, the seed and the contiguous-layout M alignment."""
    torch: Any
    libs: Dict[str, Any]
    quant: Quantiser
    cublas: bool = True
    cublas_fp8: str = 'block'
    seed: int = 0
    alignment: int = 128


def bind(f, *args, **kwargs):
    return lambda: f(*args, **kwargs)


def library_entries(ctx, function, out_shape, out_dtype, args, kwargs=None):
    """One entry per library: `function` called as function(*args(d), **kwargs) on a D of its own."""
    torch, entries = ctx.torch, {}
    for key, module in ctx.libs.items():
        f = lookup(module, function)
        if f is None:
            entries[key] = absent(function)
            continue
        d = torch.empty(out_shape, dtype=out_dtype, device='cuda')
        entries[key] = Entry(fn=bind(f, *args(d), **(kwargs or {})), out=d)
    return entries


FP8_KWARGS = {'disable_ue8m0_cast': True}


def part(x, index):
    """x[index] of a BF16 operand, or of both halves of an FP8 (data, scales) pair."""
    return (x[0][index], x[1][index]) if isinstance(x, tuple) else x[index]


def as64(torch, x, dequant):
    """A BF16 operand as float64, or an FP8 (data, scales) pair dequantised to float64."""
    return dequant(torch, x) if isinstance(x, tuple) else x.double()


def dense(ctx, case, dtype):
    torch = ctx.torch
    ctx.torch.manual_seed(seed_for(ctx.seed, f'{case.name} {dtype}'))
    a, b = randn(torch, (case.m, case.k)), randn(torch, (case.n, case.k))
    shape = (case.m, case.n)
    if dtype == 'bf16':
        entries = library_entries(ctx, 'bf16_gemm_nt', shape, torch.bfloat16, lambda d: (a, b, d))
        reference, tolerance = a.double() @ b.double().t(), BF16_TOLERANCE
        if ctx.cublas:
            entries['cublas'] = cublas.bf16(torch, a, b)
    else:
        a8, b8 = ctx.quant.token(a), ctx.quant.block(b)
        entries = library_entries(ctx, 'fp8_gemm_nt', shape, torch.bfloat16, lambda d: (a8, b8, d), FP8_KWARGS)
        reference, tolerance = dequant_token(torch, a8) @ dequant_block(torch, b8).t(), FP8_TOLERANCE
        if ctx.cublas:
            entries['cublas'] = cublas.fp8_block(torch, a8, b8) if ctx.cublas_fp8 == 'block' else \
                cublas.fp8_per_tensor(torch, a, b)
    return Problem(case.name, entries, reference, tolerance=tolerance, flops=case.flops,
                   params={'m': case.m, 'n': case.n, 'k': case.k})


def grouped(ctx, case, dtype):
    """M-grouped contiguous: a [M, K] with the groups' rows one after another (padding rows, if any, are -1 in
    grouped_layout and zero in a), b [G, N, K]."""
    torch = ctx.torch
    torch.manual_seed(seed_for(ctx.seed, f'{case.name} {dtype}'))
    rows = case.group_rows()
    layout_list = contiguous_layout(rows, ctx.alignment)
    m = len(layout_list)
    layout = torch.tensor(layout_list, dtype=torch.int32, device='cuda')
    valid_rows = layout >= 0
    a = randn(torch, (m, case.k))
    a[~valid_rows] = 0
    b = randn(torch, (case.groups, case.n, case.k))
    if dtype == 'bf16':
        a_in, b_in = a, b
        function, kwargs, tolerance = 'm_grouped_bf16_gemm_nt_contiguous', {}, BF16_TOLERANCE
    else:
        a_in, b_in = ctx.quant.token(a), ctx.quant.block_grouped(torch, b)
        function, kwargs, tolerance = 'm_grouped_fp8_gemm_nt_contiguous', FP8_KWARGS, FP8_TOLERANCE
    reference = torch.zeros((m, case.n), dtype=torch.float64, device='cuda')
    a_all, start = as64(torch, a_in, dequant_token), 0
    for g, count in enumerate(rows):
        b_g = as64(torch, part(b_in, g), dequant_block)
        reference[start:start + count] = a_all[start:start + count] @ b_g.t()
        start += (count + ctx.alignment - 1) // ctx.alignment * ctx.alignment
    del a_all
    entries = library_entries(ctx, function, (m, case.n), torch.bfloat16, lambda d: (a_in, b_in, d, layout), kwargs)
    return Problem(case.name, entries, reference[valid_rows], valid=lambda out: out[valid_rows],
                   tolerance=tolerance, flops=case.flops,
                   params={'groups': case.groups, 'm_per_group': case.m_per_group, 'n': case.n, 'k': case.k,
                           'ragged': case.ragged, 'group_rows': rows, 'm': m, 'alignment': ctx.alignment})


def masked(ctx, case, dtype):
    """M-grouped masked: a [G, max_m, K], b [G, N, K], masked_m drawn around expected_m with a fixed seed; both
    libraries get expected_m as the hint."""
    torch = ctx.torch
    seed = seed_for(ctx.seed, f'{case.name} {dtype}')
    torch.manual_seed(seed)
    rows = masked_rows(case.groups, case.expected_m, case.max_m, random.Random(seed))
    masked_m = torch.tensor(rows, dtype=torch.int32, device='cuda')
    a = randn(torch, (case.groups, case.max_m, case.k))
    b = randn(torch, (case.groups, case.n, case.k))
    if dtype == 'bf16':
        a_in, b_in, tolerance = a, b, BF16_TOLERANCE
        function, kwargs = 'm_grouped_bf16_gemm_nt_masked', {}
    else:
        a_in, b_in, tolerance = ctx.quant.token_grouped(a), ctx.quant.block_grouped(torch, b), FP8_TOLERANCE
        function, kwargs = 'm_grouped_fp8_gemm_nt_masked', FP8_KWARGS
    reference = torch.cat([(as64(torch, part(a_in, (g, slice(0, r))), dequant_token) @
                            as64(torch, part(b_in, g), dequant_block).t()).reshape(-1) for g, r in enumerate(rows)])

    def valid(out):
        return torch.cat([out[g, :r].reshape(-1) for g, r in enumerate(rows)])
    entries = library_entries(ctx, function, (case.groups, case.max_m, case.n), torch.bfloat16,
                              lambda d: (a_in, b_in, d, masked_m, case.expected_m), kwargs)
    return Problem(case.name, entries, reference, valid=valid, tolerance=tolerance,
                   flops=2 * sum(rows) * case.n * case.k,
                   params={'groups': case.groups, 'expected_m': case.expected_m, 'max_m': case.max_m,
                           'n': case.n, 'k': case.k, 'masked_m': rows})


BUILDERS = {'deepseek': dense, 'decode': dense, 'ragged': dense, 'grouped': grouped, 'masked': masked}
