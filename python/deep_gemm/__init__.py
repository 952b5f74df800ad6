"""deep_gemm: DeepGEMM 2.6.1's Python API over tilegemm's JIT-compiled SM90 kernels.

Importing this package neither imports torch nor initialises CUDA (with torch already imported, it registers the GEMMs
as torch.library ops: _torch_ops.py). Exported: the BF16 family, the cuBLASLt
wrappers, the SM90 FP8 family (1D2D and 1D1D recipes, K-major operands only) also under DeepGEMM's fp8_fp4_*
names (FP8 operands only: SM90 has no FP4 kernel here), DeepGEMM's legacy aliases of the masked GEMMs, einsum /
fp8_einsum for the expressions that are one batched GEMM over strided views (see _einsum.py), the scale-layout
helpers and DeepGEMM's utils and testing modules, fp8_gemm_nt_skip_head_mid (the 1D2D GEMM with D's columns
remapped per head), the mHC pre-norm GEMM tf32_hc_prenorm_gemm and the MQA logits (prefill and paged, FP8 q and KV).
FP4 GEMMs, mega MoE and the SM100-only k_grouped_fp8_gemm_tn_contiguous have no SM90 kernel here and are absent
rather than present and failing.
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

# FP8 kernels (SM90: fp32 scales, K-major operands; see _fp8.py for the recipes)
from ._fp8 import (  # noqa: E402
    fp8_gemm_nt, fp8_gemm_nn,
    fp8_gemm_tn, fp8_gemm_tt,
    fp8_gemm_nt_skip_head_mid,
    m_grouped_fp8_gemm_nt_contiguous,
    m_grouped_fp8_gemm_nn_contiguous,
    m_grouped_fp8_gemm_nt_masked,
    k_grouped_fp8_gemm_nt_contiguous,
)

# DeepSeek-V3.2's mHC pre-norm GEMM (TF32, the K split chosen and summed in the kernel unless num_splits is given)
from ._hc_prenorm import tf32_hc_prenorm_gemm  # noqa: E402

# DeepSeek-V3.2's MQA logits (the lightning indexer), prefill and paged decode, FP8 q and KV only
from ._mqa_logits import (  # noqa: E402
    fp8_mqa_logits, fp8_fp4_mqa_logits,
    get_paged_mqa_logits_metadata,
    fp8_paged_mqa_logits, fp8_fp4_paged_mqa_logits,
)

# DeepGEMM's FP8/FP4 names: the FP8 GEMMs above, with a ValueError for packed FP4 operands
from ._fp8_fp4 import (  # noqa: E402
    fp8_fp4_gemm_nt, fp8_fp4_gemm_nn,
    fp8_fp4_gemm_tn, fp8_fp4_gemm_tt,
    m_grouped_fp8_fp4_gemm_nt_contiguous,
    m_grouped_fp8_fp4_gemm_nn_contiguous,
    m_grouped_fp8_fp4_gemm_nt_masked,
)

# DeepGEMM's aliases for older callers (SGLang imports fp8_m_grouped_gemm_nt_masked)
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
bf16_m_grouped_gemm_nt_masked = m_grouped_bf16_gemm_nt_masked

# Einsum kernels (batched GEMMs over permuted views; unsupported expressions raise ValueError naming expr)
from ._einsum import einsum, fp8_einsum  # noqa: E402

# Layout helpers (torch ops; the C++ API reads the layouts they produce)
from ._sf_layout import transform_sf_into_required_layout  # noqa: E402

# The plan cache behind every GEMM call (debugging and tests: how calls were served)
from ._plans import plan_cache_info as _plan_cache_info, clear_plan_cache as _clear_plan_cache  # noqa: E402,F401

# Compiling ahead of serving, without a GPU (see _precompile.py)
from ._precompile import precompile, set_jit_compile  # noqa: E402

# torch.library custom ops (torch.ops.deep_gemm.*) for torch.compile / torch.export: see _torch_ops.py
from ._torch_ops import register_torch_ops, register_if_torch_imported as _register_if_torch_imported  # noqa: E402

from . import testing  # noqa: E402
from . import utils  # noqa: E402
from .utils import *  # noqa: E402,F401,F403

# DeepGEMM's version (the API matched) with tilegemm's as a PEP 440 local label: '2.6.1+tilegemm.0.1.0'.
__version__ = '2.6.1+tilegemm.' + _C.tilegemm_version

_register_if_torch_imported()
