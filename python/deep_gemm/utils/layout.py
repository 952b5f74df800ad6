"""Layout helpers that are pure settings (no kernel): the M/K alignment of the contiguous grouped layout."""
from .._config import (  # noqa: F401
    get_mk_alignment_for_contiguous_layout,
    get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout,
    set_mk_alignment_for_contiguous_layout,
)
