"""weight_quant's GPU calls as torch.library custom ops (``torch.ops.deep_gemm.wq_gemm``,
``wq_m_grouped_gemm_contiguous``, ``wq_m_grouped_gemm_masked``, ``wq_dequantize``), so that torch.compile and
torch.export put a call into their graph as one op, with a fake implementation that checks shapes and dtypes and
declares that ``out`` is written, instead of breaking the graph at the first data pointer.

An op's schema takes tensors and plain values only, so a PackedWeight goes in flattened: its four arrays, then its
layout fields (:data:`_FIELDS`), then the call's other arguments, ``out`` last. The ops register when _gpu_calls is
imported (by ``import deep_gemm.weight_quant``, which imports torch anyway); each plain function, while
``torch.compiler.is_compiling()``, calls the ``traced_*`` function here instead, and the op's implementation rebuilds
the PackedWeight (its field checks are cheap) and calls the plain function again, eagerly.
"""
import types

import torch

from ._weight import PackedWeight, _require_weight

# A PackedWeight's fields in the ops' order: the arrays, then the layout.
_FIELDS = ('data', 'scales', 'zeros', 'channel_scales', 'format', 'act_dtype', 'n', 'k', 'group_size', 'has_zeros',
           'exp_shift', 'n_pad', 'k_pad', 'num_experts')
_WEIGHT = ('Tensor data, Tensor? scales, Tensor? zeros, Tensor? channel_scales, str format, ScalarType act_dtype, '
           'int n, int k, int group_size, bool has_zeros, int exp_shift, int n_pad, int k_pad, int num_experts')
_SCHEMAS = {
    'wq_gemm': f'({_WEIGHT}, Tensor a, Tensor(out!) out) -> ()',
    'wq_m_grouped_gemm_contiguous': f'({_WEIGHT}, Tensor a, Tensor grouped_layout, Tensor(out!) out) -> ()',
    'wq_m_grouped_gemm_masked': f'({_WEIGHT}, Tensor a, Tensor masked_m, int expected_m, Tensor(out!) out) -> ()',
    'wq_dequantize': f'({_WEIGHT}, Tensor(out!) out) -> ()',
}
_ops = {}  # name -> torch.ops.deep_gemm.<name>


def _weight_values(w):
    # In _FIELDS' order. Under Dynamo the arrays become graph inputs and the layout fields guarded constants.
    return (w.data, w.scales, w.zeros, w.channel_scales, w.format, w.act_dtype, w.n, w.k, w.group_size, w.has_zeros,
            w.exp_shift, w.n_pad, w.k_pad, w.num_experts)


def _split(values):
    """(the PackedWeight's fields as attributes, the call's other arguments) of an op's arguments."""
    count = len(_FIELDS)
    return types.SimpleNamespace(**dict(zip(_FIELDS, values[:count]))), values[count:]


# ---- while torch traces: the plain functions' stand-ins --------------------------------------------------------
# A default ``out`` is allocated here as the eager path does (the op writes it, so it must exist before the call).

def traced_gemm(a, w, out):
    _require_weight(w)
    if out is None:
        out = torch.empty((_size(a, 2, 0), w.n), dtype=a.dtype, device=a.device)
    _ops['wq_gemm'](*_weight_values(w), a, out)
    return out


def traced_m_grouped_gemm_contiguous(a, w, grouped_layout, out):
    _require_weight(w)
    if out is None:
        out = torch.empty((_size(a, 2, 0), w.n), dtype=a.dtype, device=a.device)
    _ops['wq_m_grouped_gemm_contiguous'](*_weight_values(w), a, grouped_layout, out)
    return out


def traced_m_grouped_gemm_masked(a, w, masked_m, expected_m, out):
    _require_weight(w)
    if out is None:
        out = torch.empty((_size(a, 3, 0), _size(a, 3, 1), w.n), dtype=a.dtype, device=a.device)
    _ops['wq_m_grouped_gemm_masked'](*_weight_values(w), a, masked_m, expected_m, out)
    return out


def traced_dequantize(w, out):
    _require_weight(w)
    if out is None:
        out = torch.empty((w.n, w.k), dtype=w.act_dtype, device=w.data.device)
    _ops['wq_dequantize'](*_weight_values(w), out)
    return out


def _size(a, ndim, dim):
    """a's size ``dim`` for a default ``out``; 1 where a has not ``ndim`` dimensions (the fake then names a)."""
    return a.shape[dim] if a.dim() == ndim else 1


# ---- fake implementations: shapes and dtypes, no data ----------------------------------------------------------
# Written apart from the eager checks (which turn sizes into ints for the library): under torch.compile with dynamic
# shapes the sizes here are symbols, compared without int(), so a dynamic M stays dynamic. The weight's own fields
# are not re-checked here: PackedWeight checked them when it was built outside the traced code, or (built while
# tracing, as by w.expert(i)) the op's implementation checks them when it rebuilds the weight. What is checked here is
# how the call's tensors fit the weight.

def _require(ok, message):
    if not ok:
        raise ValueError(message)


def _name(dtype):
    return str(dtype).replace('torch.', '')


