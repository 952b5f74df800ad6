"""DeepGEMM's scaling-factor layout helpers without torch or a GPU: every bad argument raises TypeError/ValueError
naming it, the DeepGEMM layout tests that decide between "return sf as it is" and "make a new tensor", and the
C++ checks behind the _C layout bindings (views of stand-in tensors: conftest.FakeTensor).
"""
import inspect

import pytest

import deep_gemm
from deep_gemm import _C, _sf_layout
from deep_gemm._tensor import view
from deep_gemm.utils import layout
from conftest import FakeTensor as T, gpu_available, mn_major_strides, f32, i32, raises

no_gpu_only = pytest.mark.skipif(gpu_available(), reason='valid stand-in views must not reach a real GPU')


def test_utils_layout_has_deepgemms_names():
    for name in ('get_tma_aligned_size', 'get_mn_major_tma_aligned_tensor',
                 'get_mn_major_tma_aligned_packed_ue8m0_tensor',
                 'get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor',
                 'set_mk_alignment_for_contiguous_layout', 'get_mk_alignment_for_contiguous_layout',
                 'get_theoretical_mk_alignment_for_contiguous_layout', 'get_m_alignment_for_contiguous_layout',
                 'get_k_alignment_for_contiguous_layout'):
        assert callable(getattr(layout, name)), name
    packed = inspect.signature(layout.get_mn_major_tma_aligned_packed_ue8m0_tensor).parameters
    assert list(packed) == ['sf', 'psum_layout'] and packed['psum_layout'].default is None
    k_grouped = inspect.signature(layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor).parameters
    assert list(k_grouped) == ['sf', 'grouped_layout', 'ks_cpu', 'gran_k', 'k_alignment', 'use_psum_layout']
    assert k_grouped['use_psum_layout'].default is False
    transform = inspect.signature(deep_gemm.transform_sf_into_required_layout).parameters
    assert list(transform)[-1] == 'psum_layout' and transform['psum_layout'].default is None


@pytest.mark.parametrize('fn', [layout.get_mn_major_tma_aligned_tensor,
                                layout.get_mn_major_tma_aligned_packed_ue8m0_tensor])
def test_mn_major_helpers_check_sf(fn):
    assert 'None' in raises(TypeError, 'sf', fn, None)
    raises(TypeError, 'sf', fn, [[1.0]])
    assert '1-D' in raises(ValueError, 'sf', fn, f32(8))
    assert '4-D' in raises(ValueError, 'sf', fn, f32(1, 2, 8, 3))
    assert 'float32' in raises(ValueError, 'sf', fn, T((8, 3), 'bfloat16'))
    raises(ValueError, 'sf', fn, i32(8, 3))


def test_already_aligned_scales_come_back_as_they_are():
    for shape in [(64, 3), (61, 3), (2, 61, 3), (1, 8, 2)]:
        sf = f32(*shape, strides=mn_major_strides(shape))
        assert layout.get_mn_major_tma_aligned_tensor(sf) is sf


def test_deepgemms_exact_stride_test_for_size_one_dimensions():
    # A contiguous [mn, 1] has strides (1, 1): DeepGEMM copies it into strides (1, aligned), so we do too; the
    # GEMM path, which never steps along a size-1 dimension, takes it as it is.
    column = f32(61, 1)
    assert column.stride() == (1, 1)
    assert not _sf_layout._has_deepgemm_layout(column) and _sf_layout.is_mn_major_tma_aligned(column)
    assert _sf_layout._has_deepgemm_layout(f32(61, 1, strides=(1, 64)))
    one_group = f32(1, 8, 2, strides=(99, 1, 8))  # one group, but not DeepGEMM's group stride 16
    assert not _sf_layout._has_deepgemm_layout(one_group) and _sf_layout.is_mn_major_tma_aligned(one_group)


def test_packed_psum_layout_is_checked():
    fn = layout.get_mn_major_tma_aligned_packed_ue8m0_tensor
    sf = f32(300, 8)
    raises(TypeError, 'psum_layout', fn, sf, psum_layout=[128, 300])
    raises(ValueError, 'psum_layout', fn, sf, psum_layout=f32(2))
    raises(ValueError, 'psum_layout', fn, sf, psum_layout=i32(2, 1))
    raises(ValueError, 'psum_layout', fn, sf, psum_layout=i32(0))
    raises(ValueError, 'psum_layout', fn, sf, psum_layout=i32(4, strides=(2, )))
    assert '2 groups' in raises(ValueError, 'psum_layout', fn, f32(2, 300, 8), psum_layout=i32(2))


