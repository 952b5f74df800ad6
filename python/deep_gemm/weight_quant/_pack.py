"""Packing a weight from its codes and scales: pack_int4, pack_int8 and pack_mxfp4 check the arguments, and the
library packs CPU copies of them into a new PackedWeight."""
import torch

from .. import _C
from .._checks import dtype_name, require_int, require_tensor, shape_of
from ._tensor_args import (_INTEGER_DTYPES, _bits, _byte_array, _cpu, _host_array, _require_2d, _require_dtype,
                           _require_shape)
from ._weight import (_ACT_DTYPES, _CHUNK_K, _CODE_BYTES, _INT4_GROUPS, _MX_GROUP, _ROW_BLOCK, PackedWeight, _act_code,
                      _layout, _require_act_dtype)


def pack_int4(q, scales, zeros=None):
    """An int4 weight: ``W = (q - z) * s`` per group of ``K // scales.shape[1]`` (32, 64 or 128) k of a row.

    ``q``: [N, K] integer tensor (uint8, int8, int16, int32 or int64) of codes 0..15. ``scales``: [N, K // group]
    bf16 or fp16, which is the activations' dtype the weight is packed for; [N, 1] is per channel (K a multiple of
    32: packed as groups of the largest of 128, 64, 32 dividing K). ``zeros``: None (symmetric: zero point 8) or
    integer zero points 0..15 shaped as scales. Returns a PackedWeight on q's device.
    """
    n, k = _require_2d(q, 'q', '[N, K] of 4-bit codes')
    _require_2d(scales, 'scales', '[N, K // group_size] of group scales')
    _require_dtype(scales, 'scales', ('bfloat16', 'float16'), ' (the activations\' dtype)')
    if n < 1 or k < 1:
        raise ValueError(f'q: expected [N, K] with N >= 1 and K >= 1, got shape {(n, k)}')
    rows, groups = shape_of(scales)
    if rows == n and groups == 1 and k not in _INT4_GROUPS:
        # Per channel: the row's scale (and zero point) repeated over groups of the largest kernel size dividing K.
        group = next((g for g in sorted(_INT4_GROUPS, reverse=True) if k % g == 0), None)
        if group is None:
            raise ValueError(f'scales: expected K a multiple of 32 for per-channel scales ({n}, 1), got K = {k}')
        scales = _cpu(scales).repeat_interleave(k // group, dim=1)
        if zeros is not None:
            _require_2d(zeros, 'zeros', '[N, K // group_size] of zero points')
            _require_shape(zeros, 'zeros', (n, 1), '(as scales)')
            zeros = _cpu(zeros).repeat_interleave(k // group, dim=1)
        rows, groups = shape_of(scales)
    if rows != n or groups < 1 or k % groups or k // groups not in _INT4_GROUPS:
        got = f'{tuple(shape_of(scales))}' + (f' (group size {k / groups:g})' if rows == n and groups else '')
        raise ValueError(f'scales: expected shape ({n}, K // group_size) with a group size of 32, 64 or 128 '
                         f'dividing K = {k}, got {got}')
    act_dtype = _ACT_DTYPES[dtype_name(scales)]
    if zeros is not None:
        _require_2d(zeros, 'zeros', '[N, K // group_size] of zero points')
        _require_shape(zeros, 'zeros', (n, groups), '(as scales)')
    codes = _codes(q, 'q', 15, '4-bit codes')
    zero_codes = None if zeros is None else _codes(zeros, 'zeros', 15, 'zero points')
    scales = _require_finite(_cpu(scales), 'scales', 'scales')
    renames = [('codes', 'q'), ('n', 'q'), ('k', 'q'), ('group_size', 'scales'), ('act_dtype', 'scales')]
    return _pack('int4', act_dtype, n, k, k // groups, zeros is not None, renames, q.device, codes,
                 scales=_bits(scales), zeros=zero_codes)


def pack_int8(q, scales, act_dtype=torch.bfloat16):
    """An int8 weight: ``W = q * s[n]``. ``q``: torch.int8 [N, K] (signed; stored as the code q + 128),
    ``scales``: torch.float32 [N] per-row scales, ``act_dtype``: the activations' dtype (torch.bfloat16 or
    torch.float16). Returns a PackedWeight on q's device."""
    n, k = _require_2d(q, 'q', '[N, K] of int8 weights')
    _require_dtype(q, 'q', ('int8', ), ' (signed weights)')
    require_tensor(scales, 'scales')
    _require_dtype(scales, 'scales', ('float32', ), ' (per-row scales)')
    _require_shape(scales, 'scales', (n, ), '(one scale per row of q)')
    _require_act_dtype(act_dtype, 'act_dtype')
    _require_k(n, k, 'q')
    codes = (_cpu(q).to(torch.int16) + 128).to(torch.uint8)
    scales = _require_finite(_cpu(scales), 'scales', 'per-row scales')
    renames = [('codes', 'q'), ('n', 'q'), ('k', 'q'), ('channel_scales', 'scales')]
    return _pack('int8', act_dtype, n, k, 0, False, renames, q.device, codes, channel_scales=scales)


def _require_k(n, k, name):
    if n < 1 or k < 1 or k % 8:
        raise ValueError(f'{name}: expected [N, K] with N >= 1 and K >= 1 a multiple of 8 (the activations\' rows '
                         f'must be 16-byte aligned), got shape {(n, k)}')


def _as_uint8(t, name, alias, what):
    """``t`` viewed as torch.uint8 when it is of dtype ``alias`` (a torch dtype name that may not exist)."""
    require_tensor(t, name)
    if dtype_name(t) == alias and hasattr(t, 'view'):
        return t.view(torch.uint8)
    _require_dtype(t, name, ('uint8', ), f' ({what}; or torch.{alias})')
    return t


def pack_mxfp4(blocks, exponents, k=None, act_dtype=torch.bfloat16):
    """An MXFP4 weight: ``W = e2m1(q) * 2^(e - 127)`` per group of 32 k of a row.

    ``blocks``: torch.uint8 [N, K // 2], two e2m1 codes per byte, the LOW nibble the even k (OCP's and
    torch.float4_e2m1fn_x2's order, as gpt-oss stores them; a torch.float4_e2m1fn_x2 tensor is taken as its bytes),
    or gpt-oss's [N, K // 32, 16]. ``exponents``: torch.uint8 (or torch.float8_e8m0fnu) [N, ceil(K / 32)] UE8M0
    exponents 0..254. ``k``: K when the rows of ``blocks`` hold more codes than K (then, up to a whole group of
    32, codes that decode to 0); default 2 * bytes per row. ``act_dtype``: torch.bfloat16 only (fp16's range cannot
    hold the folded exponent scale). Returns a PackedWeight on blocks' device.
    """
    blocks = _as_uint8(blocks, 'blocks', 'float4_e2m1fn_x2', 'two e2m1 codes per byte')
    exponents = _as_uint8(exponents, 'exponents', 'float8_e8m0fnu', 'UE8M0 exponents')
    _require_act_dtype(act_dtype, 'act_dtype', 'mxfp4')
    shape = shape_of(blocks)
    if len(shape) == 3 and shape[2] == 16:
        blocks = blocks.reshape(shape[0], shape[1] * 16)
    elif len(shape) != 2:
        raise ValueError(f'blocks: expected a 2-D [N, K // 2] tensor (or gpt-oss\'s [N, K // 32, 16]), got '
                         f'{len(shape)}-D {tuple(shape)}')
    n, row_bytes = shape_of(blocks)
    k_name = 'blocks' if k is None else 'k'  # K from blocks' shape, or the caller's
    if k is None:
        k = 2 * row_bytes
    require_int(k, 'k', 1, 2**31 - 1)
    if n < 1 or row_bytes < 1:
        raise ValueError(f'blocks: expected [N, K // 2] with N >= 1 and K >= 1, got shape {tuple(shape)}')
    if k % 8:
        got = f'shape {tuple(shape)} (K = {k})' if k_name == 'blocks' else str(k)
        raise ValueError(f'{k_name}: expected K a multiple of 8 (the activations\' rows must be 16-byte aligned), '
                         f'got {got}')
    groups = -(-k // _MX_GROUP)
    if row_bytes not in (k // 2, groups * _MX_GROUP // 2):
        raise ValueError(f'k: expected a K whose codes fill the {row_bytes} bytes of each row of blocks '
                         f'(K = {2 * row_bytes}, or up to {_MX_GROUP - 1} fewer within the last group), got {k}')
    _require_2d(exponents, 'exponents', '[N, ceil(K / 32)] of UE8M0 exponents')
    _require_shape(exponents, 'exponents', (n, groups), f'(one exponent per 32 k of each row; K = {k})')
    exponents = _cpu(exponents)
    if bool((exponents == 255).any()):
        where = tuple(int(i) for i in (exponents == 255).nonzero()[0])
        raise ValueError(f'exponents: expected UE8M0 exponents 0..254 (255 is NaN), got 255 at {where}')
    packed = _cpu(blocks)
    codes = torch.empty((n, 2 * row_bytes), dtype=torch.uint8)
    codes[:, 0::2] = packed & 0xF
    codes[:, 1::2] = packed >> 4
    if 2 * row_bytes > k:
        tail = codes[:, k:] & 0x7  # e2m1 0 and -0
        if bool(tail.any()):
            where = tuple(int(i) for i in tail.nonzero()[0])
            raise ValueError(f'blocks: expected the codes past k = {k} (the last group\'s padding) to decode to 0, '
                             f'got code {int(codes[where[0], k + where[1]])} at ({where[0]}, {k + where[1]})')
        codes = codes[:, :k].contiguous()
    renames = [('codes', 'blocks'), ('n', 'blocks'), ('k', k_name)]
    return _pack('mxfp4', act_dtype, n, k, _MX_GROUP, False, renames, blocks.device, codes, exponents=exponents)


def _codes(t, name, high, what):
    """``t`` (an integer tensor) as contiguous CPU uint8 codes, each checked in 0..high."""
    _require_dtype(t, name, _INTEGER_DTYPES, f' ({what})')
    t = _cpu(t)
    if t.numel():
        bad = (t < 0) | (t > high)
        if bool(bad.any()):
            where = tuple(int(i) for i in bad.nonzero()[0])
            raise ValueError(f'{name}: expected {what} 0..{high}, got {int(t[where])} at {where}')
    return t.to(torch.uint8)


def _require_finite(t, name, what):
    """``t`` (a CPU float tensor) when every value is finite; ValueError naming the first that is not."""
    bad = ~torch.isfinite(t)
    if bool(bad.any()):
        where = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(f'{name}: expected finite {what}, got {float(t[where])} at {where}')
    return t


def _pack(fmt, act_dtype, n, k, group_size, has_zeros, renames, device, codes, scales=None, zeros=None,
          exponents=None, channel_scales=None):
    """pack_weight over CPU arrays, into a new PackedWeight on ``device``."""
    group_size, n_pad, k_pad, groups, _, _, _ = _layout(fmt, act_dtype, n, k, group_size, has_zeros, renames)
    outs = _empty_packed(fmt, act_dtype, has_zeros, n_pad, k_pad, groups)
    exp_shift = _C.wq_pack((fmt, _act_code(act_dtype), n, k, group_size, has_zeros), _host_array(codes),
                           _host_array(scales), _host_array(zeros), _host_array(exponents),
                           _host_array(channel_scales), *(_byte_array(outs[f]) for f in ('data', 'scales', 'zeros')),
                           _host_array(outs['channel_scales']), renames)
    return _finish(fmt, act_dtype, n, k, group_size, has_zeros, exp_shift, n_pad, k_pad, outs, device)


def _empty_packed(fmt, act_dtype, has_zeros, n_pad, k_pad, groups):
    blocks = n_pad // _ROW_BLOCK
    group_shape = (blocks, groups, _ROW_BLOCK)
    return {
        'data': torch.empty((blocks, k_pad // _CHUNK_K, _CODE_BYTES[fmt]), dtype=torch.uint8),
        'scales': None if fmt == 'int8' else torch.empty(group_shape,
                                                         dtype=act_dtype if fmt == 'int4' else torch.uint8),
        'zeros': torch.empty(group_shape, dtype=torch.uint8) if has_zeros else None,
        'channel_scales': torch.empty((n_pad, ), dtype=torch.float32) if fmt == 'int8' else None,
    }


def _finish(fmt, act_dtype, n, k, group_size, has_zeros, exp_shift, n_pad, k_pad, outs, device):
    w = PackedWeight(fmt, act_dtype, n, k, group_size, has_zeros, exp_shift, n_pad, k_pad, **outs)
    return w if str(device) == 'cpu' else w.to(device)
