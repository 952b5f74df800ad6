"""DeepGEMM's fp8_fp4_* names. In DeepGEMM they are the FP8 GEMMs themselves (fp8_gemm_nt is bound to the same
function) that also take FP4 operands (int8 bytes of two packed E2M1 codes) on SM100. SM90 has no FP4 kernel
here, so each takes DeepGEMM's arguments, runs the FP8 function of the same layout when both operands are FP8,
and raises ValueError naming the operand that is packed FP4."""
from . import _fp8
from ._checks import dtype_name

# torch dtypes DeepGEMM and torch use for packed FP4 data (DeepGEMM's kPackedFP4 is int8).
_PACKED_FP4_DTYPES = ('int8', 'uint8', 'float4_e2m1fn_x2')


def _reject_fp4(**operands):
    for name, operand in operands.items():
        # Anything that is not a (data, sf) pair is left to the FP8 function's own checks.
        if not isinstance(operand, (tuple, list)) or len(operand) != 2 or not hasattr(operand[0], 'dtype'):
            continue
        dtype = dtype_name(operand[0])
        if dtype in _PACKED_FP4_DTYPES:
            raise ValueError(f'{name}: expected float8_e4m3fn data (tilegemm has no FP4 GEMM kernel on SM90; '
                             f'DeepGEMM runs packed FP4 operands on SM100 only), got packed FP4 {dtype} '
                             f'{tuple(operand[0].shape)}')


def fp8_fp4_gemm_nt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='nk',
                    disable_ue8m0_cast=False):
    _reject_fp4(a=a, b=b)
    _fp8.fp8_gemm_nt(a, b, d, c=c, recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b,
                     compiled_dims=compiled_dims, disable_ue8m0_cast=disable_ue8m0_cast)


def fp8_fp4_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='nk',
                    disable_ue8m0_cast=False):
    _reject_fp4(a=a, b=b)
    _fp8.fp8_gemm_nn(a, b, d, c=c, recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b,
                     compiled_dims=compiled_dims, disable_ue8m0_cast=disable_ue8m0_cast)


def fp8_fp4_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='mn',
                    disable_ue8m0_cast=False):
    _reject_fp4(a=a, b=b)
    _fp8.fp8_gemm_tn(a, b, d, c=c, recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b,
                     compiled_dims=compiled_dims, disable_ue8m0_cast=disable_ue8m0_cast)


def fp8_fp4_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='mn',
                    disable_ue8m0_cast=False):
    _reject_fp4(a=a, b=b)
    _fp8.fp8_gemm_tt(a, b, d, c=c, recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b,
                     compiled_dims=compiled_dims, disable_ue8m0_cast=disable_ue8m0_cast)


def m_grouped_fp8_fp4_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                         compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False,
                                         ensure_zero_padding=True, expected_m_for_psum_layout=None):
    _reject_fp4(a=a, b=b)
    _fp8.m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=recipe, recipe_a=recipe_a,
                                          recipe_b=recipe_b, compiled_dims=compiled_dims,
                                          disable_ue8m0_cast=disable_ue8m0_cast, use_psum_layout=use_psum_layout,
                                          ensure_zero_padding=ensure_zero_padding,
                                          expected_m_for_psum_layout=expected_m_for_psum_layout)


def m_grouped_fp8_fp4_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                         compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False,
                                         ensure_zero_padding=True):
    _reject_fp4(a=a, b=b)
    _fp8.m_grouped_fp8_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=recipe, recipe_a=recipe_a,
                                          recipe_b=recipe_b, compiled_dims=compiled_dims,
                                          disable_ue8m0_cast=disable_ue8m0_cast, use_psum_layout=use_psum_layout,
                                          ensure_zero_padding=ensure_zero_padding)


def m_grouped_fp8_fp4_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims='nk', disable_ue8m0_cast=False):
    _reject_fp4(a=a, b=b)
    _fp8.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=recipe, recipe_a=recipe_a,
                                      recipe_b=recipe_b, compiled_dims=compiled_dims,
                                      disable_ue8m0_cast=disable_ue8m0_cast)
