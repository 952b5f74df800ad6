"""Scaling-factor (SF) layouts of the SM90 FP8 GEMMs, as DeepGEMM's layout functions, in plain torch ops.

Users hand scales over as fp32 row-major ``[mn, ceil(k / 128)]`` (what the ``per_*_cast_to_fp8`` helpers
return), or already in the layout a kernel reads. The C++ API (include/tilegemm/fp8_gemm.hpp) takes:
- per-token (gran_mn = 1) scales MN-major and TMA-aligned: stride(-2) == 1, stride(-1) ==
  get_tma_aligned_size(mn, 4) (mn padded to 16 bytes so each K-block column is one TMA box), groups
  stride(-3) == stride(-1) * size(-1);
- per-block (gran_mn = 128) scales with the K-block index contiguous: stride(-1) == 1.
Scales already in those layouts pass through untouched (no copy, no torch call), so the conversions cost
nothing in a loop that prepares them once. The copies use device-side ops only (CUDA-graph safe): for fp32
CUDA tensors tilegemm's layout kernel (tilegemm::get_mn_major_tma_aligned_tensor), else a torch copy.

SM90 reads fp32 scales: UE8M0 scales packed four to an int32 are an SM100 format and are refused here.
"""
from . import _C
from ._checks import dims, dtype_name, shape_of, strides_of
from ._tensor import current_stream, device_of, view


def _torch():
    import torch
    return torch


def ceil_div(x, y):
    return (x + y - 1) // y


def get_tma_aligned_size(x, element_size):
    """``x`` elements rounded up so that they fill whole 16-byte TMA units (DeepGEMM's helper)."""
    for value, name in ((x, 'x'), (element_size, 'element_size')):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f'{name}: expected an int, got {type(value).__name__} {value!r}')
    if element_size not in (1, 2, 4, 8, 16):
        raise ValueError(f'element_size: expected 1, 2, 4, 8 or 16 bytes, got {element_size}')
    if x < 0:
        raise ValueError(f'x: expected a size >= 0, got {x}')
    alignment = 16 // element_size
    return ceil_div(x, alignment) * alignment


def is_mn_major_tma_aligned(sf):
    """Whether ``sf`` ([mn, kb] or [G, mn, kb], 4-byte elements) already has the per-token kernel layout."""
    shape, strides = shape_of(sf), strides_of(sf)
    mn, kb = shape[-2], shape[-1]
    aligned = get_tma_aligned_size(mn, 4)
    if mn > 1 and strides[-2] != 1:
        return False
    if kb > 1 and strides[-1] != aligned:
        return False
    return len(shape) == 2 or shape[0] <= 1 or strides[0] == aligned * kb


def get_mn_major_tma_aligned_tensor(sf):
    """``sf`` ([mn, kb] or [G, mn, kb], float32) in the MN-major, TMA-aligned layout; the same tensor when it
    already is, else a copy whose padding rows are zero."""
    if dims(sf) not in (2, 3):
        raise ValueError(f'sf: expected a 2-D [mn, kb] or 3-D [G, mn, kb] tensor, got {dims(sf)}-D '
                         f'{tuple(shape_of(sf))}')
    if dtype_name(sf) not in ('float32', 'int32'):
        raise ValueError(f'sf: expected float32 scale factors, got {sf.dtype}')
    if is_mn_major_tma_aligned(sf):
        return sf
    torch = _torch()
    batched = sf if sf.dim() == 3 else sf.unsqueeze(0)
    groups, mn, kb = batched.shape
    aligned = get_tma_aligned_size(mn, sf.element_size())
    # [G, kb, aligned] storage seen as [G, aligned, kb]: MN contiguous, each K-block column padded.
    out = torch.zeros((groups, kb, aligned), dtype=sf.dtype, device=sf.device).transpose(1, 2)[:, :mn, :]
    if sf.device.type == 'cuda' and dtype_name(sf) == 'float32' and mn * kb > 0:
        # tilegemm's layout kernel (include/tilegemm/fp8_layout.hpp), on torch's current stream.
        device = device_of(sf, 'sf')
        _C.mn_major_tma_aligned(view(batched, 'sf'), view(out, 'sf'), device, current_stream(device))
    else:
        out.copy_(batched)  # CPU tensors and packed int32 scales: a strided torch copy
    return out if sf.dim() == 3 else out.squeeze(0)


