"""DeepGEMM's ``einsum`` and ``fp8_einsum`` on tilegemm's batched SM90 GEMMs, through strided views only.

Each supported expression but 'bmk,bnk->mn' is one batched GEMM ``D[g] = C[g] + A[g] @ B[g]ᵀ`` (A [G, M, K], B [G, N, K],
D [G, M, N]) whose operands are permuted views of the caller's tensors: no operand is copied, the kernels
read the caller's memory through TMA with whatever strides the views have. For 'bhr,hdr->bhd' the batch is h:
A viewed [h, b, r] with strides (r, h·r, 1), B [h, d, r] as given, D viewed [h, b, d].

| expr           | G, M, N, K | einsum (bf16)                   | fp8_einsum                                     |
|----------------|------------|---------------------------------|------------------------------------------------|
| 'bhr,hdr->bhd' | h, b, d, r | d bf16, no c                    | both recipes                                   |
| 'bhd,hdr->bhr' | h, b, r, d | d bf16, no c (B MN-major)       | b must be stored with d contiguous             |
| 'bhd,bhr->hdr' | h, d, r, b | d fp32, optional c (MN-major)   | recipe (1, 1, 128); a, b with b contiguous     |
| 'bmk,bnk->mn'  | —, m, n, s·k | d fp32 with c = d, or bf16     | ValueError (DeepGEMM has no FP8 form)          |

'bmk,bnk->mn' sums over the batch dimension as well as k: d[m, n] (+= for fp32) Σ_s a[s] @ b[s]ᵀ. The (s, k)
pair is not one strided dimension of a, so it runs as one GEMM of K = s·k whose producer walks batch 0's K
blocks, then batch 1's (GemmType::kBatchReduced, kernel entry sm90_bmn_bnk_mn_gemm_impl as DeepGEMM names
it), split across the SMs like any long-K problem. Its arguments are checked as DeepGEMM checks them.
'bhd,bhr->hdr' is in later DeepGEMM releases (cuBLASLt there); here it runs on tilegemm's kernel (MN-major
BF16 operands).

FP8 (SM90 wgmma reads FP8 only K-major): every permuted FP8 operand needs stride 1 along its contracted
letter, so 'bhd,hdr->bhr' needs ``b`` stored as [h, r, d] (passed as the transposed view [h, d, r]), as
fp8_gemm_nn needs a transposed [N, K] tensor; anything else raises ValueError naming the operand. Scales are
given in the data's letter order with the contracted letter (and, for 1D2D per-block B scales, the N letter)
divided by 128, e.g. a[1] [b, h, ceil(r/128)] for 'bhr,hdr->bhd', as DeepGEMM permutes them with the data.
The scales go to the kernel as permuted views too, with no layout pass: permuted per-token scales are not MN-major
([h, b, kb] viewed from [b, h, kb] has stride h·kb along b), so the kernel copies them element by element rather
than through TMA (docs/kernels.md).
"""
from . import _C, _torch_ops
from ._checks import (dtype_name, is_contiguous, require_bool, require_dtype, require_no_overlap, require_tensor,
                      shape_of, strides_of)
from ._config import num_sms_setting
from ._fp8 import RECIPE_1D1D, RECIPE_1D2D, _pair, _resolve_recipe, _write_c_or_zero
from ._plans import kept_key, run_checked, run_kept, typed_sequence
from ._sf_layout import ceil_div
from ._tensor import common_device, current_stream, view


class _Expr:
    """One supported expression: the letters of a, b and d, and which letters are the GEMM's G, M, N, K."""

    def __init__(self, expr, batch, m, n, k):
        inputs, self.d = expr.split('->')
        self.a, self.b = inputs.split(',')
        self.batch, self.m, self.n, self.k = batch, m, n, k
        # Permutations taking each tensor to the batched GEMM's [G, M, K] / [G, N, K] / [G, M, N] order.
        self.perm_a = tuple(self.a.index(x) for x in (batch, m, k))
        self.perm_b = tuple(self.b.index(x) for x in (batch, n, k))
        self.perm_d = tuple(self.d.index(x) for x in (batch, m, n))


