"""DeepGEMM's helpers, re-exported as DeepGEMM's deep_gemm.utils does: everything public in ``utils.math``
(rounding, FP8/FP4 casts, UE8M0 packing) and ``utils.layout`` (contiguous-layout alignment, scaling-factor
layout functions), plus ``init_dist`` and ``uneven_all_gather`` from ``utils.dist``. None of them imports torch
until it is called."""
from . import dist, layout, math
from .dist import init_dist, uneven_all_gather
from .layout import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403

# utils.layout re-exports functions defined elsewhere (it has no __all__): take every public callable it holds.
_layout_names = sorted(name for name, value in vars(layout).items() if not name.startswith('_') and callable(value))

__all__ = list(math.__all__) + _layout_names + ['init_dist', 'uneven_all_gather']