def k_grouped(sf=None, grouped_layout=None, ks_cpu=(256, 384), gran_k=128, k_alignment=128, **kw):
    sf = f32(5, 256) if sf is None else sf
    grouped_layout = i32(2) if grouped_layout is None else grouped_layout
    ks = list(ks_cpu) if isinstance(ks_cpu, tuple) else ks_cpu
    return layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks, gran_k,
                                                                         k_alignment, **kw)


def test_k_grouped_sf_and_layout_are_checked():
    raises(TypeError, 'sf', k_grouped, sf='sf')
    raises(ValueError, 'sf', k_grouped, sf=f32(1, 5, 256))
    raises(ValueError, 'sf', k_grouped, sf=T((5, 256), 'bfloat16'))
    assert 'contiguous' in raises(ValueError, 'sf', k_grouped, sf=f32(5, 256, strides=(1, 5)))
    assert 'multiple of 4' in raises(ValueError, 'sf', k_grouped, sf=f32(5, 254))
    raises(TypeError, 'grouped_layout', k_grouped, grouped_layout=[256, 384])
    raises(ValueError, 'grouped_layout', k_grouped, grouped_layout=f32(2))
    assert '1 to 128' in raises(ValueError, 'grouped_layout', k_grouped, grouped_layout=i32(129), ks_cpu=None,
                                use_psum_layout=True)
    raises(ValueError, 'grouped_layout', k_grouped, grouped_layout=i32(0), ks_cpu=None, use_psum_layout=True)
    raises(ValueError, 'grouped_layout', k_grouped, grouped_layout=i32(2, strides=(2, )))


def test_k_grouped_granularity_alignment_and_flag_are_checked():
    assert '32 or 128' in raises(ValueError, 'gran_k', k_grouped, gran_k=64)
    raises(TypeError, 'gran_k', k_grouped, gran_k=128.0)
    raises(ValueError, 'k_alignment', k_grouped, k_alignment=100)
    raises(ValueError, 'k_alignment', k_grouped, k_alignment=-32)
    raises(ValueError, 'k_alignment', k_grouped, ks_cpu=None, k_alignment=0, use_psum_layout=True)
    raises(TypeError, 'k_alignment', k_grouped, k_alignment=None)
    raises(TypeError, 'use_psum_layout', k_grouped, use_psum_layout=1)


def test_k_grouped_host_sizes_are_checked():
    raises(TypeError, 'ks_cpu', k_grouped, ks_cpu=640)
    raises(TypeError, 'ks_cpu', k_grouped, ks_cpu=[256.0, 384])
    assert 'expected 2 sizes' in raises(ValueError, 'ks_cpu', k_grouped, ks_cpu=[640])
    raises(ValueError, 'ks_cpu[1]', k_grouped, ks_cpu=[256, -384])
    # Without the prefix-sum layout the host sizes are required and must account for every K-block row.
    assert 'without use_psum_layout' in raises(ValueError, 'ks_cpu', k_grouped, ks_cpu=None)
    raises(ValueError, 'ks_cpu', k_grouped, ks_cpu=[])
    assert 'expected 5 K-block rows' in raises(ValueError, 'sf', k_grouped, sf=f32(6, 256))


def test_transform_blames_the_recipe_before_is_sfa():
    fn = deep_gemm.transform_sf_into_required_layout
    sf = f32(64, 1)
    assert '(3, 3, 3)' in raises(ValueError, 'recipe', fn, sf, 64, 128, (3, 3, 3))
    raises(ValueError, 'recipe', fn, sf, 64, 128, (1, 128, 64), is_sfa=True)
    raises(ValueError, 'recipe', fn, sf, 64, 128, (1, 2))
    raises(ValueError, 'recipe', fn, sf, 64, 128, [1, 128, True], is_sfa=True)
    raises(ValueError, 'is_sfa', fn, sf, 64, 128, (1, 128, 128))
    assert 'None' in raises(TypeError, 'sf', fn, None, 64, 128, (1, 128, 128), is_sfa=True)
    raises(TypeError, 'psum_layout', fn, f32(64, 1, strides=(1, 64)), 64, 128, (1, 128), psum_layout=[64])


