"""What test_fuzz_calls.py found, one case each: calls that crashed with an unnamed error, named no argument or
passed every check with an argument no tensor can have. Stand-in tensors (conftest.py), no torch needed.
"""
import pytest

import deep_gemm
from conftest import HAVE_TORCH, FakeTensor as T, gpu_available, mn_major_strides, bf16, f32, i32, raises


def test_a_1d_operand_of_a_transposing_layout_is_named():
    # bf16_gemm_nn/tn/tt transpose their views: a 1-D one was an IndexError (bf16) or "view: ..." (cuBLASLt).
    a, b, d = bf16(64, 64), bf16(64, 64), bf16(64, 64)
    raises(ValueError, 'b', deep_gemm.bf16_gemm_nn, a, bf16(64), d)
    raises(ValueError, 'a', deep_gemm.bf16_gemm_tt, bf16(64), b, d)
    raises(ValueError, 'b', deep_gemm.m_grouped_bf16_gemm_nn_contiguous, bf16(128, 64), bf16(64), bf16(128, 64),
           i32(128))
    raises(ValueError, 'a', deep_gemm.cublaslt_gemm_tn, bf16(64), b, d)
    raises(ValueError, 'b', deep_gemm.cublaslt_gemm_nn, a, bf16(64), d)


def test_a_size_past_the_kernels_32_bits_is_named():
    # b's group count 2^31 came back as "num_groups: expected a positive size, got -2147483648".
    message = raises(ValueError, 'b', deep_gemm.m_grouped_bf16_gemm_nn_contiguous, bf16(128, 64),
                     bf16(2**31, 64, 64), bf16(128, 64), i32(128))
    assert '2^31' in message


def test_k_grouped_bf16_names_the_operand_without_contiguous_rows():
    # The C++ check of both operands at once named "a/b".
    fn = deep_gemm.k_grouped_bf16_gemm_tn_contiguous
    a, b, d = bf16(128, 64), bf16(128, 32), f32(1, 64, 32)
    raises(ValueError, 'b', fn, a, bf16(128, 32, strides=(64, 2)), d, [128], i32(1))
    raises(ValueError, 'a', fn, bf16(128, 64, strides=(1, 128)), b, d, [128], i32(1))


@pytest.mark.parametrize('strides', [(-64, 1), (64, -1), (2**62, 1)])
def test_strides_no_tensor_has_are_named(strides):
    # torch has no negative strides, and 2^62 elements apart is past the address space; both passed every check.
    raises(ValueError, 'a', deep_gemm.bf16_gemm_nt, bf16(64, 64, strides=strides), bf16(64, 64), bf16(64, 64))
    raises(ValueError, 'd', deep_gemm.m_grouped_bf16_gemm_nt_masked, bf16(1, 64, 64), bf16(1, 64, 64),
           bf16(1, 64, 64, strides=(4096, ) + strides), i32(1), 32)


def test_null_and_misaligned_pointers_are_named():
    # a and c null passed plan_bf16_gemm's checks; a pointer off its elements passed every check.
    a, b, d = bf16(64, 64), bf16(64, 64), bf16(64, 64)
    assert 'non-null' in raises(ValueError, 'a', deep_gemm.bf16_gemm_nt, bf16(64, 64, ptr=0), b, d)
    raises(ValueError, 'c', deep_gemm.bf16_gemm_nt, a, b, d, c=bf16(64, 64, ptr=0))
    raises(ValueError, 'grouped_layout', deep_gemm.m_grouped_bf16_gemm_nt_contiguous, bf16(128, 64),
           bf16(1, 64, 64), bf16(128, 64), i32(128, ptr=0x7F0000000002))
    assert '2-byte' in raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, a, b, bf16(64, 64, ptr=0x7F0000000001))
    # An empty tensor may have any pointer, null included.
    raises(ValueError, 'b', deep_gemm.bf16_gemm_nt, bf16(0, 64, ptr=0), bf16(64, 32), bf16(0, 64))


@pytest.mark.parametrize('d_strides', [(0, 1), (64, 0), (32, 1)])
def test_an_output_whose_elements_overlap_is_named(d_strides):
    # Every row of d at one address (or rows closer than their length) passed every check: results would collide.
    a, b = bf16(64, 64), bf16(64, 64)
    assert 'overlap' in raises(ValueError, 'd', deep_gemm.bf16_gemm_nt, a, b, bf16(64, 64, strides=d_strides))
    fp8_a = (T((64, 128), 'float8_e4m3fn'), f32(64, 1, strides=mn_major_strides((64, 1))))
    fp8_b = (T((64, 128), 'float8_e4m3fn'), f32(1, 1))
    raises(ValueError, 'd', deep_gemm.fp8_gemm_nt, fp8_a, fp8_b, bf16(64, 64, strides=d_strides))
    raises(ValueError, 'd', deep_gemm.einsum, 'bhr,hdr->bhd', bf16(64, 1, 64), bf16(1, 64, 64),
           bf16(64, 1, 64, strides=(d_strides[0], 64, d_strides[1])))


@pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')
def test_an_output_with_size_one_dimensions_may_take_any_stride_there():
    with pytest.raises(RuntimeError):  # valid: no GPU here
        deep_gemm.bf16_gemm_nt(bf16(1, 64), bf16(64, 64), bf16(1, 64, strides=(0, 1)))


def test_layout_functions_that_make_a_tensor_need_a_torch_tensor():
    # Scales not yet in the kernel layout get a new tensor made with torch: a stand-in was an AttributeError
    # ('dim', 'reshape') or torch's own TypeError about the device.
    for device in ('cuda', 'cpu'):
        sf = f32(64, 3, device=device)
        assert 'torch.Tensor' in raises(TypeError, 'sf', deep_gemm.get_mn_major_tma_aligned_tensor, sf)
        raises(TypeError, 'sf', deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor, sf)
        raises(TypeError, 'sf', deep_gemm.transform_sf_into_required_layout, sf, 64, 384, (1, 128))
        raises(TypeError, 'sf', deep_gemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor,
               f32(4, 64, device=device), i32(1, device=device), [512], 128, 128)


@pytest.mark.skipif(not HAVE_TORCH, reason='needs torch tensors')
def test_layout_functions_name_a_stand_in_beside_torch_scales():
    import torch
    fn = deep_gemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    raises(TypeError, 'grouped_layout', fn, torch.ones(4, 64), i32(1, device='cpu'), [512], 128, 128)
    raises(TypeError, 'psum_layout', deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor, torch.ones(64, 4),
           i32(2, device='cpu'))
