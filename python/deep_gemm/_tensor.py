"""Reads what the C++ layer needs from torch tensors (pointer, dtype, shape, strides, device, stream).

torch is never imported here: a tensor's attributes are read directly, and the dtype is recognised by its
name (``str(torch.bfloat16) == 'torch.bfloat16'``), so importing deep_gemm neither needs torch nor
initialises CUDA. Objects exposing the same attributes (``data_ptr()``, ``shape``, ``stride()``, ``dtype``,
``device``) are accepted too, with the values a tensor can have (_checks.require_tensor: integer sizes, non-negative
strides, a non-null pointer aligned to its elements...), which torch's tensors always have.
"""
import sys

from . import _C
from ._checks import INT32_MAX, require_tensor

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


def device_of(t, name):
    """The CUDA device index of tensor ``t`` (ValueError naming ``name`` when it is not on a GPU)."""
    device = getattr(t, 'device', None)
    if getattr(device, 'type', None) != 'cuda':
        raise ValueError(f'{name}: expected a CUDA tensor, got a tensor on {device}')
    index = 0 if device.index is None else device.index
    # torch's indices are small ints; the C++ layer takes an int, and a negative one would mean "no device".
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= INT32_MAX:
        raise ValueError(f'{name}: expected a CUDA device index in [0, 2^31), got {index!r}')
    return index


def view(t, name):
    """(data_ptr, dtype code, shape, strides) of ``t``; TypeError/ValueError naming ``name`` on bad input."""
    dtype = _dtype_code(t, name)
    shape = _kernel_sizes([int(s) for s in t.shape], name)
    if not 1 <= len(shape) <= 4:
        raise ValueError(f'{name}: expected a tensor of 1 to 4 dimensions, got {len(shape)} ({tuple(shape)})')
    device_of(t, name)
    return (int(t.data_ptr()), dtype, shape, [int(s) for s in t.stride()])


def raw_bytes_view(t, name):
    """``view`` of a torch.uint8 tensor of raw bytes (DeepGEMM's fused KV cache: fp8 values and fp32 scales) under
    the int8 code. tilegemm's DType has no unsigned byte, and the kernels only move these bytes; keeping uint8 out of
    ``view`` keeps every other binding refusing it by name rather than reading it as int8."""
    require_tensor(t, name)
    if str(t.dtype) != 'torch.uint8':
        raise ValueError(f'{name}: expected a torch.uint8 tensor of raw bytes, got {t.dtype}')
    shape = _kernel_sizes([int(s) for s in t.shape], name)
    if not 1 <= len(shape) <= 4:
        raise ValueError(f'{name}: expected a tensor of 1 to 4 dimensions, got {len(shape)} ({tuple(shape)})')
    device_of(t, name)
    return (int(t.data_ptr()), _CODES['int8'], shape, [int(s) for s in t.stride()])


def flat_view(t, name, numel):
    """The view of contiguous ``t``'s first ``numel`` elements as a 1-D tensor (no copy)."""
    dtype = _dtype_code(t, name)
    device_of(t, name)
    return (int(t.data_ptr()), dtype, _kernel_sizes([numel], name), [1])


def _kernel_sizes(shape, name):
    """Every size below 2^31: the kernels and the library take M, N, K and group counts as 32-bit ints, and a size
    past that would wrap there rather than be named."""
    if any(s > INT32_MAX for s in shape):
        raise ValueError(f'{name}: expected sizes below 2^31 (the kernels\' 32-bit sizes), got {tuple(shape)}')
    return shape


def _dtype_code(t, name):
    require_tensor(t, name)
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TypeError(f'{name}: expected a tensor of bfloat16, float32, int32 or float8 elements, '
                        f'got {t.dtype}')
    return _CODES[dtype]


def transposed(v, name):
    """The view with its last two dimensions swapped (DeepGEMM's ``.T`` / ``.mT`` on an operand)."""
    ptr, dtype, shape, strides = require_matrices(v, name)
    return (ptr, dtype, shape[:-2] + [shape[-1], shape[-2]], strides[:-2] + [strides[-1], strides[-2]])


def require_matrices(v, name):
    """``v`` when it is a [rows, cols] or [B, rows, cols] view, what the GEMMs take and transpose."""
    if len(v[2]) not in (2, 3):
        raise ValueError(f'{name}: expected a 2-D [rows, cols] or 3-D [B, rows, cols] tensor, got {len(v[2])}-D '
                         f'{tuple(v[2])}')
    return v


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
        _C.set_stream_source(_current_stream)  # the kept-plan path (_C.run_kept) now asks torch directly
    return _current_stream(device)


_C.set_stream_source(current_stream)
