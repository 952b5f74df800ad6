"""Weight-only quantised GEMM on SM90: ``D = A @ dequant(W).T`` with 16-bit activations and 4- or 8-bit weights.

This module is tilegemm's own API, not DeepGEMM's: it is not imported by ``import deep_gemm`` and none of its names
are in the package's top level (which stays exactly DeepGEMM 2.6.1's surface). Import it by name::

    import deep_gemm.weight_quant as wq

    w = wq.pack_int4(q, scales)          # q [N, K] codes 0..15, scales [N, K // 128] bf16: symmetric, zero point 8
    w = w.to('cuda')                     # a PackedWeight: the kernel's layout, every array a torch tensor
    d = wq.gemm(a, w)                    # a [M, K] bf16 on the GPU -> d [M, N] bf16
    d32 = wq.gemm(a, w, out=torch.empty(M, N, dtype=torch.float32, device='cuda'))

It needs torch (the weights and activations are torch tensors); the GEMM needs an SM90 GPU.

Weight formats (W is [N, K]: N output features, K input features; the math of device/tilegemm/wq_params.hpp):

- ``int4`` (w4a16): ``W[n, k] = (q - z) * s`` with codes ``q`` in 0..15, one scale ``s`` (of the activations' dtype,
  bf16 or fp16) per group of 32, 64 or 128 consecutive k of a row, and a zero point ``z`` per group (0..15), or 8
  for every group when the weight has no zero points (symmetric). :func:`pack_int4`; GPTQ and AWQ checkpoints
  (asymmetric, with zero points) through :func:`from_gptq` and :func:`from_awq`.
- ``int8`` (w8a16): ``W[n, k] = q * s[n]`` with ``q`` a signed int8 and ``s`` an fp32 scale per row (channel).
  :func:`pack_int8` (stored as the code ``q + 128``).
- ``mxfp4`` (OCP MX, as gpt-oss ships its experts): ``W[n, k] = e2m1(q) * 2^(e - 127)`` with ``q`` a 4-bit e2m1 code
  (sign, two exponent bits, one mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives) and ``e`` a UE8M0
  exponent per group of 32 k (0..254; 255 is NaN and refused). bf16 activations only. :func:`pack_mxfp4`.

Sizes: K a multiple of 8 (the activations' rows must be 16-byte aligned) and, for int4, of the group size; any
N >= 1. The packed arrays are padded to N a multiple of 16 and K a multiple of 64 (and of the group size) with codes
that decode to 0.

Packing runs on the CPU (the tensors are copied there and the result moved back to the input's device); call
``.to('cuda')`` on the result, or pack CUDA tensors, before :func:`gemm`. :func:`unpack` is the inverse of packing,
:func:`reference` / :func:`reference_weight` the float64 math the GPU results are tested against.

How a call runs (:func:`plan` says, as does ``DG_PRINT_CONFIGS=1`` at each new shape): small M decodes W in
registers between the load and the tensor cores (bound by reading the packed bytes: about 4x fewer than a bf16
weight's for int4 / mxfp4); large M dequantises W once into a 16-bit scratch and runs the dense GEMM. :func:`gemm`
runs on torch's current stream (CUDA graphs capture it) and uses the SM count ``deep_gemm.set_num_sms`` set.

MoE experts (M-grouped GEMMs, as DeepGEMM's m_grouped_* over a weight per expert)::

    experts = wq.stack([wq.pack_mxfp4(b, e) for b, e in expert_tensors])  # one PackedWeight, num_experts = E
    d = wq.m_grouped_gemm_masked(a, experts, masked_m, expected_m)       # a [E, M_max, K], masked_m int32 [E]
    d = wq.m_grouped_gemm_contiguous(a, experts, grouped_layout)         # a [M, K], grouped_layout int32 [M]

:func:`stack` puts single weights of one format and shape together (every array gains a leading [E] dimension;
``w.expert(i)`` is expert i's weight again, a view). Contiguous: each expert's rows together, starting on a multiple
of ``deep_gemm.get_mk_alignment_for_contiguous_layout()`` (128), ``grouped_layout`` the expert of each row or -1 for
padding rows (their outputs are left unspecified). Masked: a slice of ``M_max`` rows per expert, of which the first
``masked_m[e]`` are computed (read on the GPU; the rest of ``out`` is not written); ``expected_m`` the typical rows per
expert, which picks the token block. Grouped calls always decode in registers. :func:`reference_grouped_contiguous`
and :func:`reference_grouped_masked` are their float64 oracles.

Every bad argument raises TypeError (not a tensor, not an int...) or ValueError (a wrong dtype, shape, value or
device) whose message starts with the argument's name and says what was expected and what was given. Without a GPU,
:func:`gemm` and :func:`dequantize` still check their arguments, then raise RuntimeError.
"""
import dataclasses
import math
from typing import Optional

import torch

from . import _C
from ._checks import INT32_MAX, dtype_name, is_contiguous, require_bool, require_int, require_tensor, shape_of
from ._config import num_sms_setting
from ._tensor import current_stream, device_of

