"""Argument checks that read tensor attributes only (shape, strides, dtype name), so they run without torch
and raise before any device work: TypeError for a wrong kind of object, ValueError for a wrong value, each
message starting with the argument's name."""


def is_tensor(t):
    return all(hasattr(t, attribute) for attribute in ('data_ptr', 'stride', 'shape', 'dtype', 'device'))


def require_tensor(t, name):
    if not is_tensor(t):
        kind = 'None' if t is None else type(t).__module__ + '.' + type(t).__qualname__
        raise TypeError(f'{name}: expected a torch.Tensor, got {kind}')
    return t


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


def is_contiguous(t):
    running = 1
    for size, stride in reversed(list(zip(shape_of(t), strides_of(t)))):
        if size > 1 and stride != running:
            return False
        running *= size
    return True


def require_int(value, name, low=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f'{name}: expected an int, got {type(value).__name__} {value!r}')
    if low is not None and value < low:
        raise ValueError(f'{name}: expected an int >= {low}, got {value}')
    return value


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
