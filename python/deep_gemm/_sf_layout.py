"""Scaling-factor (SF) layouts of the FP8 GEMMs: DeepGEMM's layout functions, on tilegemm's JIT layout kernels.

Users hand scales over as fp32 row-major ``[mn, ceil(k / 128)]`` (what the ``per_*_cast_to_fp8`` helpers
return), or already in the layout a kernel reads. The C++ API (include/tilegemm/fp8_gemm.hpp) takes:
- per-token (gran_mn = 1) scales MN-major and TMA-aligned: stride(-2) == 1, stride(-1) ==
  get_tma_aligned_size(mn, 4) (mn padded to 16 bytes so each K-block column is one TMA box), groups
  stride(-3) == stride(-1) * size(-1);
- per-block (gran_mn = 128) scales with the K-block index contiguous: stride(-1) == 1.

The public functions behave as DeepGEMM's: the same tensor back when it already has the layout (DeepGEMM's
exact stride test), else a new one allocated with ``torch.empty_strided`` and DeepGEMM's strides (padding rows
are not written, as there). CUDA tensors are moved by tilegemm's layout kernels (include/tilegemm/fp8_layout.hpp,
any input strides, on torch's current stream: CUDA-graph safe); CPU tensors by torch ops. The UE8M0 packers are
the SM100 layouts; SM90's GEMMs read fp32 scales, so the GEMM path (``to_kernel_layout``) refuses int32 scales.
A function that makes a new tensor needs torch's tensors (a stand-in with a tensor's attributes raises TypeError);
scales returned as they are need not be.
"""
import sys

from . import _C
from ._checks import INT32_MAX, dims, dtype_name, is_contiguous, require_bool, require_tensor, shape_of, strides_of
from ._config import get_mk_alignment_for_contiguous_layout
from ._tensor import current_stream, device_of, view

_MAX_K_GROUPS = 128  # the K-grouped packer reads the group sizes with one warp, four per lane


def _torch_of(t, name):
    """torch, once ``t`` is one of its tensors: the functions that make a new tensor (and move CPU scales with
    torch ops) need torch's, other objects with a tensor's attributes cannot go there."""
    torch = sys.modules.get('torch')  # a torch tensor exists only once torch is imported
    if torch is None or not isinstance(t, torch.Tensor):
        raise TypeError(f'{name}: expected a torch.Tensor (a new tensor is made with torch), got '
                        f'{type(t).__module__}.{type(t).__qualname__}')
    return torch


def ceil_div(x, y):
    return (x + y - 1) // y


def _require_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f'{name}: expected an int, got {type(value).__name__} {value!r}')
    return value


def get_tma_aligned_size(x, element_size):
    """``x`` elements rounded up so that they fill whole 16-byte TMA units (DeepGEMM's helper)."""
    _require_int(x, 'x')
    _require_int(element_size, 'element_size')
    if element_size not in (1, 2, 4, 8, 16):
        raise ValueError(f'element_size: expected 1, 2, 4, 8 or 16 bytes, got {element_size}')
    if x < 0:
        raise ValueError(f'x: expected a size >= 0, got {x}')
    alignment = 16 // element_size
    return ceil_div(x, alignment) * alignment


def _require_sf(sf, name='sf'):
    """A float32 [mn, kb] or [G, mn, kb] tensor (TypeError / ValueError naming ``name``)."""
    require_tensor(sf, name)
    if dims(sf) not in (2, 3):
        raise ValueError(f'{name}: expected a 2-D [mn, kb] or 3-D [G, mn, kb] tensor, got {dims(sf)}-D '
                         f'{tuple(shape_of(sf))}')
    if dtype_name(sf) != 'float32':
        raise ValueError(f'{name}: expected float32 scale factors, got {sf.dtype}')


def _batched_shape(sf):
    shape = shape_of(sf)
    return ([1] + shape) if len(shape) == 2 else shape


def _has_deepgemm_layout(sf):
    """DeepGEMM's test for returning ``sf`` as it is: every stride exactly the MN-major TMA-aligned one, also
    along dimensions of size 1 (so a [mn, 1] tensor with strides (1, 1) is copied into strides (1, aligned))."""
    _, mn, kb = _batched_shape(sf)
    strides = strides_of(sf)
    aligned = get_tma_aligned_size(mn, 4)
    return strides[-2] == 1 and strides[-1] == aligned and (len(strides) == 2 or strides[0] == aligned * kb)


