"""Every exported function against DeepGEMM 2.6's names, parameter order and defaults.

The table is written from DeepGEMM's csrc/apis/{gemm,einsum,layout,runtime}.hpp (pybind argument lists) and its
deep_gemm/utils and deep_gemm/testing modules (test_dropin_surface.py checks the same against DeepGEMM's source
text where it is available). DeepGEMM binds get_tma_aligned_size and get_mn_major_tma_aligned_tensor without
argument names; ours use its C++ parameter names (x, element_size; sf). The fp8_fp4_* names take the FP8
functions' arguments (DeepGEMM binds them to the same functions). Deliberately absent (no SM90 kernel here):
FP4-only names, k_grouped_fp8_gemm_tn_contiguous (MN-major, SM100) and the mega MoE kernels
(test_mqa_logits_py.py checks the MQA logits' signatures; fp8_gemm_nt_skip_head_mid is DeepGEMM's attention.hpp binding). einsum has DeepGEMM 2.6's use_cublaslt argument (later releases dropped
it for use_deterministic_algorithms()).
"""
import inspect

import pytest

import deep_gemm

R = inspect.Parameter.empty  # required
FP8_DENSE = [('a', R), ('b', R), ('d', R), ('c', None), ('recipe', None), ('recipe_a', None), ('recipe_b', None)]
FP8_M_GROUPED = [('a', R), ('b', R), ('d', R), ('grouped_layout', R), ('recipe', None), ('recipe_a', None),
                 ('recipe_b', None), ('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)]
FP8_MASKED = [('a', R), ('b', R), ('d', R), ('masked_m', R), ('expected_m', R), ('recipe', None), ('recipe_a', None),
              ('recipe_b', None), ('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)]
DEEPGEMM_26 = {
    'bf16_gemm_nt': [('a', R), ('b', R), ('d', R), ('c', None), ('compiled_dims', 'nk')],
    'bf16_gemm_nn': [('a', R), ('b', R), ('d', R), ('c', None), ('compiled_dims', 'nk')],
    'bf16_gemm_tn': [('a', R), ('b', R), ('d', R), ('c', None), ('compiled_dims', 'mn')],
    'bf16_gemm_tt': [('a', R), ('b', R), ('d', R), ('c', None), ('compiled_dims', 'mn')],
    'm_grouped_bf16_gemm_nt_contiguous': [('a', R), ('b', R), ('d', R), ('grouped_layout', R),
                                          ('compiled_dims', 'nk'), ('use_psum_layout', False),
                                          ('ensure_zero_padding', True), ('expected_m_for_psum_layout', None)],
    'm_grouped_bf16_gemm_nn_contiguous': [('a', R), ('b', R), ('d', R), ('grouped_layout', R),
                                          ('compiled_dims', 'nk'), ('use_psum_layout', False),
                                          ('ensure_zero_padding', True)],
    'm_grouped_bf16_gemm_nt_masked': [('a', R), ('b', R), ('d', R), ('masked_m', R), ('expected_m', R),
                                      ('compiled_dims', 'nk')],
    'k_grouped_bf16_gemm_tn_contiguous': [('a', R), ('b', R), ('d', R), ('ks_cpu', R), ('grouped_layout', R),
                                          ('c', None), ('compiled_dims', 'mn'), ('use_psum_layout', False)],
    'fp8_gemm_nt': FP8_DENSE + [('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)],
    'fp8_gemm_nn': FP8_DENSE + [('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)],
    'fp8_gemm_tn': FP8_DENSE + [('compiled_dims', 'mn'), ('disable_ue8m0_cast', False)],
    'fp8_gemm_tt': FP8_DENSE + [('compiled_dims', 'mn'), ('disable_ue8m0_cast', False)],
    'm_grouped_fp8_gemm_nt_contiguous': FP8_M_GROUPED + [('use_psum_layout', False), ('ensure_zero_padding', True),
                                                         ('expected_m_for_psum_layout', None)],
    'm_grouped_fp8_gemm_nn_contiguous': FP8_M_GROUPED + [('use_psum_layout', False), ('ensure_zero_padding', True)],
    'm_grouped_fp8_gemm_nt_masked': FP8_MASKED,
    'k_grouped_fp8_gemm_nt_contiguous': [('a', R), ('b', R), ('d', R), ('ks_cpu', R), ('grouped_layout', R),
                                         ('c', None), ('recipe', (1, 1, 128)), ('compiled_dims', 'mn'),
                                         ('use_psum_layout', False)],
    'fp8_gemm_nt_skip_head_mid': [('a', R), ('b', R), ('d', R), ('head_splits', R), ('recipe', None),
                                  ('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)],
    'fp8_fp4_gemm_nt': FP8_DENSE + [('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)],
    'fp8_fp4_gemm_nn': FP8_DENSE + [('compiled_dims', 'nk'), ('disable_ue8m0_cast', False)],
    'fp8_fp4_gemm_tn': FP8_DENSE + [('compiled_dims', 'mn'), ('disable_ue8m0_cast', False)],
    'fp8_fp4_gemm_tt': FP8_DENSE + [('compiled_dims', 'mn'), ('disable_ue8m0_cast', False)],
    'm_grouped_fp8_fp4_gemm_nt_contiguous': FP8_M_GROUPED + [('use_psum_layout', False),
                                                             ('ensure_zero_padding', True),
                                                             ('expected_m_for_psum_layout', None)],
    'm_grouped_fp8_fp4_gemm_nn_contiguous': FP8_M_GROUPED + [('use_psum_layout', False),
                                                             ('ensure_zero_padding', True)],
    'm_grouped_fp8_fp4_gemm_nt_masked': FP8_MASKED,
    'fp8_m_grouped_gemm_nt_masked': FP8_MASKED,
    'bf16_m_grouped_gemm_nt_masked': [('a', R), ('b', R), ('d', R), ('masked_m', R), ('expected_m', R),
                                      ('compiled_dims', 'nk')],
    'einsum': [('expr', R), ('a', R), ('b', R), ('d', R), ('c', None), ('use_cublaslt', False)],
    'fp8_einsum': [('expr', R), ('a', R), ('b', R), ('d', R), ('c', None), ('recipe', (1, 128, 128))],
    'transform_sf_into_required_layout': [('sf', R), ('mn', R), ('k', R), ('recipe', R), ('num_groups', None),
                                          ('is_sfa', None), ('disable_ue8m0_cast', False), ('psum_layout', None)],
    'get_mn_major_tma_aligned_packed_ue8m0_tensor': [('sf', R), ('psum_layout', None)],
    'get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor': [('sf', R), ('grouped_layout', R), ('ks_cpu', R),
                                                               ('gran_k', R), ('k_alignment', R),
                                                               ('use_psum_layout', False)],
    'get_tma_aligned_size': [('x', R), ('element_size', R)],
    'tf32_hc_prenorm_gemm': [('a', R), ('b', R), ('d', R), ('sqr_sum', R), ('num_splits', None)],
    'get_mn_major_tma_aligned_tensor': [('sf', R)],
    'cublaslt_gemm_nt': [('a', R), ('b', R), ('d', R), ('c', None)],
    'cublaslt_gemm_nn': [('a', R), ('b', R), ('d', R), ('c', None)],
    'cublaslt_gemm_tn': [('a', R), ('b', R), ('d', R), ('c', None)],
    'cublaslt_gemm_tt': [('a', R), ('b', R), ('d', R), ('c', None)],
    'set_num_sms': [('new_num_sms', R)],
    'get_num_sms': [],
    'set_tc_util': [('new_tc_util', R)],
    'get_tc_util': [],
    'set_pdl': [('new_enable_pdl', R)],
    'get_pdl': [],
    'set_ignore_compile_dims': [('new_value', R)],
    'set_block_size_multiple_of': [('value', R)],
    'set_mk_alignment_for_contiguous_layout': [('new_value', R)],
    'get_mk_alignment_for_contiguous_layout': [],
    'get_theoretical_mk_alignment_for_contiguous_layout': [('expected_m', None)],
    'get_m_alignment_for_contiguous_layout': [],
    'get_k_alignment_for_contiguous_layout': [],
    'ceil_div': [('x', R), ('y', R)],
    'align': [('x', R), ('y', R)],
    'ceil_to_ue8m0': [('x', R)],
    'pack_ue8m0_to_int': [('x', R)],
    'per_token_cast_to_fp8': [('x', R), ('use_ue8m0', R), ('gran_k', 128), ('use_packed_ue8m0', False)],
    'per_channel_cast_to_fp8': [('x', R), ('use_ue8m0', R), ('gran_k', 128)],
    'per_block_cast_to_fp8': [('x', R), ('use_ue8m0', R), ('gran_k', 128)],
    'per_custom_dims_cast_to_fp8': [('x', R), ('dims', R), ('use_ue8m0', R)],
    'per_token_cast_to_fp4': [('x', R), ('use_ue8m0', R), ('gran_k', 128), ('use_packed_ue8m0', False)],
    'transpose_packed_fp4': [('a', R)],
    'cast_back_from_fp4': [('packed', R), ('sf', R), ('gran_k', 128), ('use_packed_ue8m0', False)],
    'unpack_ue8m0_from_int': [('packed_sf', R)],
    'init_dist': [('local_rank', R), ('num_local_ranks', R)],
    'uneven_all_gather': [('tensor', R), ('dim', 0), ('group', None)],
}
TESTING = {
    'bench': [('fn', R), ('num_warmups', 5), ('num_tests', 10), ('high_precision', False)],
    'bench_kineto': [('fn', R), ('kernel_names', R), ('num_tests', 30), ('suppress_kineto_output', False),
                     ('trace_path', None), ('flush_l2', True), ('with_multiple_kernels', False), ('barrier', None)],
    'calc_diff': [('x', R), ('y', R)],
    'count_bytes': [('tensors', R)],
    'assert_bitwise_equal': [('x', R), ('y', R), ('label', '')],
    'get_arch_major': [],
    'test_filter': [('condition', R)],
    'ignore_env': [('name', R), ('condition', R)],
}


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize('name', sorted(DEEPGEMM_26))
def test_top_level_signature(name):
    assert _params(getattr(deep_gemm, name)) == DEEPGEMM_26[name]


@pytest.mark.parametrize('name', sorted(TESTING))
def test_testing_signature(name):
    assert _params(getattr(deep_gemm.testing, name)) == TESTING[name]


# What deep_gemm has beyond DeepGEMM 2.6.1's names.
EXTRAS = {
    'register_torch_ops': [],
    'precompile': [('function', R), ('m', R), ('n', R), ('k', R), ('num_groups', None), ('expected_m', None),
                   ('out_dtype', None), ('recipe', None), ('accumulate', False), ('sf_layout', 'mn-major'),
                   ('head_splits', None), ('num_splits', None), ('hw', 'h200'), ('jobs', 0), ('progress', True)],
    'set_jit_compile': [('allowed', R)],
}


def test_every_public_function_is_in_the_table():
    from test_mqa_logits_py import NAMES as MQA_LOGITS  # their signatures: test_mqa_logits_py.py
    public = {n for n in dir(deep_gemm) if not n.startswith('_') and callable(getattr(deep_gemm, n))}
    assert public == set(DEEPGEMM_26) | set(EXTRAS) | set(MQA_LOGITS)


@pytest.mark.parametrize('name', sorted(EXTRAS))
def test_extra_signature(name):
    assert _params(getattr(deep_gemm, name)) == EXTRAS[name]


@pytest.mark.parametrize('name', ['get_tma_aligned_size', 'get_mn_major_tma_aligned_tensor', 'per_token_cast_to_fp8'])
def test_layout_helpers_are_in_utils_too(name):
    assert getattr(deep_gemm.utils, name) is getattr(deep_gemm, name)