EXPRESSIONS = {
    'bhr,hdr->bhd': _Expr('bhr,hdr->bhd', batch='h', m='b', n='d', k='r'),
    'bhd,hdr->bhr': _Expr('bhd,hdr->bhr', batch='h', m='b', n='r', k='d'),
    'bhd,bhr->hdr': _Expr('bhd,bhr->hdr', batch='h', m='d', n='r', k='b'),
}
# The BF16 expression that sums over the batch too: one batch-reduced GEMM rather than a batched one.
BATCH_REDUCTION = 'bmk,bnk->mn'
# fp8_einsum expressions DeepGEMM does not have, and why.
UNSUPPORTED_FP8 = {
    BATCH_REDUCTION: "DeepGEMM's fp8_einsum has no batch-reducing form (einsum runs it in BF16)",
}
# DeepGEMM's SM90 'bmk,bnk->mn' kernel tiles M and N by 64 and K by 64 (and indexes rows in 32 bits).
_BATCH_REDUCTION_ALIGNMENT = 64
# Expressions whose output accumulates (fp32 d, optional c); the others write bf16 d and take no c.
_ACCUMULATING = ('bhd,bhr->hdr', )


def _expression(expr, also=()):
    """The batched-GEMM mapping of expr; `also`: the caller's other expressions, named in the error."""
    if not isinstance(expr, str):
        raise TypeError(f'expr: expected a str such as \'bhr,hdr->bhd\', got {type(expr).__name__} {expr!r}')
    if expr not in EXPRESSIONS:
        raise ValueError(f'expr: expected one of {", ".join(map(repr, (*EXPRESSIONS, *also)))} (the expressions '
                         f'tilegemm\'s SM90 kernels run), got {expr!r}: not supported by tilegemm\'s SM90 kernels')
    return EXPRESSIONS[expr]


def _sizes(e, a, b, d, expr):
    """{letter: size} from a, checking b and d against it (ValueError naming the tensor and its letters)."""
    for t, name, letters in ((a, 'a', e.a), (b, 'b', e.b), (d, 'd', e.d)):
        if len(shape_of(t)) != 3:
            raise ValueError(f'{name}: expected a 3-D tensor [{", ".join(letters)}] for {expr!r}, '
                             f'got {len(shape_of(t))}-D {tuple(shape_of(t))}')
    sizes = dict(zip(e.a, shape_of(a)))
    for t, name, letters in ((b, 'b', e.b), (d, 'd', e.d)):
        shape = shape_of(t)
        if any(sizes.get(x, s) != s for x, s in zip(letters, shape)):
            want = ', '.join(f'{x}={sizes[x]}' if x in sizes else x for x in letters)
            raise ValueError(f'{name}: expected shape [{want}] for {expr!r} (sizes from a {tuple(shape_of(a))} and b), '
                             f'got {tuple(shape)}')
        sizes.update(zip(letters, shape))
    return sizes


def _permuted_view(t, name, perm):
    """The (ptr, dtype, shape, strides) view of ``t`` with its dimensions in ``perm`` order (no copy)."""
    ptr, dtype, shape, strides = view(t, name)
    return ptr, dtype, [shape[i] for i in perm], [strides[i] for i in perm]


def _check_output(t, name, expr, dtype):
    require_tensor(t, name)
    require_dtype(t, name, dtype)
    shape, strides = shape_of(t), strides_of(t)
    if shape[-1] > 1 and strides[-1] != 1:
        raise ValueError(f'{name}: expected stride 1 along its last letter {expr.split("->")[1][-1]!r} '
                         f'(contiguous output rows), got strides {tuple(strides)}')