__all__ = [
    'PackedWeight', 'pack_int4', 'pack_int8', 'pack_mxfp4', 'from_gptq', 'from_awq', 'stack', 'unpack', 'gemm',
    'm_grouped_gemm_contiguous', 'm_grouped_gemm_masked', 'dequantize', 'reference', 'reference_weight',
    'reference_grouped_contiguous', 'reference_grouped_masked', 'plan'
]

_CODES = _C.dtype_codes()
# torch dtype name -> tilegemm's short name, for the tensors the GEMM views.
_SHORT = {'bfloat16': 'bf16', 'float16': 'fp16', 'float32': 'fp32'}
_ACT_DTYPES = {'bfloat16': torch.bfloat16, 'float16': torch.float16}
_INTEGER_DTYPES = ('uint8', 'int8', 'int16', 'int32', 'int64')
_FORMATS = ('int4', 'int8', 'mxfp4')
_ROW_BLOCK, _CHUNK_K, _MX_GROUP = 16, 64, 32
_CODE_BYTES = {'int4': 512, 'int8': 1024, 'mxfp4': 512}  # code bytes of one 16 x 64 fragment block
_INT4_GROUPS = (32, 64, 128)
# e2m1 values by code (bit 3 the sign).
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


@dataclasses.dataclass(frozen=True, eq=False)
class PackedWeight:
    """A weight [N, K] in the kernel's packed layout (device/tilegemm/wq_params.hpp). Made by the pack_* / from_*
    functions; the fields are checked against each other when one is built.

    ``data``: torch.uint8 codes, [n_pad / 16, k_pad / 64, 512] (4-bit) or [..., 1024] (int8), or the same bytes 1-D.
    ``scales``: int4: [n_pad / 16, groups, 16] of ``act_dtype``; mxfp4: the UE8M0 exponents as torch.uint8 of that
    shape; int8: None. ``zeros``: int4 zero points, torch.uint8 [n_pad / 16, groups, 16], or None (zero point 8).
    ``channel_scales``: int8: torch.float32 [n_pad]; else None. ``groups`` is k_pad / group_size.
    ``exp_shift`` (mxfp4): max(0, largest exponent - 128), which the kernel's exponent arithmetic needs (any larger
    shift, up to 126, gives the same results: a grouped weight's is the largest of its experts').

    ``num_experts``: 1 for one weight; E > 1 for E experts' weights of this format and shape (M-grouped GEMMs, made by
    :func:`stack`): then every array has a leading [E] dimension (``data`` [E, n_pad / 16, k_pad / 64, bytes] or
    [E, data bytes], ``scales`` / ``zeros`` [E, n_pad / 16, groups, 16], ``channel_scales`` [E, n_pad]) and
    :meth:`expert` gives one expert's weight.
    """
    format: str
    act_dtype: torch.dtype
    n: int
    k: int
    group_size: int
    has_zeros: bool
    exp_shift: int
    n_pad: int
    k_pad: int
    data: torch.Tensor
    scales: Optional[torch.Tensor]
    zeros: Optional[torch.Tensor]
    channel_scales: Optional[torch.Tensor]
    num_experts: int = 1

    def __post_init__(self):
        _require_packed_fields(self)

    def _arrays(self):
        return {name: getattr(self, name) for name in ('data', 'scales', 'zeros', 'channel_scales')}

    def to(self, device):
        """The same weight (all its experts) with every array on ``device``."""
        return dataclasses.replace(self, **{name: t.to(device) for name, t in self._arrays().items() if t is not None})

    @property
    def device(self):
        return self.data.device

    @property
    def nbytes(self):
        """Bytes of the packed arrays (codes, scales, zero points, channel scales), every expert's."""
        return sum(_numel(t) * _element_bytes(t) for t in self._arrays().values() if t is not None)

    def expert(self, i):
        """Expert ``i``'s weight (0 <= i < num_experts) of a grouped weight: a single PackedWeight whose arrays are
        views of this one's (no copy), for :func:`gemm`, :func:`dequantize`, :func:`unpack`... It keeps the group's
        exp_shift (mxfp4: at least its own, which gives the same results). A single weight's expert(0) is itself."""
        require_int(i, 'i', 0, self.num_experts - 1)
        if self.num_experts == 1:
            return self
        return dataclasses.replace(self, num_experts=1,
                                   **{name: t[i] for name, t in self._arrays().items() if t is not None})

    def __repr__(self):
        packing = f'group_size={self.group_size}, has_zeros={self.has_zeros}, ' if self.format == 'int4' else ''
        shift = f'exp_shift={self.exp_shift}, ' if self.format == 'mxfp4' else ''
        experts = f'num_experts={self.num_experts}, ' if self.num_experts > 1 else ''
        return (f'PackedWeight(format={self.format!r}, act_dtype={self.act_dtype}, n={self.n}, k={self.k}, '
                f'{packing}{shift}{experts}device={self.device}, nbytes={self.nbytes})')


# --- helpers ---------------------------------------------------------------------------------------------------------


def _numel(t):
    return math.prod(shape_of(t))


def _element_bytes(t):
    return {'bfloat16': 2, 'float16': 2, 'float32': 4, 'int16': 2, 'int32': 4, 'int64': 8}.get(dtype_name(t), 1)


