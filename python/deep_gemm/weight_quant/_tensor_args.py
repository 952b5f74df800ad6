"""Checks of the tensors the weight_quant functions take (shape, dtype; each error names the argument) and their
CPU copies and host arrays for the library's packing calls."""
import torch

from .._checks import dtype_name, require_tensor, shape_of


_INTEGER_DTYPES = ('uint8', 'int8', 'int16', 'int32', 'int64')


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


def _bits(t):
    """A contiguous CPU bf16 / fp16 tensor's bits (as int16: what the library reads as uint16)."""
    return _cpu(t).view(torch.int16)


def _host_array(t):
    return (0, 0) if t is None else (int(t.data_ptr()), t.numel())


def _byte_array(t):
    return (0, 0) if t is None else (int(t.data_ptr()), t.numel() * t.element_size())


def _device_str(t):
    return str(t.device)
