"""Argument checks that read tensor attributes only (shape, strides, dtype name), so they run without torch
and raise before any device work: TypeError for a wrong kind of object, ValueError for a wrong value, each
message starting with the argument's name."""
import importlib.util
import operator
import sys

# What the C++ bindings take: sizes and strides as int64, the data pointer as uintptr_t, the device and some
# scalars (expected_m, ks_cpu, k_alignment) as int. A value outside is named here: the binding would raise
# nanobind's "incompatible function arguments", which names no argument.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINTPTR_MAX = 2**64 - 1


def is_tensor(t):
    return all(hasattr(t, attribute) for attribute in ('data_ptr', 'stride', 'shape', 'dtype', 'device'))


def _torch_hint():
    """Where torch is not installed, what the user needs (deep_gemm installs without it; pip install .[torch])."""
    if 'torch' in sys.modules or importlib.util.find_spec('torch') is not None:
        return ''
    return ' (PyTorch is not installed: the GEMMs take torch tensors; pip install torch, or the package with [torch])'


_plain_torch = []  # [torch.Tensor, torch.nn.Parameter] once torch is imported (deep_gemm never imports it)


def _plain_torch_types():
    if not _plain_torch:
        torch = sys.modules.get('torch')
        tensor = getattr(torch, 'Tensor', None)
        parameter = getattr(getattr(torch, 'nn', None), 'Parameter', None)
        if isinstance(tensor, type) and isinstance(parameter, type):
            _plain_torch.extend((tensor, parameter))
    return _plain_torch


def require_tensor(t, name):
    """``t`` when it has a tensor's attributes with values the C++ layer can hold; TypeError/ValueError naming
    ``name`` otherwise. torch's own tensors always pass the value checks, so they skip them (about 4 µs of host time
    a tensor); other objects with those attributes (accepted too, see _tensor.py, and torch's subclasses) may not."""
    if type(t) in _plain_torch_types():
        return t
    if not is_tensor(t):
        kind = 'None' if t is None else type(t).__module__ + '.' + type(t).__qualname__
        raise TypeError(f'{name}: expected a torch.Tensor, got {kind}{_torch_hint()}')
    _require_geometry(t, name)
    return t


def _integers(read, name, what):
    """The ints ``read()`` returns (a stand-in's shape or stride() may be anything)."""
    try:
        return [operator.index(v) for v in read()]
    except TypeError:
        raise TypeError(f'{name}: expected a tensor with integer {what}') from None


# Bytes per element by dtype name, for the memory a tensor spans (1 for names not listed: fp8, int8, bool, ...).
_ELEMENT_BYTES = {'float64': 8, 'int64': 8, 'complex64': 8, 'complex128': 16, 'float32': 4, 'int32': 4,
                  'bfloat16': 2, 'float16': 2, 'int16': 2}