def _dtype(t, name, allowed, what=''):
    _require(_name(t.dtype) in allowed, f'{name}: expected {" or ".join(allowed)} elements{what}, got {t.dtype}')


def _shape(t, name, expected, what=''):
    _require(tuple(t.shape) == tuple(expected), f'{name}: expected shape {tuple(expected)}{what}, got '
             f'{tuple(t.shape)}')


def _on(t, name, device, whose):
    _require(t.device == device, f'{name}: expected a tensor on {whose} device {device}, got one on {t.device}')


def _single(w):
    _require(w.num_experts == 1, f'w: expected a single weight (num_experts 1), got a grouped weight of '
             f'{w.num_experts} experts: pass one expert, w.expert(i)')


def _activations(a, w, ndim, what):
    """a's shape, once it is a ``ndim``-D tensor of w.act_dtype with K = w.k on the weight's device."""
    shape = tuple(a.shape)
    _require(len(shape) == ndim, f'a: expected a {ndim}-D tensor {what}, got {len(shape)}-D {shape}')
    _dtype(a, 'a', (_name(w.act_dtype), ), ' (the weight\'s act_dtype)')
    _require(shape[-1] == w.k, f'a: expected K = {w.k} (the weight\'s k) as its last size, got shape {shape}')
    _require(w.data.device == a.device, f'w: expected a packed weight on a\'s device {a.device} (w.to(...)), got '
             f'one on {w.data.device}')
    return shape


def _output(out, a, shape, what):
    _dtype(out, 'out', ('bfloat16', 'float16', 'float32'))
    _shape(out, 'out', shape, f' ({what})')
    _on(out, 'out', a.device, 'a\'s')


def _index(t, name, shape, a, what):
    _dtype(t, name, ('int32', ), f' ({what})')
    _shape(t, name, shape)
    _on(t, name, a.device, 'a\'s')


def _fake_gemm(*values):
    w, (a, out) = _split(values)
    _single(w)
    m, _ = _activations(a, w, 2, '[M, K] of activations')
    _output(out, a, (m, w.n), '[M, N]')


def _fake_m_grouped_gemm_contiguous(*values):
    w, (a, grouped_layout, out) = _split(values)
    m, _ = _activations(a, w, 2, '[M, K] of every expert\'s rows')
    _index(grouped_layout, 'grouped_layout', (m, ), a, 'the expert of each row, -1 for padding')
    _output(out, a, (m, w.n), '[M, N]')


def _fake_m_grouped_gemm_masked(*values):
    w, (a, masked_m, expected_m, out) = _split(values)
    experts, m_max, _ = _activations(a, w, 3, '[E, M_max, K] of each expert\'s rows')
    _require(w.num_experts == experts, f'w: expected a grouped weight of {experts} experts (one per slice of a '
             f'{tuple(a.shape)}), got num_experts {w.num_experts}')
    _index(masked_m, 'masked_m', (experts, ), a, 'the valid rows of each expert')
    _require(expected_m >= 1, f'expected_m: expected an int >= 1 (the typical rows per expert), got {expected_m}')
    _output(out, a, (experts, m_max, w.n), '[E, M_max, N]')


def _fake_dequantize(*values):
    w, (out, ) = _split(values)
    _single(w)
    _dtype(out, 'out', (_name(w.act_dtype), ), ' (the weight\'s act_dtype)')
    _shape(out, 'out', (w.n, w.k), ' ([N, K])')
    _on(out, 'out', w.data.device, 'w\'s')


# ---- registration ----------------------------------------------------------------------------------------------

def _packed(values):
    return PackedWeight(**dict(zip(_FIELDS, values)))


def register(gemm, m_grouped_gemm_contiguous, m_grouped_gemm_masked, dequantize):
    """Registers the four ops over the plain functions given (once: _gpu_calls calls this when it is imported)."""
    if _ops:
        return
    count = len(_FIELDS)
    runs = {
        'wq_gemm': lambda *v: gemm(v[count], _packed(v[:count]), v[count + 1]),
        'wq_m_grouped_gemm_contiguous':
            lambda *v: m_grouped_gemm_contiguous(v[count], _packed(v[:count]), v[count + 1], v[count + 2]),
        'wq_m_grouped_gemm_masked':
            lambda *v: m_grouped_gemm_masked(v[count], _packed(v[:count]), v[count + 1], v[count + 2], v[count + 3]),
        'wq_dequantize': lambda *v: dequantize(_packed(v[:count]), v[count]),
    }
    fakes = {
        'wq_gemm': _fake_gemm, 'wq_m_grouped_gemm_contiguous': _fake_m_grouped_gemm_contiguous,
        'wq_m_grouped_gemm_masked': _fake_m_grouped_gemm_masked, 'wq_dequantize': _fake_dequantize,
    }
    for name, schema in _SCHEMAS.items():
        custom = torch.library.custom_op(f'deep_gemm::{name}', runs[name], mutates_args=('out', ), schema=schema)
        custom.register_fake(fakes[name])
        _ops[name] = getattr(torch.ops.deep_gemm, name)