def is_mn_major_tma_aligned(sf):
    """Whether ``sf`` already has the layout the C++ API reads; unlike DeepGEMM's test, strides along
    dimensions of size 1 do not matter (the kernels never step along them)."""
    shape, strides = shape_of(sf), strides_of(sf)
    mn, kb = shape[-2], shape[-1]
    aligned = get_tma_aligned_size(mn, 4)
    if mn > 1 and strides[-2] != 1:
        return False
    if kb > 1 and strides[-1] != aligned:
        return False
    return len(shape) == 2 or shape[0] <= 1 or strides[0] == aligned * kb


def _launch_target(t, name):
    device = device_of(t, name)
    return device, current_stream(device)


def _mn_major_empty(sf, cols, dtype):
    """DeepGEMM's output for ``sf`` ([mn, kb] or [G, mn, kb]): [(G,) mn, cols] with strides ([cols * aligned,] 1,
    aligned), padding rows unwritten, on sf's device."""
    shape = shape_of(sf)
    mn = shape[-2]
    aligned = get_tma_aligned_size(mn, 4)
    if len(shape) == 2:
        return sf.new_empty_strided((mn, cols), (1, aligned), dtype=dtype)
    return sf.new_empty_strided((shape[0], mn, cols), (cols * aligned, 1, aligned), dtype=dtype)


def get_mn_major_tma_aligned_tensor(sf):
    """``sf`` (float32 [mn, kb] or [G, mn, kb]) in the MN-major, TMA-aligned layout: ``sf`` itself when it already
    is (DeepGEMM's exact stride test), else a new tensor with strides ([kb * aligned,] 1, aligned)."""
    _require_sf(sf)
    if _has_deepgemm_layout(sf):
        return sf
    _torch_of(sf, 'sf')
    out = _mn_major_empty(sf, shape_of(sf)[-1], sf.dtype)
    if out.numel() > 0:
        if sf.device.type == 'cuda':
            _C.sf_transpose(view(sf, 'sf'), view(out, 'out'), *_launch_target(sf, 'sf'))
        else:
            out.copy_(sf)
    return out


def _packed_words(torch, exponents):
    """int32 words of four exponent bytes (byte b from exponents[..., 4p + b], missing ones 0) along the last
    dimension; the arithmetic runs in int64 so that a top byte >= 128 wraps into the sign as the kernel's does."""
    words = exponents.shape[-1] // 4 + (exponents.shape[-1] % 4 > 0)
    padded = torch.zeros(exponents.shape[:-1] + (4 * words, ), dtype=torch.int64, device=exponents.device)
    padded[..., :exponents.shape[-1]] = exponents
    quads = padded.view(exponents.shape[:-1] + (words, 4))
    packed = quads[..., 0] | (quads[..., 1] << 8) | (quads[..., 2] << 16) | (quads[..., 3] << 24)
    return torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)


def _psum_rows(torch, psum_layout, mn, m_alignment, device):
    """Which of the mn rows belong to a group of the prefix-sum layout (group g spans
    [align(end[g - 1], m_alignment), end[g]), group 0 starts at 0)."""
    ends = psum_layout.to(device=device, dtype=torch.int64)
    previous = torch.cat([ends.new_zeros(1), ends[:-1]])
    starts = (previous + m_alignment - 1) // m_alignment * m_alignment
    rows = torch.arange(mn, device=device).unsqueeze(1)
    return ((rows >= starts.unsqueeze(0)) & (rows < ends.unsqueeze(0))).any(dim=1)


def _require_psum_layout(psum_layout, groups):
    require_tensor(psum_layout, 'psum_layout')
    if dtype_name(psum_layout) != 'int32' or dims(psum_layout) != 1 or shape_of(psum_layout)[0] == 0 or \
            not is_contiguous(psum_layout):
        raise ValueError(f'psum_layout: expected a contiguous 1-D int32 tensor of group end rows, at least one, '
                         f'got {psum_layout.dtype} {tuple(shape_of(psum_layout))} with strides '
                         f'{tuple(strides_of(psum_layout))}')
    if groups != 1:
        raise ValueError(f'psum_layout: expected None with {groups} groups of scales (the prefix-sum layout '
                         f'describes the rows of one [mn, kb] tensor), got a tensor')


