"""DeepGEMM's layout helpers: the M/K alignment of the contiguous grouped layouts (settings, see _config.py) and
the scaling-factor layout functions of the FP8 GEMMs (tilegemm's layout kernels, see deep_gemm/_sf_layout.py)."""
from .._config import (  # noqa: F401
    get_mk_alignment_for_contiguous_layout,
    get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout,
    set_mk_alignment_for_contiguous_layout,
)
from .._sf_layout import (  # noqa: F401
    get_tma_aligned_size,
    get_mn_major_tma_aligned_tensor,
    get_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor,
)
