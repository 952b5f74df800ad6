"""gemm_nt: the checks Python makes (tensor types, the scales' shapes), then the C++ plan (every other check) and its
run; a signature seen before runs its kept plan with no check."""
import torch

from .. import _C
from .._checks import dtype_name, require_tensor
from .._config import num_sms_setting
from .._plans import kept_key, run_checked, run_kept
from .._tensor import common_device, current_stream, view

_PREFIX = ('int8_gemm_nt', )


def _dtype(t, name, want, what):
    require_tensor(t, name)
    if dtype_name(t) != want:
        raise TypeError(f'{name}: expected a {want} tensor ({what}), got {dtype_name(t)}')


def _require_2d(t, name, shape):
    if len(t.shape) != 2:
        raise ValueError(f'{name}: expected a 2-D int8 tensor {shape}, got {tuple(t.shape)}')


def _scales_view(s, name, rows, shape_2d):
    """``s`` as a 1-D view of ``rows`` fp32 scales: [rows], or the 2-D ``shape_2d`` vLLM passes ([M, 1] / [1, N])."""
    _dtype(s, name, 'float32', 'fp32 scales')
    shape = tuple(int(x) for x in s.shape)
    if shape == (rows, ):
        return view(s, name)
    if shape == shape_2d:
        ptr, dtype, _, strides = view(s, name)
        return (ptr, dtype, [rows], [strides[0] if shape_2d[1] == 1 else strides[1]])
    raise ValueError(f'{name}: expected fp32 scales of shape ({rows},) or {shape_2d}, got {shape}')


def gemm_nt(a, b, scale_a, scale_b, out=None):
    """``out = (scale_a[:, None] * scale_b[None, :]) * (a @ b.T)`` in bf16 for int8 ``a`` [M, K] and ``b`` [N, K].

    Returns ``out`` (bf16 [M, N], allocated on a's device when not given)."""
    if out is None:
        _dtype(a, 'a', 'int8', 'the activations, int8 [M, K]')
        _dtype(b, 'b', 'int8', 'the weight, int8 [N, K]')
        _require_2d(a, 'a', '[M, K]')
        _require_2d(b, 'b', '[N, K]')
        out = torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device=a.device)
    if run_kept(_PREFIX, a, b, scale_a, scale_b, out):
        return out
    _dtype(a, 'a', 'int8', 'the activations, int8 [M, K]')
    _dtype(b, 'b', 'int8', 'the weight, int8 [N, K]')
    _dtype(out, 'out', 'bfloat16', 'bf16 [M, N]')
    a_view, b_view, out_view = view(a, 'a'), view(b, 'b'), view(out, 'out')
    _require_2d(a, 'a', '[M, K]')
    _require_2d(b, 'b', '[N, K]')
    m, n = a_view[2][0], b_view[2][0]
    sa_view = _scales_view(scale_a, 'scale_a', m, (m, 1))
    sb_view = _scales_view(scale_b, 'scale_b', n, (1, n))
    device = common_device(a=a, b=b, scale_a=scale_a, scale_b=scale_b, out=out)
    num_sms = num_sms_setting()
    run_checked(kept_key(_PREFIX, a, b, scale_a, scale_b, out),
                lambda: _C.plan_int8_gemm(a_view, b_view, sa_view, sb_view, out_view, device, num_sms),
                current_stream(device), num_sms, [a_view[0], b_view[0], sa_view[0], sb_view[0], out_view[0]])
    return out