def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None):
    """``sf`` (float32 [mn, kb] or [G, mn, kb] UE8M0 scales) packed four exponents per int32, MN-major and
    TMA-aligned: int32 [(G,) mn, ceil(kb / 4)] with strides ([ceil(kb / 4) * aligned,] 1, aligned), byte b of word
    p the exponent of K block 4p + b. Exponent bits are taken as they are (no UE8M0 check), as DeepGEMM does.
    With ``psum_layout`` (int32 group end rows of an M-grouped A) the rows between groups pack to 0."""
    _require_sf(sf)
    groups, mn, kb = _batched_shape(sf)
    if psum_layout is not None:
        _require_psum_layout(psum_layout, groups)
    torch = _torch_of(sf, 'sf')
    if psum_layout is not None and sf.device.type != 'cuda':
        _torch_of(psum_layout, 'psum_layout')  # read with torch ops here
    out = _mn_major_empty(sf, ceil_div(kb, 4), torch.int32)
    alignment = get_mk_alignment_for_contiguous_layout()
    if groups * mn * kb > 0:
        if sf.device.type == 'cuda':
            psum = None if psum_layout is None else view(psum_layout, 'psum_layout')
            _C.sf_pack_ue8m0(view(sf, 'sf'), view(out, 'out'), psum, alignment, *_launch_target(sf, 'sf'))
        else:
            exponents = (sf.view(torch.int32).to(torch.int64) >> 23) & 0xFF
            if psum_layout is not None:
                exponents = exponents * _psum_rows(torch, psum_layout, mn, alignment, sf.device).view(mn, 1)
            out.copy_(_packed_words(torch, exponents))
    return out


def _k_grouped_packed_rows(sf_k, num_groups, ks_cpu, gran_k, use_psum_layout):
    """Rows of the packed output, from the host's group sizes (DeepGEMM's sizing): Σ ceil(k / (4 gran_k)), or
    without them (psum only) the upper bound (sf_k + 3 G) / 4."""
    if ks_cpu is not None and not isinstance(ks_cpu, (list, tuple)):
        raise TypeError(f'ks_cpu: expected None or a list of ints, got {type(ks_cpu).__name__} {ks_cpu!r}')
    if not ks_cpu:
        if not use_psum_layout:
            raise ValueError(f'ks_cpu: expected the {num_groups} group K sizes (a list of ints) without '
                             f'use_psum_layout, got {ks_cpu!r}')
        return (sf_k + num_groups * 3) // 4
    if any(isinstance(k, bool) or not isinstance(k, int) for k in ks_cpu):
        raise TypeError(f'ks_cpu: expected a list of ints, got {ks_cpu!r}')
    if len(ks_cpu) != num_groups:
        raise ValueError(f'ks_cpu: expected {num_groups} sizes (one per entry of grouped_layout), got {len(ks_cpu)}')
    for g, k in enumerate(ks_cpu):
        if k < 0:
            raise ValueError(f'ks_cpu[{g}]: expected a K size >= 0, got {k}')
    if not use_psum_layout:
        rows = sum(ceil_div(k, gran_k) for k in ks_cpu)
        if rows != sf_k:
            raise ValueError(f'sf: expected {rows} K-block rows (Σ ceil(k / {gran_k}) over ks_cpu), got {sf_k}')
    return sum(ceil_div(k, gran_k * 4) for k in ks_cpu)


