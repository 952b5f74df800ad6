"""The float64 oracles on the CPU that the GPU results are tested against: the weight (reference_weight), gemm's
product (reference) and the M-grouped GEMMs' (reference_grouped_contiguous, reference_grouped_masked)."""
import math

import torch

from .._checks import require_tensor, shape_of
from ._tensor_args import _INTEGER_DTYPES, _cpu, _require_2d, _require_dtype, _require_shape
from ._unpack import unpack
from ._weight import _MX_GROUP, _require_experts, _require_single, _require_weight


# e2m1 values by code (bit 3 the sign).
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


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
