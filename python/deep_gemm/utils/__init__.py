"""DeepGEMM's helpers: integer rounding and FP8 casts (the casts need torch, imported when called)."""
from .math import (
    ceil_div, align,
    ceil_to_ue8m0, pack_ue8m0_to_int,
    per_token_cast_to_fp8, per_channel_cast_to_fp8, per_block_cast_to_fp8, per_custom_dims_cast_to_fp8,
)
from .layout import (
    get_mk_alignment_for_contiguous_layout,
    get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout,
    set_mk_alignment_for_contiguous_layout,
    get_tma_aligned_size,
    get_mn_major_tma_aligned_tensor,
)

__all__ = [
    'ceil_div', 'align', 'ceil_to_ue8m0', 'pack_ue8m0_to_int',
    'per_token_cast_to_fp8', 'per_channel_cast_to_fp8', 'per_block_cast_to_fp8', 'per_custom_dims_cast_to_fp8',
    'get_mk_alignment_for_contiguous_layout', 'get_m_alignment_for_contiguous_layout',
    'get_k_alignment_for_contiguous_layout', 'get_theoretical_mk_alignment_for_contiguous_layout',
    'set_mk_alignment_for_contiguous_layout',
    'get_tma_aligned_size', 'get_mn_major_tma_aligned_tensor',
]