def _k_grouped_pack_on_host(torch, sf, layout, gran_k, k_alignment, use_psum_layout, out):
    """The packing of sf_k_grouped_pack (sf_layout.cuh) with torch ops, from the group sizes read back."""
    row, previous, packed_rows = 0, 0, []
    for value in layout:
        start = ceil_div(previous, k_alignment) * k_alignment if use_psum_layout else 0
        previous = value
        rows = ceil_div(value - start, gran_k) if value > start else 0
        block = sf[row:row + rows]
        exponents = torch.zeros((ceil_div(rows, 4) * 4, sf.shape[1]), dtype=torch.int64, device=sf.device)
        exponents[:block.shape[0]] = (block.view(torch.int32).to(torch.int64) >> 23) & 0xFF
        packed_rows.append(_packed_words(torch, exponents.T).T)
        row += rows
    packed = torch.cat(packed_rows)[:out.shape[0]]
    out[:packed.shape[0]] = packed


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment,
                                                           use_psum_layout=False):
    """DeepGEMM's K-grouped SM100 packing: ``sf`` float32 [sf_k, mn] (the K-block rows of every group one after
    another, MN contiguous) into int32 [packed_sf_k, mn], each group's rows packed four per word. The group sizes
    the kernel uses come from ``grouped_layout`` on the device (K sizes, or their prefix-sum ends with
    ``use_psum_layout``); ``ks_cpu`` (host K sizes) only sizes the output, and may be None or empty with
    ``use_psum_layout`` (then an upper bound of rows is allocated, the unowned ones left unwritten)."""
    require_tensor(sf, 'sf')
    if dims(sf) != 2 or dtype_name(sf) != 'float32' or not is_contiguous(sf):
        raise ValueError(f'sf: expected a contiguous float32 [sf_k, mn] tensor, got {sf.dtype} '
                         f'{tuple(shape_of(sf))} with strides {tuple(strides_of(sf))}')
    sf_k, mn = shape_of(sf)
    if mn % 4:
        raise ValueError(f'sf: expected mn (its last dimension) a multiple of 4, got {mn}')
    require_tensor(grouped_layout, 'grouped_layout')
    num_groups = 1
    for s in shape_of(grouped_layout):
        num_groups *= s
    if dtype_name(grouped_layout) != 'int32' or not is_contiguous(grouped_layout) or \
            not 1 <= num_groups <= _MAX_K_GROUPS:
        raise ValueError(f'grouped_layout: expected a contiguous int32 tensor of 1 to {_MAX_K_GROUPS} group '
                         f'entries, got {grouped_layout.dtype} {tuple(shape_of(grouped_layout))} with strides '
                         f'{tuple(strides_of(grouped_layout))}')
    _require_int(gran_k, 'gran_k')
    if gran_k not in (32, 128):
        raise ValueError(f'gran_k: expected 32 or 128, got {gran_k}')
    _require_int(k_alignment, 'k_alignment')
    require_bool(use_psum_layout, 'use_psum_layout')
    # The C++ layer takes it as an int.
    if k_alignment % 32 or not 0 <= k_alignment <= INT32_MAX or (use_psum_layout and k_alignment == 0):
        raise ValueError(f'k_alignment: expected a multiple of 32 in [0, 2^31) (positive with use_psum_layout), '
                         f'got {k_alignment}')
    packed_rows = _k_grouped_packed_rows(sf_k, num_groups, ks_cpu, gran_k, use_psum_layout)
    torch = _torch_of(sf, 'sf')
    _torch_of(grouped_layout, 'grouped_layout')  # flattened (and, for CPU scales, read) with torch ops
    out = torch.empty((packed_rows, mn), dtype=torch.int32, device=sf.device)
    if packed_rows == 0 or sf_k == 0:
        return out
    if sf.device.type == 'cuda':
        flat_layout = grouped_layout.reshape(-1)
        _C.sf_k_grouped_pack_ue8m0(view(sf, 'sf'), view(out, 'out'), view(flat_layout, 'grouped_layout'), gran_k,
                                   k_alignment, use_psum_layout, *_launch_target(sf, 'sf'))
    else:
        _k_grouped_pack_on_host(torch, sf, grouped_layout.reshape(-1).tolist(), gran_k, k_alignment,
                                use_psum_layout, out)
    return out


# The scale granularities DeepGEMM's recipes name (gran_k 32 is SM100's), and the one gran_k SM90 reads.
_RECIPE_GRAN_MN = (1, 128)
_RECIPE_GRAN_K = (32, 128)
_SM90_GRAN_K = 128


def _recipe_granularity(recipe, is_sfa):
    """(gran_mn, gran_k) from a 3-tuple recipe + is_sfa, or from a 2-tuple recipe (is_sfa None). The recipe is
    checked first, values included, so a bad recipe is blamed even when is_sfa is missing too."""
    if not isinstance(recipe, (tuple, list)) or len(recipe) not in (2, 3) or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in recipe):
        raise ValueError(f'recipe: expected a tuple of 3 ints (gran_m_a, gran_n_b, gran_k) or of 2 ints '
                         f'(gran_mn, gran_k), got {recipe!r}')
    if recipe[-1] not in _RECIPE_GRAN_K or any(v not in _RECIPE_GRAN_MN for v in recipe[:-1]):
        raise ValueError(f'recipe: expected gran_k 32 or 128 and each gran_mn 1 or 128 (DeepGEMM\'s scale '
                         f'granularities), got {tuple(recipe)!r}')
    if len(recipe) == 3:
        if not isinstance(is_sfa, bool):
            raise ValueError(f'is_sfa: expected True or False with a 3-element recipe, got {is_sfa!r}')
        return (recipe[0] if is_sfa else recipe[1]), recipe[2]
    if is_sfa is not None:
        raise ValueError(f'is_sfa: expected None with a 2-element recipe, got {is_sfa!r}')
    return recipe[0], recipe[1]


