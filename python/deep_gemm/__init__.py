"""deep_gemm: DeepGEMM 2.6's Python API over tilegemm's JIT-compiled SM90 kernels.

Importing this package neither imports torch nor initialises CUDA. Only functions whose kernels exist in
tilegemm are exported (the BF16 family and the cuBLASLt wrappers); FP8, einsum, attention and layout-kernel
functions are absent rather than present and failing.
"""
import os as _os

# The JIT compiles kernels from the device headers installed next to this package (read on first use).
_include = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'include')
if _os.path.isdir(_include):
    _os.environ.setdefault('TILEGEMM_DEVICE_INCLUDE_DIR', _include)
del _include

from . import _C  # noqa: E402

# Configs
from ._config import (  # noqa: E402
    set_num_sms, get_num_sms,
    set_tc_util, get_tc_util,
    set_pdl, get_pdl,
    set_ignore_compile_dims,
    set_block_size_multiple_of,
    set_mk_alignment_for_contiguous_layout,
    get_mk_alignment_for_contiguous_layout,
    get_theoretical_mk_alignment_for_contiguous_layout,
    get_m_alignment_for_contiguous_layout,
    get_k_alignment_for_contiguous_layout,
)

# cuBLASLt kernels
from ._gemm import (  # noqa: E402
    cublaslt_gemm_nt, cublaslt_gemm_nn,
    cublaslt_gemm_tn, cublaslt_gemm_tt,
)

# BF16 kernels
from ._gemm import (  # noqa: E402
    bf16_gemm_nt, bf16_gemm_nn,
    bf16_gemm_tn, bf16_gemm_tt,
    m_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nn_contiguous,
    m_grouped_bf16_gemm_nt_masked,
    k_grouped_bf16_gemm_tn_contiguous,
)

from . import testing  # noqa: E402
from . import utils  # noqa: E402
from .utils import *  # noqa: E402,F401,F403

__version__ = '2.6.0+tilegemm.' + _C.tilegemm_version
