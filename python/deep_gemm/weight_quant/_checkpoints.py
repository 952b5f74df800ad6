"""int4 weights from GPTQ and AWQ checkpoints' tensors (from_gptq, from_awq): the library repacks their words."""
import torch

from .. import _C
from .._checks import dtype_name, require_bool, require_int
from ._pack import _empty_packed, _finish
from ._tensor_args import (_INTEGER_DTYPES, _bits, _byte_array, _cpu, _host_array, _require_2d, _require_dtype,
                           _require_shape)
from ._weight import _ACT_DTYPES, _INT4_GROUPS, _act_code, _layout


def _require_group_size(group_size):
    require_int(group_size, 'group_size')
    if group_size not in _INT4_GROUPS:
        raise ValueError(f'group_size: expected 32, 64 or 128 (int4 groups along K; per-channel and other sizes '
                         f'are not supported), got {group_size}')


def _import(kind, qweight, qzeros, scales, n, k, group_size, zeros_minus_one):
    _require_dtype(scales, 'scales', ('bfloat16', 'float16'), ' (the activations\' dtype)')
    act_dtype = _ACT_DTYPES[dtype_name(scales)]
    renames = [('n', 'qweight'), ('k', 'qweight')]  # N and K are read off qweight's shape
    _, n_pad, k_pad, groups, _, _, _ = _layout('int4', act_dtype, n, k, group_size, True, renames)
    outs = _empty_packed('int4', act_dtype, True, n_pad, k_pad, groups)
    qw, qz, s = _cpu(qweight), _cpu(qzeros), _bits(scales)
    _C.wq_import(kind, _host_array(qw), _host_array(qz), _host_array(s), n, k, group_size, zeros_minus_one,
                 _act_code(act_dtype), *(_byte_array(outs[f]) for f in ('data', 'scales', 'zeros')), renames)
    return _finish('int4', act_dtype, n, k, group_size, True, 0, n_pad, k_pad, outs, qweight.device)


def from_gptq(qweight, qzeros, scales, group_size, g_idx=None, zeros_minus_one=True):
    """An int4 weight from a GPTQ checkpoint's tensors (asymmetric, with zero points).

    ``qweight``: int32 [K / 8, N], eight codes along K per word, lowest nibble first. ``qzeros``: int32
    [K / group_size, N / 8], eight zero points along N per word. ``scales``: [K / group_size, N] bf16 or fp16 (the
    activations' dtype). ``g_idx``: None or GPTQ's [K] group index, which must be ``arange(K) // group_size``
    (act-order checkpoints, whose g_idx permutes K, are not supported). ``zeros_minus_one``: the zero points are
    stored minus one (GPTQ v1's convention, the usual one; a stored 15 is then refused). Returns a PackedWeight on
    qweight's device.
    """
    kw, n = _require_2d(qweight, 'qweight', '[K / 8, N] of packed codes')
    _require_dtype(qweight, 'qweight', ('int32', ))
    _require_group_size(group_size)
    require_bool(zeros_minus_one, 'zeros_minus_one')
    k = 8 * kw
    if n < 8 or n % 8 or kw < 1 or k % group_size:
        raise ValueError(f'qweight: expected [K / 8, N] with N a multiple of 8 and K = 8 * rows a multiple of '
                         f'group_size {group_size}, got shape {(kw, n)}')
    _require_2d(qzeros, 'qzeros', '[K / group_size, N / 8] of packed zero points')
    _require_dtype(qzeros, 'qzeros', ('int32', ))
    _require_shape(qzeros, 'qzeros', (k // group_size, n // 8), f'(K = {k}, N = {n})')
    _require_2d(scales, 'scales', '[K / group_size, N]')
    _require_shape(scales, 'scales', (k // group_size, n), f'(K = {k}, N = {n})')
    if g_idx is not None:
        _require_dtype(g_idx, 'g_idx', _INTEGER_DTYPES)
        _require_shape(g_idx, 'g_idx', (k, ), '(a group index per k)')
        want = torch.arange(k, dtype=torch.int64) // group_size
        differs = _cpu(g_idx).to(torch.int64) != want
        if bool(differs.any()):
            i = int(differs.nonzero()[0, 0])
            raise ValueError(f'g_idx: expected arange(K) // group_size (act-order checkpoints, whose g_idx permutes '
                             f'K, are not supported), got g_idx[{i}] = {int(_cpu(g_idx)[i])} instead of '
                             f'{int(want[i])}')
    return _import('gptq', qweight, qzeros, scales, n, k, group_size, zeros_minus_one)


def from_awq(qweight, qzeros, scales, group_size):
    """An int4 weight from an AWQ checkpoint's tensors (GEMM layout, with zero points).

    ``qweight``: int32 [K, N / 8] and ``qzeros``: int32 [K / group_size, N / 8], eight codes along N per word in
    AWQ's order (nibble i holds column 8c + (0, 2, 4, 6, 1, 3, 5, 7)[i]). ``scales``: [K / group_size, N] bf16 or
    fp16 (the activations' dtype). Returns a PackedWeight on qweight's device.
    """
    k, nw = _require_2d(qweight, 'qweight', '[K, N / 8] of packed codes')
    _require_dtype(qweight, 'qweight', ('int32', ))
    _require_group_size(group_size)
    n = 8 * nw
    if nw < 1 or k < 1 or k % group_size:
        raise ValueError(f'qweight: expected [K, N / 8] with K a multiple of group_size {group_size}, got shape '
                         f'{(k, nw)}')
    _require_2d(qzeros, 'qzeros', '[K / group_size, N / 8] of packed zero points')
    _require_dtype(qzeros, 'qzeros', ('int32', ))
    _require_shape(qzeros, 'qzeros', (k // group_size, nw), f'(K = {k}, N = {n})')
    _require_2d(scales, 'scales', '[K / group_size, N]')
    _require_shape(scales, 'scales', (k // group_size, n), f'(K = {k}, N = {n})')
    return _import('awq', qweight, qzeros, scales, n, k, group_size, False)