def _require_geometry(t, name):
    """What the sizes, strides and data pointer of every torch tensor satisfy: integers, non-negative strides
    (torch has no negative ones), a non-null pointer aligned to its elements, memory within the address space.
    A stand-in's values outside these would wrap in the C++ layer's int64 arithmetic, or pass its checks."""
    shape = _integers(lambda: t.shape, name, 'sizes')
    strides = _integers(t.stride, name, 'strides')
    if len(strides) != len(shape):
        raise ValueError(f'{name}: expected one stride per dimension, got shape {tuple(shape)} with strides '
                         f'{tuple(strides)}')
    if any(not 0 <= s <= INT64_MAX for s in shape):
        raise ValueError(f'{name}: expected sizes in [0, 2^63), got {tuple(shape)}')
    if any(not 0 <= s <= INT64_MAX for s in strides):
        raise ValueError(f'{name}: expected strides in [0, 2^63), got {tuple(strides)}')
    if not callable(t.data_ptr):
        raise TypeError(f'{name}: expected a tensor with a data_ptr() method')
    ptr = t.data_ptr()
    if isinstance(ptr, bool) or not isinstance(ptr, int):
        raise TypeError(f'{name}: expected data_ptr() to return an int address, got {type(ptr).__name__} {ptr!r}')
    element = _ELEMENT_BYTES.get(dtype_name(t), 1)
    extent = 0 if 0 in shape else (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * element
    if not 0 <= ptr <= UINTPTR_MAX or extent > INT64_MAX or ptr + extent > UINTPTR_MAX + 1:
        raise ValueError(f'{name}: expected data_ptr() in [0, 2^64) and memory that fits there, got {ptr} for '
                         f'{extent} bytes (shape {tuple(shape)}, strides {tuple(strides)})')
    if extent and (ptr == 0 or ptr % element):
        raise ValueError(f'{name}: expected a non-null data_ptr() aligned to its {element}-byte elements, got '
                         f'{ptr:#x}')


def dtype_name(t):
    """'float32', 'bfloat16', 'float8_e4m3fn', ... (str(torch.float32) is 'torch.float32')."""
    return str(t.dtype).replace('torch.', '')


def shape_of(t):
    return [int(s) for s in t.shape]


def strides_of(t):
    return [int(s) for s in t.stride()]


def dims(t):
    return len(t.shape)


def require_dtype(t, name, *allowed):
    if dtype_name(t) not in allowed:
        raise ValueError(f'{name}: expected {" or ".join(allowed)} elements, got {t.dtype}')


def require_shape(t, name, expected, what=''):
    if shape_of(t) != list(expected):
        raise ValueError(f'{name}: expected shape {tuple(expected)}{what}, got {tuple(shape_of(t))}')


def require_dims(t, name, count, what):
    if dims(t) != count:
        raise ValueError(f'{name}: expected a {count}-D tensor {what}, got {dims(t)}-D {tuple(shape_of(t))}')


def require_k_major(t, name):
    """SM90's wgmma reads FP8 operands only K-major: the last (K) dimension must be contiguous."""
    shape, strides = shape_of(t), strides_of(t)
    if shape[-1] > 1 and strides[-1] != 1:
        raise ValueError(f'{name}: expected a K-major operand (stride 1 along K, the last dimension: SM90 FP8 '
                         f'GEMMs read FP8 only K-major), got shape {tuple(shape)} with strides {tuple(strides)}')


def require_row_major(t, name):
    shape, strides = shape_of(t), strides_of(t)
    if shape[-1] > 1 and strides[-1] != 1:
        raise ValueError(f'{name}: expected contiguous rows (stride 1 along N), got strides {tuple(strides)}')


def require_no_overlap(t, name):
    """An output the kernels write: no two elements at one address (a stride of 0, rows closer than a row's
    length...), or the results of several would land on one. Sufficient test: in stride order, each dimension steps
    past everything the smaller ones span."""
    shape = shape_of(t)
    if 0 in shape:  # no elements
        return
    spanned = 0
    for stride, size in sorted((st, n) for n, st in zip(shape, strides_of(t)) if n > 1):
        if stride <= spanned:
            raise ValueError(f'{name}: expected an output whose elements do not overlap, got shape {tuple(shape)} '
                             f'with strides {tuple(strides_of(t))}')
        spanned += stride * (size - 1)


def is_contiguous(t):
    running = 1
    for size, stride in reversed(list(zip(shape_of(t), strides_of(t)))):
        if size > 1 and stride != running:
            return False
        running *= size
    return True


def require_int(value, name, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f'{name}: expected an int, got {type(value).__name__} {value!r}')
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f'>= {low}' if high is None else f'in [{low}, {high}]'
        raise ValueError(f'{name}: expected an int {bounds}, got {value}')
    return value


def require_int_sizes(values, name):
    """``values`` (a list or tuple of group sizes): ints (TypeError naming ``name``), each in [0, 2^31), the
    C++ layer's 32-bit sizes (ValueError naming ``name[g]``)."""
    if any(isinstance(k, bool) or not isinstance(k, int) for k in values):
        raise TypeError(f'{name}: expected a list of ints, got {values!r}')
    for g, k in enumerate(values):
        if not 0 <= k <= INT32_MAX:
            raise ValueError(f'{name}[{g}]: expected a size in [0, 2^31), got {k}')
    return values


def require_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f'{name}: expected a bool, got {type(value).__name__} {value!r}')
    return value


def require_compiled_dims(compiled_dims):
    # tilegemm specialises kernels on every dimension it needs; the argument is validated, not used.
    if not isinstance(compiled_dims, str):
        raise TypeError(f'compiled_dims: expected a str such as "nk", got {type(compiled_dims).__name__}')
    if any(ch not in 'mnk' for ch in compiled_dims) or len(set(compiled_dims)) != len(compiled_dims):
        raise ValueError(f'compiled_dims: expected distinct letters from "mnk", got {compiled_dims!r}')


def require_psum_hint(expected_m_for_psum_layout, use_psum_layout):
    """DeepGEMM's ``expected_m_for_psum_layout``: None, or with the prefix-sum layout a positive row-count hint."""
    if expected_m_for_psum_layout is None:
        return
    if not use_psum_layout:
        raise ValueError('expected_m_for_psum_layout: expected None without use_psum_layout, '
                         f'got {expected_m_for_psum_layout!r}')
    if isinstance(expected_m_for_psum_layout, bool) or not isinstance(expected_m_for_psum_layout, int) \
            or expected_m_for_psum_layout <= 0:
        raise ValueError('expected_m_for_psum_layout: expected a positive int (a row-count hint), '
                         f'got {expected_m_for_psum_layout!r}')
