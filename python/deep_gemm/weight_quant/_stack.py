"""MoE experts' weights as one grouped PackedWeight (stack); PackedWeight.expert(i) gives one back."""
import dataclasses

import torch

from ._tensor_args import _device_str
from ._weight import _CHUNK_K, _CODE_BYTES, _ROW_BLOCK, _require_weight


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
