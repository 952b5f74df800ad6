"""PackedWeight, a weight in the kernel's packed layout, with the checks of its fields against each other and the
library's layout; the packed layout's constants and the helpers that hand a weight's layout to the library."""
import dataclasses
import math
from typing import Optional

import torch

from .. import _C
from .._checks import INT32_MAX, dtype_name, is_contiguous, require_bool, require_int, require_tensor, shape_of
from ._tensor_args import _device_str, _require_dtype, _require_shape


_CODES = _C.dtype_codes()
# torch dtype name -> tilegemm's short name, for the tensors the GEMM views.
_SHORT = {'bfloat16': 'bf16', 'float16': 'fp16', 'float32': 'fp32'}
_ACT_DTYPES = {'bfloat16': torch.bfloat16, 'float16': torch.float16}
_FORMATS = ('int4', 'int8', 'mxfp4')
_ROW_BLOCK, _CHUNK_K, _MX_GROUP = 16, 64, 32
_CODE_BYTES = {'int4': 512, 'int8': 1024, 'mxfp4': 512}  # code bytes of one 16 x 64 fragment block
_INT4_GROUPS = (32, 64, 128)


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
        # While torch traces (w.expert(i) inside a compiled function, say) the checks would break the graph at the
        # library's layout call; they run anyway when the graph does, as the wq_* ops rebuild the weight eagerly.
        if not torch.compiler.is_compiling():
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


def _numel(t):
    return math.prod(shape_of(t))


def _element_bytes(t):
    return {'bfloat16': 2, 'float16': 2, 'float32': 4, 'int16': 2, 'int32': 4, 'int64': 8}.get(dtype_name(t), 1)


def _act_code(dtype):
    return _CODES[_SHORT[str(dtype).replace('torch.', '')]]


def _layout_args(w):
    return (w.format, _act_code(w.act_dtype), w.n, w.k, w.group_size, w.has_zeros)


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


def _require_experts(w, experts, a):
    if w.num_experts != experts:
        raise ValueError(f'w: expected a grouped weight of {experts} experts (one per slice of a '
                         f'{tuple(shape_of(a))}), got num_experts {w.num_experts}')
