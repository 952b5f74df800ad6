"""Scale-factor layout conversions and the K-grouped operands on CPU torch tensors (need torch; skipped without
it). The conversions are plain torch ops, so the CPU answers what the GPU would get."""
import pytest

torch = pytest.importorskip('torch', reason='the FP8 layout conversions are torch ops')

import deep_gemm  # noqa: E402
from deep_gemm.utils import per_token_cast_to_fp8  # noqa: E402


@pytest.mark.parametrize('shape', [(5, 3), (8, 1), (1, 4), (2, 61, 3), (3, 4, 2)])
def test_mn_major_tma_aligned_copy(shape):
    sf = torch.randn(*shape)
    out = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
    mn, kb = shape[-2], shape[-1]
    aligned = (mn + 3) // 4 * 4
    assert out.shape == sf.shape and torch.equal(out, sf)
    if mn > 1:
        assert out.stride(-2) == 1
    if kb > 1:
        assert out.stride(-1) == aligned
    if len(shape) == 3:
        # As DeepGEMM's: groups one after another; the padding rows are left as allocated (never read).
        assert out.stride(0) == aligned * kb


def test_aligned_input_is_returned_as_is():
    aligned = torch.zeros(3, 64).T  # [64, 3] with strides (1, 64)
    assert deep_gemm.get_mn_major_tma_aligned_tensor(aligned) is aligned
    assert deep_gemm.transform_sf_into_required_layout(aligned, 64, 300, (1, 128, 128), is_sfa=True) is aligned


def test_transform_returns_per_block_scales_as_they_are():
    sf = torch.randn(3, 2)  # per-block scales of a [300, 200] B: ceil(300/128) = 3, ceil(200/128) = 2
    assert deep_gemm.transform_sf_into_required_layout(sf, 300, 200, (1, 128, 128), is_sfa=False) is sf
    # DeepGEMM's SM90 path returns per-block scales unchanged whatever their strides; the kernels read any.
    mn_major = torch.randn(2, 3).T
    assert deep_gemm.transform_sf_into_required_layout(mn_major, 300, 200, (128, 128)) is mn_major
    grouped = torch.randn(4, 3, 2)
    assert deep_gemm.transform_sf_into_required_layout(grouped, 300, 200, (128, 128), num_groups=4) is grouped


def test_transform_ignores_disable_ue8m0_cast_on_sm90():
    sf = torch.rand(130, 2) + 0.1  # not powers of two: SM90 keeps them as they are
    for flag in (False, True):
        out = deep_gemm.transform_sf_into_required_layout(sf, 130, 256, (1, 128), disable_ue8m0_cast=flag)
        assert torch.equal(out, sf) and out.stride() == (1, 132)


def test_k_grouped_operands_reach_the_kernel_as_given(monkeypatch):
    # DeepGEMM's SM90 K-grouped operand (each group's K-major [mn, k_g] block, one after another) is read in place
    # through one TMA map per group: a kept plan launches on the caller's own pointers, and no call copies it.
    mn, ks = 64, [128, 0, 256]
    a = torch.randint(0, 100, (mn * sum(ks), ), dtype=torch.uint8).view(torch.float8_e4m3fn)
    b = torch.randint(0, 100, (mn * sum(ks), ), dtype=torch.uint8).view(torch.float8_e4m3fn)
    launched = []

    def run_kept(prefix, *tensors):  # every signature has a kept plan: the call takes the kept plan's path
        launched.append(tuple(0 if t is None else t.data_ptr() for t in tensors))
        return True

    monkeypatch.setattr(deep_gemm._fp8, 'run_kept', run_kept)
    monkeypatch.setattr(torch, 'cat', lambda *args, **kwargs: pytest.fail('the K groups were copied'))
    sf_a, sf_b, d = torch.ones(mn, 3), torch.ones(mn, 3), torch.empty(3, mn, mn)
    layout = torch.tensor(ks, dtype=torch.int32)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sf_a), (b, sf_b), d, ks, layout)
    assert launched == [(a.data_ptr(), sf_a.data_ptr(), b.data_ptr(), sf_b.data_ptr(), d.data_ptr(),
                         layout.data_ptr(), 0)]


def test_cpu_tensors_are_rejected_by_name():
    a = per_token_cast_to_fp8(torch.randn(64, 256), use_ue8m0=False)
    b = per_token_cast_to_fp8(torch.randn(128, 256), use_ue8m0=False)
    with pytest.raises(ValueError, match='^a: expected a CUDA tensor'):
        deep_gemm.fp8_gemm_nt(a, b, torch.empty(64, 128), recipe=(1, 1, 128))
    with pytest.raises(ValueError, match=r'^b\[1\]: expected per-block'):
        deep_gemm.fp8_gemm_nt(a, b, torch.empty(64, 128, dtype=torch.bfloat16))


def test_per_block_cast_matches_the_scale_shape_the_gemm_expects():
    w = torch.randn(300, 200)
    w_fp8, sf = deep_gemm.per_block_cast_to_fp8(w, use_ue8m0=False)
    assert sf.shape == (3, 2)
    # Accepted as-is as the B scales of a 1D2D GEMM with N = 300, K = 200.
    assert deep_gemm.transform_sf_into_required_layout(sf, 300, 200, (1, 128, 128), is_sfa=False) is sf
