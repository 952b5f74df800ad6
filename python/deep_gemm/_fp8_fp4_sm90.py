"""The SM90 FP8 x FP4 GEMM (include/tilegemm/fp8_fp4_gemm.hpp) in DeepGEMM's argument form, and MXFP8 on the same
kernel, private until they have run on a GPU: the public fp8_fp4_gemm_nt still refuses packed FP4 operands on SM90
(_fp8_fp4.py). The benchmark and the tests call them here.

    fp8_fp4_gemm_nt((a, sfa), (b, sfb), d)
    m_grouped_fp8_fp4_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, expected_m)   # MoE experts, a [E, M_max, K]
    mxfp8_gemm_nt((a, sfa), (b, sfb), d)      # a, b float8_e4m3fn, sfa [M, K / 32], sfb [N, K / 32] fp32

a float8_e4m3fn [M, K] with sfa fp32 [M, K / 128] (per_token_cast_to_fp8, use_ue8m0 either way), b int8 [N, K / 2]
packed E2M1 with sfb fp32 [N, K / 32] (per_token_cast_to_fp4(..., gran_k=32)), d bf16 or fp32 [M, N]: recipe_a
(1, 128) and recipe_b (1, 32), the only ones taken."""
from . import _C
from ._checks import INT32_MAX, require_dtype, require_int, require_tensor
from ._config import num_sms_setting
from ._tensor import common_device, current_stream, view


def _pair(x, name, dtype, what):
    """(data, sf) of an operand; TypeError/ValueError naming ``name`` (``name[1]`` for the scales)."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TypeError(f'{name}: expected a ({what}, float32 scale factors) pair, got {type(x).__name__}')
    data, sf = require_tensor(x[0], f'{name}[0]'), require_tensor(x[1], f'{name}[1]')
    require_dtype(data, f'{name}[0]', dtype)
    return data, sf


def _require_recipes(recipe_a, recipe_b):
    for name, recipe, want in (('recipe_a', recipe_a, (1, 128)), ('recipe_b', recipe_b, (1, 32))):
        if tuple(recipe) != want:
            raise ValueError(f'{name}: expected {want} (A scaled per token and 128 k, B per row and 32 k), got '
                             f'{tuple(recipe)}')


def fp8_fp4_gemm_nt(a, b, d, recipe_a=(1, 128), recipe_b=(1, 32)):
    a_data, sfa = _pair(a, 'a', 'float8_e4m3fn', 'float8_e4m3fn tensor')
    b_data, sfb = _pair(b, 'b', 'int8', 'int8 tensor of packed E2M1 pairs')
    _require_recipes(recipe_a, recipe_b)
    views = view(a_data, 'a[0]'), view(sfa, 'a[1]'), view(b_data, 'b[0]'), view(sfb, 'b[1]'), view(d, 'd')
    device = common_device(**{'a[0]': a_data, 'a[1]': sfa, 'b[0]': b_data, 'b[1]': sfb, 'd': d})
    _C.fp8_fp4_gemm_nt_sm90(*views, device, current_stream(device), num_sms_setting())


def m_grouped_fp8_fp4_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe_a=(1, 128), recipe_b=(1, 32)):
    """The same over E experts: a [E, M_max, K], b [E, N, K / 2] (scales likewise with a leading E), d [E, M_max, N],
    masked_m int32 [E] the valid rows of each expert (rows past them are not written), expected_m a positive hint."""
    a_data, sfa = _pair(a, 'a', 'float8_e4m3fn', 'float8_e4m3fn tensor')
    b_data, sfb = _pair(b, 'b', 'int8', 'int8 tensor of packed E2M1 pairs')
    _require_recipes(recipe_a, recipe_b)
    require_int(expected_m, 'expected_m', 1, INT32_MAX)
    views = (view(a_data, 'a[0]'), view(sfa, 'a[1]'), view(b_data, 'b[0]'), view(sfb, 'b[1]'), view(d, 'd'),
             view(masked_m, 'masked_m'))
    device = common_device(**{'a[0]': a_data, 'a[1]': sfa, 'b[0]': b_data, 'b[1]': sfb, 'd': d,
                              'masked_m': masked_m})
    _C.m_grouped_fp8_fp4_gemm_nt_masked_sm90(*views, expected_m, device, current_stream(device), num_sms_setting())


def mxfp8_gemm_nt(a, b, d):
    """MXFP8: a float8_e4m3fn [M, K] with sfa fp32 [M, K / 32], b float8_e4m3fn [N, K] with sfb fp32 [N, K / 32] (UE8M0
    values as OCP MX has them, or any), d bf16 or fp32 [M, N]; K a multiple of 128."""
    a_data, sfa = _pair(a, 'a', 'float8_e4m3fn', 'float8_e4m3fn tensor')
    b_data, sfb = _pair(b, 'b', 'float8_e4m3fn', 'float8_e4m3fn tensor')
    views = view(a_data, 'a[0]'), view(sfa, 'a[1]'), view(b_data, 'b[0]'), view(sfb, 'b[1]'), view(d, 'd')
    device = common_device(**{'a[0]': a_data, 'a[1]': sfa, 'b[0]': b_data, 'b[1]': sfb, 'd': d})
    _C.mxfp8_gemm_nt_sm90(*views, device, current_stream(device), num_sms_setting())