def _check_c(c, d, e, expr):
    """c (accumulating forms only): None, or float32 shaped like d with contiguous rows (may be d itself)."""
    if c is None:
        return
    require_tensor(c, 'c')
    if shape_of(c) != shape_of(d):
        raise ValueError(f'c: expected shape {tuple(shape_of(d))} like d ([{", ".join(e.d)}]), '
                         f'got {tuple(shape_of(c))}')
    _check_output(c, 'c', expr, 'float32')


def _check_batch_reduction(a, b, d, c, use_cublaslt):
    """DeepGEMM's checks of 'bmk,bnk->mn': a [s, m, k], b [s, n, k] contiguous bf16; d [m, n] contiguous, either
    fp32 accumulated in place (c is d) or bf16 without c; m, n and k multiples of 64; no cuBLASLt form."""
    expr = BATCH_REDUCTION
    if use_cublaslt:
        raise ValueError(f'use_cublaslt: expected False for {expr!r} (DeepGEMM has no cuBLASLt form of it), got True')
    for t, name, letters in ((a, 'a', 'smk'), (b, 'b', 'snk'), (d, 'd', 'mn')):
        require_tensor(t, name)
        if len(shape_of(t)) != len(letters):
            raise ValueError(f'{name}: expected a {len(letters)}-D tensor [{", ".join(letters)}] for {expr!r}, got '
                             f'{len(shape_of(t))}-D {tuple(shape_of(t))}')
        if not is_contiguous(t):
            raise ValueError(f'{name}: expected a contiguous tensor for {expr!r}, got shape {tuple(shape_of(t))} '
                             f'with strides {tuple(strides_of(t))}')
    require_dtype(a, 'a', 'bfloat16')
    require_dtype(b, 'b', 'bfloat16')
    (s, m, k), (s_b, n, k_b) = shape_of(a), shape_of(b)
    if (s_b, k_b) != (s, k):
        raise ValueError(f'b: expected shape [s={s}, n, k={k}] for {expr!r} (s and k from a), got {(s_b, n, k_b)}')
    if shape_of(d) != [m, n]:
        raise ValueError(f'd: expected shape [m={m}, n={n}] for {expr!r}, got {tuple(shape_of(d))}')
    if dtype_name(d) == 'float32':
        if c is not d:
            raise ValueError(f'c: expected d itself with a float32 d (DeepGEMM\'s {expr!r} accumulates into d in '
                             f'place: d += Σ_s a[s] @ b[s]ᵀ), got {"None" if c is None else "another tensor"}')
    elif dtype_name(d) == 'bfloat16':
        if c is not None:
            raise ValueError('c: expected None with a bfloat16 d (only a float32 d accumulates), got a tensor')
    else:
        raise ValueError(f'd: expected float32 (accumulated in place, c=d) or bfloat16 elements, got {d.dtype}')
    for value, name in ((m, 'm'), (n, 'n'), (k, 'k')):
        if value % _BATCH_REDUCTION_ALIGNMENT:
            operand = 'b' if name == 'n' else 'a'
            raise ValueError(f'{operand}: expected {name} a multiple of {_BATCH_REDUCTION_ALIGNMENT} for {expr!r} '
                             f'(DeepGEMM\'s tiling), got {name}={value} in {tuple(shape_of(b if name == "n" else a))}')
    if s * max(m, n) > 2**31 - 1:
        raise ValueError(f'a: expected s * max(m, n) < 2^31 for {expr!r}, got s={s}, m={m}, n={n}')
    common_device(a=a, b=b, d=d)


