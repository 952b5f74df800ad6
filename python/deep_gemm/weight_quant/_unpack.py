"""The inverse of packing (unpack): a PackedWeight's codes and scales as CPU tensors, from the library."""
import torch

from .. import _C
from ._tensor_args import _byte_array, _cpu, _host_array
from ._weight import _MX_GROUP, _ROW_BLOCK, _WEIGHT_RENAMES, _packed_layout, _require_single, _require_weight


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
