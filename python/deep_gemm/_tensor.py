"""Reads what the C++ layer needs from torch tensors (pointer, dtype, shape, strides, device, stream).

torch is never imported here: a tensor's attributes are read directly, and the dtype is recognised by its
name (``str(torch.bfloat16) == 'torch.bfloat16'``), so importing deep_gemm neither needs torch nor
initialises CUDA. Objects exposing the same attributes (``data_ptr()``, ``shape``, ``stride()``, ``dtype``,
``device``) are accepted too.
"""
import sys

from . import _C

# torch dtype name -> tilegemm DType code (include/tilegemm/dtype.hpp names).
_TORCH_DTYPES = {
    'torch.float32': 'fp32',
    'torch.bfloat16': 'bf16',
    'torch.float16': 'fp16',
    'torch.float8_e4m3fn': 'fp8',
    'torch.float8_e5m2': 'fp8e5m2',
    'torch.int8': 'int8',
    'torch.int32': 'int32',
}
_CODES = _C.dtype_codes()


def _type_name(x):
    return type(x).__module__ + '.' + type(x).__qualname__ if x is not None else 'None'


def device_of(t, name):
    """The CUDA device index of tensor ``t`` (ValueError naming ``name`` when it is not on a GPU)."""
    device = getattr(t, 'device', None)
    if getattr(device, 'type', None) != 'cuda':
        raise ValueError(f'{name}: expected a CUDA tensor, got a tensor on {device}')
    index = device.index
    return 0 if index is None else int(index)


def view(t, name):
    """(data_ptr, dtype code, shape, strides) of ``t``; TypeError/ValueError naming ``name`` on bad input."""
    for attribute in ('data_ptr', 'stride', 'shape', 'dtype', 'device'):
        if not hasattr(t, attribute):
            raise TypeError(f'{name}: expected a torch.Tensor, got {_type_name(t)}')
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TypeError(f'{name}: expected a tensor of bfloat16, float32, int32 or float8 elements, '
                        f'got {t.dtype}')
    shape = [int(s) for s in t.shape]
    if not 1 <= len(shape) <= 4:
        raise ValueError(f'{name}: expected a tensor of 1 to 4 dimensions, got {len(shape)} ({tuple(shape)})')
    device_of(t, name)
    return (int(t.data_ptr()), _CODES[dtype], shape, [int(s) for s in t.stride()])


def transposed(v):
    """The view with its last two dimensions swapped (DeepGEMM's ``.T`` / ``.mT`` on an operand)."""
    ptr, dtype, shape, strides = v
    return (ptr, dtype, shape[:-2] + [shape[-1], shape[-2]], strides[:-2] + [strides[-1], strides[-2]])


def common_device(**tensors):
    """The device index shared by every given tensor (ValueError naming the first one that differs)."""
    device = None
    for name, t in tensors.items():
        if t is None:
            continue
        index = device_of(t, name)
        if device is None:
            device = index
        elif index != device:
            raise ValueError(f'{name}: expected a tensor on cuda:{device} like the other operands, '
                             f'got one on cuda:{index}')
    return device


def signature(t):
    """What the checks read from tensor ``t``: (shape, strides, dtype, device index, -1 off the GPU).

    torch's own accessors, each read once; objects without ``get_device`` (stand-ins) give their ``device``."""
    try:
        device = t.get_device()
    except AttributeError:
        device = getattr(t, 'device', None)
        device = (device.index or 0) if getattr(device, 'type', None) == 'cuda' else -1
    return t.shape, t.stride(), t.dtype, device


def _stream_getter():
    """device index -> torch's current stream handle on it, or None while torch has no usable CUDA runtime."""
    torch = sys.modules.get('torch')
    if torch is None:
        return None
    if not torch.cuda.is_available():
        return lambda device: 0
    raw = getattr(torch._C, '_cuda_getCurrentRawStream', None)  # an int, without building a Stream object
    if raw is not None:
        return raw
    return lambda device: int(torch.cuda.current_stream(device).cuda_stream)


_current_stream = None


def current_stream(device):
    """torch's current stream on ``device`` as an integer handle (the one under capture in a CUDA graph).

    Without a usable torch CUDA runtime (duck-typed tensors, a machine without a GPU) this is 0, the legacy
    default stream; the C++ layer then still validates the arguments before it reports the missing GPU.
    """
    global _current_stream
    if _current_stream is None:
        _current_stream = _stream_getter()
        if _current_stream is None:  # torch not imported (yet): ask again next call
            return 0
    return _current_stream(device)