def einsum(expr, a, b, d, c=None, use_cublaslt=False):
    """d = einsum(expr, a, b) (+ c) in BF16 on one batched tilegemm GEMM (cuBLASLt with use_cublaslt).

    A call on a signature already seen runs its kept plan (deep_gemm/_plans.py): the permuted views keep the
    tensors' own pointers, so the plan takes a, b, d and c's data pointers as they are."""
    if _torch_ops.compiling():
        return _torch_ops.traced('einsum', expr, a, b, d, c, use_cublaslt)
    # Only the tilegemm path keeps plans (use_cublaslt=True calls cuBLASLt each time).
    prefix = ('einsum', expr) if use_cublaslt is False and isinstance(expr, str) else None
    if prefix is not None and run_kept(prefix, a, b, d, c):
        return
    if expr == BATCH_REDUCTION:
        require_bool(use_cublaslt, 'use_cublaslt')
        _check_batch_reduction(a, b, d, c, use_cublaslt)
        views = (view(a, 'a'), view(b, 'b'), view(d, 'd'))
        c_view = None if c is None else view(c, 'c')
        device, num_sms = common_device(a=a, b=b, d=d, c=c), num_sms_setting()
        run_checked(kept_key(prefix, a, b, d, c),
                    lambda: _C.plan_bf16_batch_reduced_gemm(*views, c_view, device, num_sms),
                    current_stream(device), num_sms, [v[0] for v in views] + [0 if c_view is None else c_view[0]])
        return
    e = _expression(expr, also=(BATCH_REDUCTION, ))
    require_bool(use_cublaslt, 'use_cublaslt')
    for t, name in ((a, 'a'), (b, 'b'), (d, 'd')):
        require_tensor(t, name)
    require_dtype(a, 'a', 'bfloat16')
    require_dtype(b, 'b', 'bfloat16')
    _sizes(e, a, b, d, expr)
    if expr in _ACCUMULATING:
        _check_output(d, 'd', expr, 'float32')
        _check_c(c, d, e, expr)
    else:
        _check_output(d, 'd', expr, 'bfloat16')
        if c is not None:
            raise ValueError(f'c: expected None for {expr!r} (DeepGEMM\'s form has no accumulation input; '
                             f'd is bf16), got a tensor')
    require_no_overlap(d, 'd')
    views = (_permuted_view(a, 'a', e.perm_a), _permuted_view(b, 'b', e.perm_b),
             _permuted_view(d, 'd', e.perm_d))
    c_view = None if c is None else _permuted_view(c, 'c', e.perm_d)
    device = common_device(a=a, b=b, d=d, c=c)
    stream = current_stream(device)
    if use_cublaslt:
        # The same views through cuBLASLt's strided-batched matmul ('nt': views already [G,M,K] / [G,N,K]).
        _C.cublaslt('nt', *views, c_view, device, stream)
    else:
        num_sms = num_sms_setting()
        run_checked(kept_key(prefix, a, b, d, c), lambda: _C.plan_bf16_gemm(*views, c_view, device, num_sms),
                    stream, num_sms,
                    [v[0] for v in views] + [0 if c_view is None else c_view[0]])


def _require_contracted_stride_one(t, name, letters, k_letter, expr):
    shape, strides = shape_of(t), strides_of(t)
    i = letters.index(k_letter)
    if shape[i] > 1 and strides[i] != 1:
        raise ValueError(f'{name}: expected stride 1 along {k_letter!r}, the contracted letter of {expr!r} '
                         f'(SM90 FP8 GEMMs read FP8 operands only K-major), got shape {tuple(shape)} with '
                         f'strides {tuple(strides)}')


def _check_sf(sf, name, letters, sizes, blocked, expr):
    """sf must be float32 with ``letters``' sizes, the ``blocked`` ones divided by 128 (rounded up)."""
    require_dtype(sf, name, 'float32')
    want = [ceil_div(sizes[x], 128) if x in blocked else sizes[x] for x in letters]
    if shape_of(sf) != want:
        labels = ', '.join(f'{x}/128={w}' if x in blocked else f'{x}={w}' for x, w in zip(letters, want))
        raise ValueError(f'{name}: expected float32 scale factors of shape [{labels}] for {expr!r}, '
                         f'got {tuple(shape_of(sf))}')