def test_transform_per_block_follows_deepgemms_sm90_check():
    fn = deep_gemm.transform_sf_into_required_layout
    for sf in (f32(3, 2), f32(2, 3).T):  # K-contiguous, and the MN-contiguous transposed view
        assert fn(sf, 300, 200, (1, 128, 128), is_sfa=False) is sf
    grouped = f32(4, 3, 2)
    assert fn(grouped, 300, 200, (128, 128), num_groups=4) is grouped
    padded = f32(3, 2, strides=(4, 1))  # rows padded to 4: not dense
    assert 'dense per-block' in raises(ValueError, 'sf', fn, padded, 300, 200, (128, 128))
    raises(ValueError, 'sf', fn, f32(4, 3, 2, strides=(8, 2, 1)), 300, 200, (128, 128), num_groups=4)


def test_transform_keeps_per_token_scales_already_aligned():
    sf = f32(61, 3, strides=(1, 64))
    assert deep_gemm.transform_sf_into_required_layout(sf, 61, 300, (1, 128, 128), is_sfa=True) is sf
    assert deep_gemm.transform_sf_into_required_layout(sf, 61, 300, (1, 128), psum_layout=i32(2),
                                                       disable_ue8m0_cast=True) is sf


# The C++ layer checks every view again; these reach it directly through the bindings. Each stand-in gets its
# own (never dereferenced, 16-byte aligned) address, so none aliases another.
def views(*tensors):
    for i, t in enumerate(tensors):
        t._ptr += i << 20
    return [view(t, 'x') for t in tensors]


def test_transpose_binding_checks_the_output_view():
    sf, good = views(f32(7, 3), f32(7, 3, strides=(1, 8)))
    bad_pitch, = views(f32(7, 3, strides=(1, 7)))
    assert 'strides [1, 8]' in raises(ValueError, 'out', _C.sf_transpose, sf, bad_pitch, 0, 0)
    bf16, = views(T((7, 3), 'bfloat16'))
    raises(ValueError, 'sf', _C.sf_transpose, bf16, good, 0, 0)


def test_pack_binding_checks_psum_and_output():
    sf, out = views(f32(300, 8), i32(300, 2, strides=(1, 300)))
    wrong, psum_2d, psum = views(i32(300, 8, strides=(1, 300)), i32(1, 4), i32(4))
    raises(ValueError, 'out', _C.sf_pack_ue8m0, sf, wrong, None, 128, 0, 0)
    raises(ValueError, 'psum_layout', _C.sf_pack_ue8m0, sf, out, psum_2d, 128, 0, 0)
    raises(ValueError, 'm_alignment', _C.sf_pack_ue8m0, sf, out, psum, 0, 0, 0)


def test_k_grouped_binding_checks_arguments():
    sf, out, grouped = views(f32(5, 256), i32(2, 256), i32(2))
    raises(ValueError, 'gran_k', _C.sf_k_grouped_pack_ue8m0, sf, out, grouped, 64, 128, False, 0, 0)
    narrow, = views(i32(2, 252))
    raises(ValueError, 'out', _C.sf_k_grouped_pack_ue8m0, sf, narrow, grouped, 128, 128, False, 0, 0)
    misaligned, = views(T((5, 256), 'float32', ptr=0x7F0000000004))
    assert '16-byte aligned' in raises(ValueError, 'sf', _C.sf_k_grouped_pack_ue8m0, misaligned, out, grouped, 128,
                                       128, False, 0, 0)


@no_gpu_only
def test_valid_views_stop_at_the_missing_gpu():
    sf, out, packed = views(f32(7, 3), f32(7, 3, strides=(1, 8)), i32(7, 1, strides=(1, 8)))
    k_sf, k_out, k_layout = views(f32(5, 256), i32(2, 256), i32(2))
    for call in (lambda: _C.sf_transpose(sf, out, 0, 0),
                 lambda: _C.sf_pack_ue8m0(sf, packed, None, 128, 0, 0),
                 lambda: _C.sf_k_grouped_pack_ue8m0(k_sf, k_out, k_layout, 128, 128, False, 0, 0)):
        with pytest.raises(RuntimeError, match='no CUDA GPU'):
            call()