def _layout_args(w):
    return (w.format, _act_code(w.act_dtype), w.n, w.k, w.group_size, w.has_zeros)


def _act_code(dtype):
    return _CODES[_SHORT[str(dtype).replace('torch.', '')]]


def _packed_layout(w):
    return _layout_args(w) + (w.exp_shift, w.n_pad, w.k_pad)


def _layout(fmt, act_dtype, n, k, group_size, has_zeros, renames):
    """(group_size, n_pad, k_pad, groups, data bytes, scale bytes, zero bytes) of the layout, from the library."""
    return _C.wq_layout((fmt, _act_code(act_dtype), n, k, group_size, has_zeros), renames)


def _require_act_dtype(dtype, name, fmt=None):
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f'{name}: expected torch.bfloat16 or torch.float16, got {type(dtype).__name__} {dtype!r}')
    if fmt == 'mxfp4' and dtype != torch.bfloat16:
        raise ValueError(f'{name}: expected torch.bfloat16 for mxfp4 (the exponent scale is folded into a bf16 '
                         f'multiplier: fp16\'s range is too small), got {dtype}')
    if str(dtype).replace('torch.', '') not in _ACT_DTYPES:
        raise ValueError(f'{name}: expected torch.bfloat16 or torch.float16, got {dtype}')
    return dtype


def _require_2d(t, name, what):
    require_tensor(t, name)
    shape = shape_of(t)
    if len(shape) != 2:
        raise ValueError(f'{name}: expected a 2-D tensor {what}, got {len(shape)}-D {tuple(shape)}')
    if max(shape) > 2**31 - 1:
        raise ValueError(f'{name}: expected sizes below 2^31 (the library\'s 32-bit sizes), got {tuple(shape)}')
    return shape


def _require_shape(t, name, expected, what):
    if shape_of(t) != list(expected):
        raise ValueError(f'{name}: expected shape {tuple(expected)} {what}, got {tuple(shape_of(t))}')


def _require_dtype(t, name, allowed, what=''):
    if dtype_name(t) not in allowed:
        names = ', '.join(allowed[:-1]) + (' or ' if len(allowed) > 1 else '') + allowed[-1]
        raise ValueError(f'{name}: expected {names} elements{what}, got {t.dtype}')


def _cpu(t):
    return t.detach().to('cpu').contiguous()


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


def _bits(t):
    """A contiguous CPU bf16 / fp16 tensor's bits (as int16: what the library reads as uint16)."""
    return _cpu(t).view(torch.int16)


def _host_array(t):
    return (0, 0) if t is None else (int(t.data_ptr()), t.numel())


def _byte_array(t):
    return (0, 0) if t is None else (int(t.data_ptr()), t.numel() * t.element_size())


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