def _recipe_granularity(recipe, is_sfa):
    """(gran_mn, gran_k) from a 3-tuple recipe + is_sfa, or from a 2-tuple recipe (is_sfa None)."""
    if not isinstance(recipe, (tuple, list)) or len(recipe) not in (2, 3) or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in recipe):
        raise ValueError(f'recipe: expected a tuple of 3 ints (gran_m_a, gran_n_b, gran_k) or of 2 ints '
                         f'(gran_mn, gran_k), got {recipe!r}')
    if len(recipe) == 3:
        if not isinstance(is_sfa, bool):
            raise ValueError(f'is_sfa: expected True or False with a 3-element recipe, got {is_sfa!r}')
        return (recipe[0] if is_sfa else recipe[1]), recipe[2]
    if is_sfa is not None:
        raise ValueError(f'is_sfa: expected None with a 2-element recipe, got {is_sfa!r}')
    return recipe[0], recipe[1]


def check_sf_shape(sf, name, mn, k, gran_mn, gran_k, num_groups):
    """ValueError naming ``name`` unless ``sf`` is fp32 [(G,) ceil(mn / gran_mn), ceil(k / gran_k)]."""
    dtype = dtype_name(sf)
    if dtype == 'int32':
        raise ValueError(f'{name}: expected float32 scale factors (SM90 FP8 reads fp32 scales; UE8M0 packed '
                         f'into int32 is the SM100 format), got {sf.dtype}')
    if dtype != 'float32':
        raise ValueError(f'{name}: expected float32 scale factors, got {sf.dtype}')
    expected = ([] if num_groups is None else [num_groups]) + [ceil_div(mn, gran_mn), ceil_div(k, gran_k)]
    if list(shape_of(sf)) != expected:
        kind = 'per-token' if gran_mn == 1 else f'per-block {gran_mn}x{gran_k}'
        raise ValueError(f'{name}: expected {kind} scale factors of shape {tuple(expected)} for '
                         f'mn={mn}, k={k}, got {tuple(shape_of(sf))}')


def to_kernel_layout(sf, name, mn, k, gran_mn, gran_k, num_groups):
    """Checks ``sf`` and returns it in the layout the C++ API reads for (gran_mn, gran_k) on SM90."""
    check_sf_shape(sf, name, mn, k, gran_mn, gran_k, num_groups)
    if gran_k != 128 or gran_mn not in (1, 128):
        raise ValueError(f'{name}: expected a (1, 128) or (128, 128) scale granularity on SM90, '
                         f'got ({gran_mn}, {gran_k})')
    if gran_mn == 1:
        return get_mn_major_tma_aligned_tensor(sf)
    # Per-block scales are tiny ([N/128, K/128]); the kernel reads them K-contiguous.
    shape, strides = shape_of(sf), strides_of(sf)
    contiguous = (shape[-1] <= 1 or strides[-1] == 1) and (shape[-2] <= 1 or strides[-2] == shape[-1]) and \
        (len(shape) == 2 or shape[0] <= 1 or strides[0] == shape[-2] * shape[-1])
    return sf if contiguous else sf.contiguous()


def transform_sf_into_required_layout(sf, mn, k, recipe, num_groups=None, is_sfa=None,
                                      disable_ue8m0_cast=False):
    """DeepGEMM's layout transform for SM90: per-token (1, 128) fp32 scales become MN-major and TMA-aligned,
    per-block (128, 128) scales K-contiguous. ``disable_ue8m0_cast`` is accepted for compatibility: SM90 keeps
    fp32 scales whatever it says (as DeepGEMM does there)."""
    for value, name in ((mn, 'mn'), (k, 'k')):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f'{name}: expected an int >= 0, got {value!r}')
    if num_groups is not None and (isinstance(num_groups, bool) or not isinstance(num_groups, int)
                                   or num_groups <= 0):
        raise ValueError(f'num_groups: expected None or an int > 0, got {num_groups!r}')
    if not isinstance(disable_ue8m0_cast, bool):
        raise TypeError(f'disable_ue8m0_cast: expected a bool, got {type(disable_ue8m0_cast).__name__}')
    gran_mn, gran_k = _recipe_granularity(recipe, is_sfa)
    return to_kernel_layout(sf, 'sf', mn, k, gran_mn, gran_k, num_groups)
