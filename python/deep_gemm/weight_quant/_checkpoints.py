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
    if group_size not in _INT4_GROUPS + (-1, ):
        raise ValueError(f'group_size: expected 32, 64 or 128 (int4 groups along K), or -1 (per channel), got '
                         f'{group_size}')


def _per_channel_groups(k, name):
    """The group size a per-channel (group_size -1) weight of K is packed with: its scale and zero point repeated
    over groups of the largest kernel size dividing K."""
    for g in sorted(_INT4_GROUPS, reverse=True):
        if k % g == 0:
            return g
    raise ValueError(f'{name}: expected K a multiple of 32 for a per-channel (group_size -1) int4 weight, got K = {k}')


def _expand_rows(t, times):
    """A checkpoint's one row of per-channel scales or packed zero points, repeated for every group."""
    return _cpu(t).repeat_interleave(times, dim=0)


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
    activations' dtype). ``group_size`` -1: per channel (qzeros [1, N / 8], scales [1, N]; K a multiple of 32),
    packed as groups of the largest of 128, 64, 32 dividing K with the row's scale and zero point in each.
    ``g_idx``: None or GPTQ's [K] group index, which must be ``arange(K) // group_size`` (all zeros per channel;
    act-order checkpoints, whose g_idx permutes K, are not supported). ``zeros_minus_one``: the zero points are
    stored minus one (GPTQ v1's convention, the usual one; a stored 15 is then refused). Returns a PackedWeight on
    qweight's device.
    """
    kw, n = _require_2d(qweight, 'qweight', '[K / 8, N] of packed codes')
    _require_dtype(qweight, 'qweight', ('int32', ))
    _require_group_size(group_size)
    require_bool(zeros_minus_one, 'zeros_minus_one')
    k = 8 * kw
    per_channel = group_size == -1
    if per_channel:
        group_size = _per_channel_groups(k, 'qweight')
    if n < 8 or n % 8 or kw < 1 or k % group_size:
        raise ValueError(f'qweight: expected [K / 8, N] with N a multiple of 8 and K = 8 * rows a multiple of '
                         f'group_size {group_size}, got shape {(kw, n)}')
    rows = 1 if per_channel else k // group_size
    _require_2d(qzeros, 'qzeros', '[K / group_size, N / 8] of packed zero points')
    _require_dtype(qzeros, 'qzeros', ('int32', ))
    _require_shape(qzeros, 'qzeros', (rows, n // 8), f'(K = {k}, N = {n})')
    _require_2d(scales, 'scales', '[K / group_size, N]')
    _require_shape(scales, 'scales', (rows, n), f'(K = {k}, N = {n})')
    if g_idx is not None:
        _require_dtype(g_idx, 'g_idx', _INTEGER_DTYPES)
        _require_shape(g_idx, 'g_idx', (k, ), '(a group index per k)')
        want = torch.zeros(k, dtype=torch.int64) if per_channel else torch.arange(k, dtype=torch.int64) // group_size
        differs = _cpu(g_idx).to(torch.int64) != want
        if bool(differs.any()):
            i = int(differs.nonzero()[0, 0])
            raise ValueError(f'g_idx: expected arange(K) // group_size (act-order checkpoints, whose g_idx permutes '
                             f'K, are not supported), got g_idx[{i}] = {int(_cpu(g_idx)[i])} instead of '
                             f'{int(want[i])}')
    if per_channel:
        qzeros, scales = _expand_rows(qzeros, k // group_size), _expand_rows(scales, k // group_size)
    return _import('gptq', qweight, qzeros, scales, n, k, group_size, zeros_minus_one)


def from_awq(qweight, qzeros, scales, group_size):
    """An int4 weight from an AWQ checkpoint's tensors (GEMM layout, with zero points).

    ``qweight``: int32 [K, N / 8] and ``qzeros``: int32 [K / group_size, N / 8], eight codes along N per word in
    AWQ's order (nibble i holds column 8c + (0, 2, 4, 6, 1, 3, 5, 7)[i]). ``scales``: [K / group_size, N] bf16 or
    fp16 (the activations' dtype). ``group_size`` -1: per channel, as from_gptq. Returns a PackedWeight on
    qweight's device.
    """
    k, nw = _require_2d(qweight, 'qweight', '[K, N / 8] of packed codes')
    _require_dtype(qweight, 'qweight', ('int32', ))
    _require_group_size(group_size)
    n = 8 * nw
    per_channel = group_size == -1
    if per_channel:
        group_size = _per_channel_groups(k, 'qweight')
    if nw < 1 or k < 1 or k % group_size:
        raise ValueError(f'qweight: expected [K, N / 8] with K a multiple of group_size {group_size}, got shape '
                         f'{(k, nw)}')
    rows = 1 if per_channel else k // group_size
    _require_2d(qzeros, 'qzeros', '[K / group_size, N / 8] of packed zero points')
    _require_dtype(qzeros, 'qzeros', ('int32', ))
    _require_shape(qzeros, 'qzeros', (rows, nw), f'(K = {k}, N = {n})')
    _require_2d(scales, 'scales', '[K / group_size, N]')
    _require_shape(scales, 'scales', (rows, n), f'(K = {k}, N = {n})')
    if per_channel:
        qzeros, scales = _expand_rows(qzeros, k // group_size), _expand_rows(scales, k // group_size)
    return _import('awq', qweight, qzeros, scales, n, k, group_size, False)