def _require_packed_fields(w):
    """The fields of a PackedWeight agree with each other and with the library's layout (TypeError / ValueError
    naming the field)."""
    if w.format not in _FORMATS:
        raise ValueError(f'format: expected one of {", ".join(map(repr, _FORMATS))}, got {w.format!r}')
    _require_act_dtype(w.act_dtype, 'act_dtype', w.format)
    for name in ('n', 'k', 'group_size', 'exp_shift', 'n_pad', 'k_pad'):
        require_int(getattr(w, name), name, 0, 2**31 - 1)
    require_bool(w.has_zeros, 'has_zeros')
    require_int(w.num_experts, 'num_experts', 1, INT32_MAX)
    group_size, n_pad, k_pad, groups, data_bytes, _, _ = _layout(w.format, w.act_dtype, w.n, w.k, w.group_size,
                                                                 w.has_zeros, [])
    if w.group_size != group_size:
        raise ValueError(f'group_size: expected {group_size} for {w.format}, got {w.group_size}')
    if (w.n_pad, w.k_pad) != (n_pad, k_pad):
        raise ValueError(f'n_pad: expected n_pad {n_pad} and k_pad {k_pad} (n = {w.n}, k = {w.k} padded to 16 and '
                         f'to 64 and the group size), got n_pad {w.n_pad} and k_pad {w.k_pad}')
    if w.format != 'mxfp4' and w.exp_shift != 0:
        raise ValueError(f'exp_shift: expected 0 for {w.format} (only mxfp4 has an exponent shift), got {w.exp_shift}')
    if w.exp_shift > 126:
        raise ValueError(f'exp_shift: expected 0..126 (max(0, largest UE8M0 exponent - 128)), got {w.exp_shift}')

    # A grouped weight's arrays: the experts' one after another, along a leading [E] dimension.
    lead = [w.num_experts] if w.num_experts > 1 else []
    of = f'n_pad {n_pad}, k_pad {k_pad}' + (f', {w.num_experts} experts' if lead else '')
    require_tensor(w.data, 'data')
    _require_dtype(w.data, 'data', ('uint8', ))
    blocks_shape = lead + [n_pad // _ROW_BLOCK, k_pad // _CHUNK_K, _CODE_BYTES[w.format]]
    if shape_of(w.data) not in (blocks_shape, lead + [data_bytes]):
        raise ValueError(f'data: expected shape {tuple(blocks_shape)} or {tuple(lead + [data_bytes])} (the packed '
                         f'codes of {of}), got {tuple(shape_of(w.data))}')
    group_shape = tuple(lead) + (n_pad // _ROW_BLOCK, groups, _ROW_BLOCK)
    wanted = {
        'scales': None if w.format == 'int8' else (group_shape, str(w.act_dtype).replace('torch.', '')
                                                   if w.format == 'int4' else 'uint8'),
        'zeros': (group_shape, 'uint8') if w.has_zeros else None,
        'channel_scales': (tuple(lead) + (n_pad, ), 'float32') if w.format == 'int8' else None,
    }
    device = _device_str(w.data)
    for name, want in wanted.items():
        t = getattr(w, name)
        if want is None:
            if t is not None:
                why = 'the weight has no zero points' if name == 'zeros' else f'{w.format} weights have none'
                raise ValueError(f'{name}: expected None ({why}), got a {type(t).__name__}')
            continue
        if t is None:
            raise ValueError(f'{name}: expected a {want[1]} tensor of shape {want[0]} for this {w.format} weight, '
                             'got None')
        require_tensor(t, name)
        _require_dtype(t, name, (want[1], ))
        _require_shape(t, name, want[0], f'({of})')
        if _device_str(t) != device:
            raise ValueError(f'{name}: expected a tensor on data\'s device {device}, got one on {_device_str(t)}')
    for name, t in w._arrays().items():
        if t is not None and not is_contiguous(t):
            raise ValueError(f'{name}: expected a contiguous tensor, got strides {tuple(t.stride())}')


def _device_str(t):
    return str(t.device)


_WEIGHT_RENAMES = [('data', 'w.data'), ('scales', 'w.scales'), ('zeros', 'w.zeros'),
                   ('channel_scales', 'w.channel_scales'), ('exp_shift', 'w.exp_shift'), ('layout', 'w')]


def _require_weight(w, name='w'):
    if not isinstance(w, PackedWeight):
        raise TypeError(f'{name}: expected a deep_gemm.weight_quant.PackedWeight (from pack_int4, pack_int8, '
                        f'pack_mxfp4, from_gptq, from_awq or stack), got {type(w).__module__}.{type(w).__qualname__}')
    return w


def _require_single(w, instead):
    """``w`` (a PackedWeight) when it is one weight; ValueError naming w for a grouped one."""
    if w.num_experts != 1:
        raise ValueError(f'w: expected a single weight (num_experts 1), got a grouped weight of {w.num_experts} '
                         f'experts: pass one expert, w.expert(i){instead}')
    return w


_GROUPED_INSTEAD = ', or use m_grouped_gemm_contiguous / m_grouped_gemm_masked'


# --- packing ---------------------------------------------------------------------------------------------------------


def pack_int4(q, scales, zeros=None):
    """An int4 weight: ``W = (q - z) * s`` per group of ``K // scales.shape[1]`` (32, 64 or 128) k of a row.

    ``q``: [N, K] integer tensor (uint8, int8, int16, int32 or int64) of codes 0..15. ``scales``: [N, K // group]
    bf16 or fp16, which is the activations' dtype the weight is packed for. ``zeros``: None (symmetric: zero point 8)
    or [N, K // group] integer zero points 0..15. Returns a PackedWeight on q's device.
    """
    n, k = _require_2d(q, 'q', '[N, K] of 4-bit codes')
    _require_2d(scales, 'scales', '[N, K // group_size] of group scales')
    _require_dtype(scales, 'scales', ('bfloat16', 'float16'), ' (the activations\' dtype)')
    if n < 1 or k < 1:
        raise ValueError(f'q: expected [N, K] with N >= 1 and K >= 1, got shape {(n, k)}')
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


# --- MoE experts -----------------------------------------------------------------------------------------------------


_STACKED_FIELDS = ('format', 'act_dtype', 'n', 'k', 'group_size', 'has_zeros')


def stack(weights):
    """One grouped weight of E experts (``num_experts`` E) from a list or tuple of E single weights of one format,
    act_dtype, N, K, group size, zero points and device: each array is the experts' arrays stacked along a new
    leading dimension (a copy), ``exp_shift`` the largest of theirs (mxfp4). One weight: that weight itself. For
    :func:`m_grouped_gemm_contiguous` / :func:`m_grouped_gemm_masked`; ``stack(ws).expert(i)`` has ws[i]'s arrays."""
    if not isinstance(weights, (list, tuple)):
        raise TypeError(f'weights: expected a list or tuple of PackedWeights (one per expert), got '
                        f'{type(weights).__module__}.{type(weights).__qualname__}')
    if not weights:
        raise ValueError('weights: expected at least one PackedWeight (one per expert), got an empty '
                         f'{type(weights).__name__}')
    for i, w in enumerate(weights):
        _require_weight(w, f'weights[{i}]')
        if w.num_experts != 1:
            raise ValueError(f'weights[{i}]: expected a single weight (num_experts 1), got a grouped weight of '
                             f'{w.num_experts} experts (stack its experts: w.expert(j))')
    first = weights[0]
    for i, w in enumerate(weights[1:], 1):
        for field in _STACKED_FIELDS:
            if getattr(w, field) != getattr(first, field):
                raise ValueError(f'weights[{i}]: expected {field} {getattr(first, field)!r} as weights[0] (the '
                                 f'experts share one layout), got {getattr(w, field)!r}')
        if _device_str(w.data) != _device_str(first.data):
            raise ValueError(f'weights[{i}]: expected a weight on weights[0]\'s device {_device_str(first.data)}, got '
                             f'one on {_device_str(w.data)}')
    if len(weights) == 1:
        return first
    blocks = [first.n_pad // _ROW_BLOCK, first.k_pad // _CHUNK_K, _CODE_BYTES[first.format]]
    arrays = {}
    for name, t in first._arrays().items():
        if t is not None:
            parts = [getattr(w, name) for w in weights]
            arrays[name] = torch.stack([p.reshape(blocks) for p in parts] if name == 'data' else parts)
    return dataclasses.replace(first, exp_shift=max(w.exp_shift for w in weights), num_experts=len(weights),
                               **arrays)


# --- unpacking -------------------------------------------------------------------------------------------------------


def _own_exp_shift(w, scales):
    """max(0, largest exponent - 128) over the exponents of an mxfp4 weight's N rows (CPU ``scales`` table)."""
    groups = -(-w.k // _MX_GROUP)
    table = scales.reshape(w.n_pad // _ROW_BLOCK, -1, _ROW_BLOCK).transpose(1, 2).reshape(w.n_pad, -1)
    return max(0, int(table[:w.n, :groups].max()) - 128)


def unpack(w):
    """The inverse of packing, as CPU tensors: ``codes`` torch.uint8 [N, K] (int4 / mxfp4: 0..15; int8: q + 128),
    and int4: ``scales`` [N, K / group] of act_dtype, ``zeros`` torch.uint8 [N, K / group] (with zero points);
    int8: ``channel_scales`` torch.float32 [N]; mxfp4: ``exponents`` torch.uint8 [N, ceil(K / 32)]. One weight (of
    a grouped one: ``unpack(w.expert(i))``); mxfp4: its exp_shift must be at least its exponents' own."""
    _require_weight(w)
    _require_single(w, '')
    n, k = w.n, w.k
    groups = 0 if w.format == 'int8' else -(-k // w.group_size)
    out = {'codes': torch.empty((n, k), dtype=torch.uint8)}
    if w.format == 'int4':
        out['scales'] = torch.empty((n, groups), dtype=w.act_dtype)
        if w.has_zeros:
            out['zeros'] = torch.empty((n, groups), dtype=torch.uint8)
    elif w.format == 'mxfp4':
        out['exponents'] = torch.empty((n, groups), dtype=torch.uint8)
    else:
        out['channel_scales'] = torch.empty((n, ), dtype=torch.float32)
    arrays = {name: None if t is None else _cpu(t) for name, t in w._arrays().items()}
    layout = _packed_layout(w)
    if w.format == 'mxfp4':
        # The library's unpack wants the exponents' own shift; an expert of a grouped weight carries the group's.
        own = _own_exp_shift(w, arrays['scales'])
        if w.exp_shift < own:
            raise ValueError(f'w.exp_shift: expected at least {own} (max(0, largest exponent - 128) of the weight\'s '
                             f'exponents), got {w.exp_shift}')
        layout = layout[:6] + (own, ) + layout[7:]
    _C.wq_unpack(layout, *(_byte_array(arrays[f]) for f in ('data', 'scales', 'zeros')),
                 _host_array(arrays['channel_scales']), _host_array(out['codes']),
                 _host_array(None if 'scales' not in out else out['scales'].view(torch.int16)),
                 _host_array(out.get('zeros')), _host_array(out.get('exponents')),
                 _host_array(out.get('channel_scales')), _WEIGHT_RENAMES)
    return out


# --- the float64 reference ---------------------------------------------------------------------------------------------


def reference_weight(w):
    """W [N, K] in float64 on the CPU, from :func:`unpack` and the formats' math (exact: every weight value is a
    float64)."""
    u = unpack(w)
    codes = u['codes'].to(torch.float64)
    if w.format == 'int4':
        scales = u['scales'].to(torch.float64).repeat_interleave(w.group_size, dim=1)
        zeros = u['zeros'].to(torch.float64).repeat_interleave(w.group_size, dim=1) if w.has_zeros else 8.0
        return (codes - zeros) * scales
    if w.format == 'int8':
        return (codes - 128.0) * u['channel_scales'].to(torch.float64)[:, None]
    values = torch.tensor(_E2M1, dtype=torch.float64)[u['codes'].long()]
    powers = torch.tensor([math.ldexp(1.0, e - 127) for e in range(256)], dtype=torch.float64)
    return values * powers[u['exponents'].long()].repeat_interleave(_MX_GROUP, dim=1)[:, :w.k]


def reference(a, w):
    """``a.double() @ W.double().T`` in float64 on the CPU: the oracle :func:`gemm`'s results are checked against.
    ``a``: a floating-point [M, K] tensor on any device."""
    _require_weight(w)
    _require_single(w, ', or use reference_grouped_contiguous / reference_grouped_masked')
    m, k = _require_2d(a, 'a', '[M, K] of activations')
    if not a.dtype.is_floating_point:
        raise ValueError(f'a: expected a floating-point tensor, got {a.dtype}')
    if k != w.k:
        raise ValueError(f'a: expected shape ({m}, {w.k}) (K as the weight\'s), got {(m, k)}')
    return _cpu(a).to(torch.float64) @ reference_weight(w).T


def _float_activations(a, ndim, what):
    require_tensor(a, 'a')
    shape = shape_of(a)
    if len(shape) != ndim:
        raise ValueError(f'a: expected a {ndim}-D tensor {what}, got {len(shape)}-D {tuple(shape)}')
    if not a.dtype.is_floating_point:
        raise ValueError(f'a: expected a floating-point tensor, got {a.dtype}')
    return shape


def _host_indices(t, name, length, low, high, what):
    """``t`` (an integer [length] tensor on any device) as CPU int64, each value checked in low..high."""
    require_tensor(t, name)
    _require_dtype(t, name, _INTEGER_DTYPES, f' ({what})')
    _require_shape(t, name, (length, ), f'({what})')
    t = _cpu(t).to(torch.int64)
    bad = (t < low) | (t > high)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise ValueError(f'{name}: expected {what} in {low}..{high}, got {int(t[i])} at {i}')
    return t


def reference_grouped_contiguous(a, w, grouped_layout):
    """The float64 oracle of :func:`m_grouped_gemm_contiguous`, on the CPU: row r of the result is
    ``a[r] @ W[grouped_layout[r]].T`` (W[e] the float64 weight of ``w.expert(e)``), or NaN for a padding row
    (grouped_layout -1: the GPU leaves those unspecified). ``a``: a floating-point [M, K] tensor on any device;
    ``grouped_layout``: an integer [M] tensor of experts -1..E-1 (alignment not checked). Returns float64 [M, N]."""
    _require_weight(w)
    m, k = _float_activations(a, 2, '[M, K] of every expert\'s rows')
    if k != w.k:
        raise ValueError(f'a: expected shape ({m}, {w.k}) (K as the weight\'s), got {(m, k)}')
    experts = _host_indices(grouped_layout, 'grouped_layout', m, -1, w.num_experts - 1,
                            'the expert of each row of a, -1 for padding')
    a64 = _cpu(a).to(torch.float64)
    out = torch.full((m, w.n), float('nan'), dtype=torch.float64)
    for e in range(w.num_experts):
        rows = (experts == e).nonzero()[:, 0]
        if rows.numel():
            out[rows] = a64[rows] @ reference_weight(w.expert(e)).T
    return out


def reference_grouped_masked(a, w, masked_m):
    """The float64 oracle of :func:`m_grouped_gemm_masked`, on the CPU: ``out[e, i] = a[e, i] @ W[e].T`` for
    i < masked_m[e] (W[e] the float64 weight of ``w.expert(e)``), NaN past it (rows the GPU does not write).
    ``a``: a floating-point [E, M_max, K] tensor on any device, E = w.num_experts; ``masked_m``: an integer [E] tensor
    of row counts 0..M_max. Returns float64 [E, M_max, N]."""
    _require_weight(w)
    experts, m_max, k = _float_activations(a, 3, '[E, M_max, K] of each expert\'s rows')
    if k != w.k:
        raise ValueError(f'a: expected shape ({experts}, {m_max}, {w.k}) (K as the weight\'s), got '
                         f'{(experts, m_max, k)}')
    _require_experts(w, experts, a)
    counts = _host_indices(masked_m, 'masked_m', experts, 0, m_max, 'the valid rows of each expert')
    a64 = _cpu(a).to(torch.float64)
    out = torch.full((experts, m_max, w.n), float('nan'), dtype=torch.float64)
    for e in range(experts):
        rows = int(counts[e])
        if rows:
            out[e, :rows] = a64[e, :rows] @ reference_weight(w.expert(e)).T
    return out


def _require_experts(w, experts, a):
    if w.num_experts != experts:
        raise ValueError(f'w: expected a grouped weight of {experts} experts (one per slice of a '
                         f'{tuple(shape_of(a))}), got num_experts {w.num_experts}')


# --- the GPU calls -----------------------------------------------------------------------------------------------------


def _view(t, name):
    """(data_ptr, dtype code, shape, strides) of a bf16 / fp16 / fp32 CUDA tensor."""
    require_tensor(t, name)
    _require_dtype(t, name, tuple(_SHORT))
    device_of(t, name)
    return (int(t.data_ptr()), _CODES[_SHORT[dtype_name(t)]], shape_of(t), [int(s) for s in t.stride()])


def _weight_on(w, device):
    """The packed arrays' device addresses, once they are on cuda:``device``."""
    where = w.device
    if getattr(where, 'type', None) != 'cuda' or (0 if where.index is None else where.index) != device:
        raise ValueError(f'w: expected a packed weight on cuda:{device} like the activations (w.to(...)), got one on '
                         f'{where}')
    return tuple(0 if t is None else int(t.data_ptr()) for t in w._arrays().values())


def _index_view(t, name, what):
    """(data_ptr, dtype code, shape, strides) of an int32 CUDA tensor."""
    require_tensor(t, name)
    _require_dtype(t, name, ('int32', ), f' ({what})')
    device_of(t, name)
    return (int(t.data_ptr()), _CODES['int32'], shape_of(t), [int(s) for s in t.stride()])


def _on_device(t, name, device):
    if device_of(t, name) != device:
        raise ValueError(f'{name}: expected a tensor on cuda:{device} like a, got one on {t.device}')


def _output(out, a, shape, device):
    """``out`` checked (a bf16 / fp16 / fp32 tensor on ``device``; its shape is the library's check), or a new tensor
    of ``shape`` and a's dtype."""
    if out is None:
        return torch.empty(shape, dtype=a.dtype, device=a.device)
    require_tensor(out, 'out')
    _require_dtype(out, 'out', ('bfloat16', 'float16', 'float32'))
    _on_device(out, 'out', device)
    return out


def _activations(a, w, ndim, what):
    """a's shape, once it is a ``ndim``-D tensor of w.act_dtype; and its CUDA device."""
    require_tensor(a, 'a')
    shape = shape_of(a)
    if len(shape) != ndim:
        raise ValueError(f'a: expected a {ndim}-D tensor {what}, got {len(shape)}-D {tuple(shape)}')
    if max(shape) > INT32_MAX:
        raise ValueError(f'a: expected sizes below 2^31 (the library\'s 32-bit sizes), got {tuple(shape)}')
    _require_dtype(a, 'a', (str(w.act_dtype).replace('torch.', ''), ), ' (the weight\'s act_dtype)')
    return shape, device_of(a, 'a')


_GEMM_RENAMES = [('d', 'out')]


def gemm(a, w, out=None):
    """``out = a @ dequant(w).T``: ``a`` [M, K] of w.act_dtype on the GPU, ``out`` [M, N] bf16, fp16 or fp32 on the
    same device (default: a new tensor of a's dtype). Runs on torch's current stream; returns ``out``. One weight (a
    grouped weight's experts: :func:`m_grouped_gemm_contiguous` / :func:`m_grouped_gemm_masked`, or w.expert(i))."""
    _require_weight(w)
    _require_single(w, _GROUPED_INSTEAD)
    _require_2d(a, 'a', '[M, K] of activations')
    _require_dtype(a, 'a', (str(w.act_dtype).replace('torch.', ''), ), ' (the weight\'s act_dtype)')
    device = device_of(a, 'a')
    pointers = _weight_on(w, device)
    if out is None:
        out = torch.empty((shape_of(a)[0], w.n), dtype=a.dtype, device=a.device)
    else:
        require_tensor(out, 'out')
        _require_dtype(out, 'out', ('bfloat16', 'float16', 'float32'))
        if device_of(out, 'out') != device:
            raise ValueError(f'out: expected a tensor on cuda:{device} like a, got one on {out.device}')
    _C.wq_gemm_nt(_view(a, 'a'), _packed_layout(w), pointers, w.num_experts, _view(out, 'out'), device,
                  current_stream(device), num_sms_setting(), _GEMM_RENAMES + _WEIGHT_RENAMES)
    return out


def m_grouped_gemm_contiguous(a, w, grouped_layout, out=None):
    """MoE experts, rows grouped by expert: ``out[r] = a[r] @ dequant(w.expert(grouped_layout[r])).T``.

    ``a``: [M, K] of w.act_dtype on the GPU, each expert's rows together and starting on a multiple of
    ``deep_gemm.get_mk_alignment_for_contiguous_layout()`` (128), M a multiple of it. ``w``: a grouped weight
    (:func:`stack`) of E experts on a's GPU. ``grouped_layout``: torch.int32 [M], the expert (0..E-1) of each row, or
    -1 for a padding row, whose ``out`` row is left unspecified (the values are read on the GPU, not checked).
    ``out``: [M, N] bf16, fp16 or fp32 (default: a new tensor of a's dtype). Runs on torch's current stream, decoding
    in registers; returns ``out``."""
    _require_weight(w)
    (m, _), device = _activations(a, w, 2, '[M, K] of every expert\'s rows')
    pointers = _weight_on(w, device)
    layout = _index_view(grouped_layout, 'grouped_layout', 'the expert of each row, -1 for padding')
    _on_device(grouped_layout, 'grouped_layout', device)
    out = _output(out, a, (m, w.n), device)
    _C.wq_m_grouped_gemm_nt_contiguous(_view(a, 'a'), _packed_layout(w), pointers, w.num_experts, _view(out, 'out'),
                                       layout, device, current_stream(device), num_sms_setting(),
                                       _GEMM_RENAMES + _WEIGHT_RENAMES)
    return out


def m_grouped_gemm_masked(a, w, masked_m, expected_m, out=None):
    """MoE experts, a slice of rows per expert: ``out[e, :masked_m[e]] = a[e, :masked_m[e]] @ dequant(w.expert(e)).T``.

    ``a``: [E, M_max, K] of w.act_dtype on the GPU. ``w``: a grouped weight (:func:`stack`) of E experts on a's GPU.
    ``masked_m``: torch.int32 [E], the valid rows of each expert, 0..M_max (read on the GPU, not checked); rows past
    it are not written (a default ``out`` holds whatever torch.empty gave there). ``expected_m``: the typical rows per
    expert (an int >= 1), which picks the token block. ``out``: [E, M_max, N] bf16, fp16 or fp32 (default: a new
    tensor of a's dtype). Runs on torch's current stream, decoding in registers; returns ``out``."""
    _require_weight(w)
    (experts, m_max, _), device = _activations(a, w, 3, '[E, M_max, K] of each expert\'s rows')
    _require_experts(w, experts, a)
    pointers = _weight_on(w, device)
    counts = _index_view(masked_m, 'masked_m', 'the valid rows of each expert')
    _on_device(masked_m, 'masked_m', device)
    require_int(expected_m, 'expected_m', 1, INT32_MAX)
    out = _output(out, a, (experts, m_max, w.n), device)
    _C.wq_m_grouped_gemm_nt_masked(_view(a, 'a'), _packed_layout(w), pointers, w.num_experts, _view(out, 'out'),
                                   counts, expected_m, device, current_stream(device), num_sms_setting(),
                                   _GEMM_RENAMES + _WEIGHT_RENAMES)
    return out


def dequantize(w, out=None):
    """W [N, K] of w.act_dtype decoded on the GPU into ``out`` (default: a new tensor on w's device); returns it. One
    weight (a grouped weight's experts one at a time: ``dequantize(w.expert(i))``)."""
    _require_weight(w)
    _require_single(w, '')
    if out is None:
        if getattr(w.device, 'type', None) != 'cuda':
            raise ValueError(f'w: expected a packed weight on a CUDA device (w.to(\'cuda\')), got one on {w.device}')
        device = 0 if w.device.index is None else w.device.index
        out = torch.empty((w.n, w.k), dtype=w.act_dtype, device=w.device)
    else:
        require_tensor(out, 'out')
        _require_dtype(out, 'out', (str(w.act_dtype).replace('torch.', ''), ), ' (the weight\'s act_dtype)')
        device = device_of(out, 'out')
    pointers = _weight_on(w, device)
    _C.wq_dequantize(_packed_layout(w), pointers, w.num_experts, _view(out, 'out'), device, current_stream(device),
                     _WEIGHT_RENAMES)
    return out


_GROUPINGS = (None, 'contiguous', 'masked')


def plan(m, w, out_dtype=None, hw=None, grouping=None):
    """How :func:`gemm` runs M = ``m`` tokens through ``w`` into ``out_dtype`` (default: w.act_dtype): the plan's
    line (what ``DG_PRINT_CONFIGS=1`` prints) and whether it decodes in registers (True) or dequantises then runs the
    dense GEMM (False). ``hw``: a Hopper preset name ('h100-sxm', 'h800', 'h200', 'h20'), or None for w's GPU (the
    current one when w is on the CPU; RuntimeError without a GPU). Honours deep_gemm.set_num_sms.

    ``grouping``: None (:func:`gemm`), 'contiguous' (:func:`m_grouped_gemm_contiguous`, ``m`` every expert's rows M)
    or 'masked' (:func:`m_grouped_gemm_masked`, ``m`` the rows per expert: min(expected_m, M_max)), over w's
    num_experts experts (a grouped weight needs a grouping). Grouped plans always decode in registers, without a K
    split; a masked plan's grid is its CTAs per expert (one row of them per expert)."""
    _require_weight(w)
    require_int(m, 'm', 1, 2**31 - 1)
    if grouping is not None and not isinstance(grouping, str):
        raise TypeError(f'grouping: expected None, \'contiguous\' or \'masked\', got {type(grouping).__name__} '
                        f'{grouping!r}')
    if grouping not in _GROUPINGS:
        raise ValueError(f'grouping: expected None, \'contiguous\' or \'masked\', got {grouping!r}')
    if grouping is None and w.num_experts > 1:
        raise ValueError(f'grouping: expected \'contiguous\' or \'masked\' for a grouped weight of '
                         f'{w.num_experts} experts (gemm takes one weight), got None')
    if out_dtype is None:
        out_dtype = w.act_dtype
    if not isinstance(out_dtype, torch.dtype):
        raise TypeError(f'out_dtype: expected a torch.dtype, got {type(out_dtype).__name__} {out_dtype!r}')
    short = _SHORT.get(str(out_dtype).replace('torch.', ''))
    if short is None:
        raise ValueError(f'out_dtype: expected torch.bfloat16, torch.float16 or torch.float32, got {out_dtype}')
    if hw is not None and not isinstance(hw, str):
        raise TypeError(f'hw: expected a preset name (str) or None, got {type(hw).__name__} {hw!r}')
    where = w.device
    if getattr(where, 'type', None) == 'cuda':
        device = 0 if where.index is None else where.index
    else:
        device = torch.cuda.current_device() if hw is None and torch.cuda.is_available() else 0
    return _C.wq_plan(m, _layout_args(w), _CODES[short], hw, device, num_sms_setting(), grouping or '',
                      w.num_experts, [])