def fp8_einsum(expr, a, b, d, c=None, recipe=(1, 128, 128)):
    """d = einsum(expr, a, b) (+ c) with (fp8 data, fp32 scales) operands on one batched tilegemm FP8 GEMM.

    recipe (1, 128, 128) (1D2D): a per-token, b per-block 128x128 scales, d bf16, no c.
    recipe (1, 1, 128) (1D1D): both per-token, d fp32, c optional fp32 (may be d).
    The scales go to the kernel as permuted views, no layout pass (the FP8 kernels read any strides); a call on a
    signature already seen runs its kept plan."""
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_einsum', expr, a, b, d, c, recipe)
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('fp8_einsum', expr, typed_sequence(recipe)) if isinstance(expr, str) else None
    except (TypeError, ValueError):  # not (tensor, sf) pairs, a recipe that is no sequence: the checks name it
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, c):
        return
    if isinstance(expr, str) and expr in UNSUPPORTED_FP8:
        raise ValueError(f'expr: {expr!r} is not supported by fp8_einsum: {UNSUPPORTED_FP8[expr]}; supported: '
                         f'{", ".join(map(repr, EXPRESSIONS))}')
    e = _expression(expr)
    a_data, a_sf = _pair(a, 'a')
    b_data, b_sf = _pair(b, 'b')
    gran_n_b = _resolve_recipe(recipe, None, None)
    one_d_one_d = gran_n_b == 1
    if expr in _ACCUMULATING and not one_d_one_d:
        raise ValueError(f'recipe: expected {RECIPE_1D1D} for {expr!r} (both operands are contracted over the '
                         f'token dimension, so both take per-token scales and d is fp32), got {recipe!r}')
    require_tensor(d, 'd')
    sizes = _sizes(e, a_data, b_data, d, expr)
    _require_contracted_stride_one(a_data, 'a', e.a, e.k, expr)
    _require_contracted_stride_one(b_data, 'b', e.b, e.k, expr)
    _check_output(d, 'd', expr, 'float32' if one_d_one_d else 'bfloat16')
    require_no_overlap(d, 'd')
    if c is not None:
        if not one_d_one_d:
            raise ValueError(f'c: expected None with the 1D2D recipe {RECIPE_1D2D} (it has no accumulation '
                             f'input; use recipe={RECIPE_1D1D} with a float32 d to accumulate), got a tensor')
        _check_c(c, d, e, expr)
    require_tensor(a_sf, 'a[1]')
    require_tensor(b_sf, 'b[1]')
    _check_sf(a_sf, 'a[1]', e.a, sizes, (e.k, ), expr)
    _check_sf(b_sf, 'b[1]', e.b, sizes, (e.k, ) if one_d_one_d else (e.k, e.n), expr)
    device = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d, c=c)
    stream = current_stream(device)
    groups, m, n, k = (sizes[x] for x in (e.batch, e.m, e.n, e.k))
    if groups == 0 or m == 0 or n == 0:
        return
    if k == 0:  # nothing to accumulate: d = c (or 0), as the dense FP8 GEMMs do
        _write_c_or_zero(d, c)
        return
    # Scales follow their data's permutation, as views: the kernel reads MN-major ones through TMA and copies
    # any others element by element (per-token scales permuted out of [b, h, kb] are the latter).
    views = (_permuted_view(a_data, 'a', e.perm_a), _permuted_view(a_sf, 'a[1]', e.perm_a),
             _permuted_view(b_data, 'b', e.perm_b), _permuted_view(b_sf, 'b[1]', e.perm_b),
             _permuted_view(d, 'd', e.perm_d))
    c_view = None if c is None else _permuted_view(c, 'c', e.perm_d)
    num_sms = num_sms_setting()
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, c),
                lambda: _C.plan_fp8_gemm(*views, c_view, one_d_one_d, device, num_sms), stream, num_sms,
                [v[0] for v in views] + [0 if c_view is None else c_view[0]])
