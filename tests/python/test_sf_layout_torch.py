"""Scale-factor layout conversions and the K-grouped operand rearrangement on CPU torch tensors (need torch;
skipped without it). The conversions are plain torch ops, so the CPU answers what the GPU would get."""
import ctypes

import pytest

torch = pytest.importorskip('torch', reason='the FP8 layout conversions are torch ops')

import deep_gemm  # noqa: E402
from deep_gemm._fp8 import _k_grouped_copy, _k_grouped_operand  # noqa: E402
from conftest import FakeTensor  # noqa: E402
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


def test_k_grouped_operand_puts_groups_side_by_side():
    # DeepGEMM's SM90 K-grouped operand: each group's K-major [mn, k_g] block, one after another.
    mn, ks = 3, [128, 0, 256]
    blocks = [torch.randint(0, 100, (mn, k), dtype=torch.uint8) for k in ks]
    flat = torch.cat([b.flatten() for b in blocks]).view(torch.float8_e4m3fn)
    out = _k_grouped_copy(flat, 'a', mn, ks)
    assert out.dtype == torch.float8_e4m3fn and out.shape == (mn, sum(ks)) and out.is_contiguous()
    assert torch.equal(out.view(torch.uint8), torch.cat(blocks, dim=1))
    # One non-empty group is a view of the operand itself, not a copy.
    x = FakeTensor((mn * 128, ), 'float8_e4m3fn')
    (ptr, _, shape, strides), holder = _k_grouped_operand(x, 'a', mn, [128, 0])
    assert holder is x and (ptr, shape, strides) == (x.data_ptr(), [mn, 128], [128, 1])


def test_k_grouped_copies_live_until_a_kept_plan_launches(monkeypatch):
    # A kept plan's call copies a's and b's groups side by side again; had a's copy been freed before the launch,
    # b's copy (the same size) would take its memory and the kernel would read b's bytes as a.
    mn, ks = 64, [128, 128]
    a_blocks = [torch.full((mn, k), 1 + g, dtype=torch.uint8) for g, k in enumerate(ks)]
    b_blocks = [torch.full((mn, k), 10 + g, dtype=torch.uint8) for g, k in enumerate(ks)]
    a, b = (torch.cat([x.flatten() for x in blocks]).view(torch.float8_e4m3fn) for blocks in (a_blocks, b_blocks))
    launched = {}

    class Plan:
        def launch(self, stream, num_sms, a_ptr, a_sf_ptr, b_ptr, *pointers):
            launched['a'] = ctypes.string_at(a_ptr, mn * sum(ks))
            launched['b'] = ctypes.string_at(b_ptr, mn * sum(ks))
            return True

    class KeptPlans:  # every signature has a kept plan: the call takes the kept plan's path
        def get(self, key):
            return Plan()

    monkeypatch.setattr(deep_gemm._fp8, 'table', KeptPlans())
    sf = torch.ones(mn, 2)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sf), (b, sf), torch.empty(2, mn, mn), ks,
                                               torch.tensor(ks, dtype=torch.int32))
    assert launched['a'] == torch.cat(a_blocks, dim=1).numpy().tobytes()
    assert launched['b'] == torch.cat(b_blocks, dim=1).numpy().tobytes()


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