def check_sf_shape(sf, name, mn, k, gran_mn, gran_k, num_groups):
    """ValueError naming ``name`` unless ``sf`` is fp32 [(G,) ceil(mn / gran_mn), ceil(k / gran_k)]."""
    require_tensor(sf, name)
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
    """Checks ``sf`` and returns it in the layout the C++ API reads for (gran_mn, gran_k) on SM90 (a copy only
    when it is not in that layout already)."""
    check_sf_shape(sf, name, mn, k, gran_mn, gran_k, num_groups)
    if gran_k != 128 or gran_mn not in (1, 128):
        raise ValueError(f'{name}: expected a (1, 128) or (128, 128) scale granularity on SM90, '
                         f'got ({gran_mn}, {gran_k})')
    if gran_mn == 1:
        return sf if is_mn_major_tma_aligned(sf) else get_mn_major_tma_aligned_tensor(sf)
    # Per-block scales are tiny ([N/128, K/128]); the kernel reads them K-contiguous.
    return sf if is_contiguous(sf) else sf.contiguous()


def _is_sm90_sfb_layout(sf):
    """DeepGEMM's SM90 check of per-block scales: dense, K-contiguous or (transposed) MN-contiguous."""
    shape, strides = shape_of(sf), strides_of(sf)
    rows, kb = shape[-2], shape[-1]
    if len(shape) == 3 and strides[0] != rows * kb:
        return False
    return (strides[-1] == 1 and strides[-2] == kb) or (strides[-1] == rows and strides[-2] == 1)


def transform_sf_into_required_layout(sf, mn, k, recipe, num_groups=None, is_sfa=None, disable_ue8m0_cast=False,
                                      psum_layout=None):
    """DeepGEMM's layout transform with SM90 semantics: per-token (1, 128) fp32 scales become MN-major and
    TMA-aligned (get_mn_major_tma_aligned_tensor), per-block (128, 128) scales are returned as they are once
    DeepGEMM's SFB check passes (dense, K- or MN-contiguous). ``disable_ue8m0_cast`` and ``psum_layout`` are
    checked and then unused: SM90 keeps fp32 scales, and the prefix-sum layout only shapes the SM100 packing."""
    require_tensor(sf, 'sf')
    for value, name in ((mn, 'mn'), (k, 'k')):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f'{name}: expected an int >= 0, got {value!r}')
    gran_mn, gran_k = _recipe_granularity(recipe, is_sfa)
    if num_groups is not None and (isinstance(num_groups, bool) or not isinstance(num_groups, int)
                                   or num_groups <= 0):
        raise ValueError(f'num_groups: expected None or an int > 0, got {num_groups!r}')
    require_bool(disable_ue8m0_cast, 'disable_ue8m0_cast')
    if psum_layout is not None:
        require_tensor(psum_layout, 'psum_layout')
    check_sf_shape(sf, 'sf', mn, k, gran_mn, gran_k, num_groups)
    if gran_k != _SM90_GRAN_K:
        raise ValueError(f'sf: expected scales of a (1, 128) or (128, 128) granularity (SM90 reads those as fp32; '
                         f'gran_k 32 is an SM100 recipe), got ({gran_mn}, {gran_k})')
    if gran_mn == 1:
        return get_mn_major_tma_aligned_tensor(sf)
    if not _is_sm90_sfb_layout(sf):
        raise ValueError(f'sf: expected dense per-block scales, K-contiguous (strides ([rows * kb,] kb, 1)) or '
                         f'MN-contiguous (strides ([rows * kb,] 1, rows)), got shape {tuple(shape_of(sf))} with '
                         f'strides {tuple(strides_of(sf))}')
    return sf
