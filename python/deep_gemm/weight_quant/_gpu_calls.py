"""The GPU calls on torch's current stream: gemm, the M-grouped GEMMs of MoE experts (m_grouped_gemm_contiguous,
m_grouped_gemm_masked) and dequantize; and plan, how a GEMM of a shape runs.

While torch traces (torch.compile, torch.export) the four calls hand over to their custom ops (_torch_ops), which
call them again eagerly when the graph runs."""
import torch

from .. import _C
from .._checks import INT32_MAX, dtype_name, require_int, require_tensor, shape_of
from .._config import num_sms_setting
from .._tensor import current_stream, device_of
from . import _torch_ops
from ._tensor_args import _require_2d, _require_dtype
from ._weight import (_CODES, _SHORT, _WEIGHT_RENAMES, _layout_args, _packed_layout, _require_experts,
                      _require_single, _require_weight)


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


# The one question the eager path pays for being traceable (tens of nanoseconds).
_compiling = torch.compiler.is_compiling
_GEMM_RENAMES = [('d', 'out')]
_GROUPED_INSTEAD = ', or use m_grouped_gemm_contiguous / m_grouped_gemm_masked'


def gemm(a, w, out=None):
    """``out = a @ dequant(w).T``: ``a`` [M, K] of w.act_dtype on the GPU, ``out`` [M, N] bf16, fp16 or fp32 on the
    same device (default: a new tensor of a's dtype). Runs on torch's current stream; returns ``out``. One weight (a
    grouped weight's experts: :func:`m_grouped_gemm_contiguous` / :func:`m_grouped_gemm_masked`, or w.expert(i))."""
    if _compiling():
        return _torch_ops.traced_gemm(a, w, out)
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
    if _compiling():
        return _torch_ops.traced_m_grouped_gemm_contiguous(a, w, grouped_layout, out)
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
    if _compiling():
        return _torch_ops.traced_m_grouped_gemm_masked(a, w, masked_m, expected_m, out)
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
    if _compiling():
        return _torch_ops.traced_dequantize(w, out)
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


# The ops' implementations: these functions, called eagerly when a compiled graph runs.
_torch_ops.register(gemm, m_grouped_gemm_contiguous, m_grouped_gemm_masked, dequantize)

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
