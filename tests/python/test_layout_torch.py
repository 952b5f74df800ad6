"""DeepGEMM's scaling-factor layout helpers on CPU torch tensors (need torch; skipped without it): values, shapes,
strides and dtypes against the torch references (layout_reference.py), and when the input itself comes back.
The CPU path is torch ops; the GPU kernels are held to the same references in test_gpu_layout.py.
"""
import pytest

torch = pytest.importorskip('torch', reason='the layout helpers return torch tensors')

import deep_gemm  # noqa: E402
from deep_gemm.utils import layout  # noqa: E402
from layout_reference import (k_grouped_reference, mn_major_reference, packed_reference, psum_row_mask,  # noqa: E402
                              tma_aligned, ue8m0_scales)


def same(out, ref):
    assert out.dtype == ref.dtype and out.shape == ref.shape and out.stride() == ref.stride()
    assert torch.equal(out, ref)


@pytest.mark.parametrize('shape', [(5, 3), (8, 1), (1, 4), (61, 57), (2, 61, 3), (1, 4, 2), (4, 4097, 1)])
def test_mn_major_copy_matches_the_reference(shape):
    sf = torch.randn(*shape)
    out = layout.get_mn_major_tma_aligned_tensor(sf)
    assert out is not sf
    same(out, mn_major_reference(sf))
    mn, kb = shape[-2:]
    assert out.stride()[-2:] == (1, tma_aligned(mn))
    if len(shape) == 3:
        assert out.stride(0) == tma_aligned(mn) * kb


def test_mn_major_input_in_any_layout():
    base = torch.randn(3, 200, 9)
    for sf in (base.transpose(1, 2).contiguous().transpose(1, 2), base[:, 7:190:2, 1:8], base[1]):
        same(layout.get_mn_major_tma_aligned_tensor(sf), mn_major_reference(sf))


def test_aligned_input_comes_back_as_it_is():
    aligned = torch.randn(3, 64).T  # [64, 3] with strides (1, 64)
    assert layout.get_mn_major_tma_aligned_tensor(aligned) is aligned
    grouped = mn_major_reference(torch.randn(2, 61, 3))
    assert layout.get_mn_major_tma_aligned_tensor(grouped) is grouped
    assert deep_gemm.transform_sf_into_required_layout(aligned, 64, 300, (1, 128, 128), is_sfa=True) is aligned


def test_a_column_of_scales_gets_deepgemms_strides():
    # DeepGEMM's test is exact: a contiguous [mn, 1] (strides (1, 1)) is copied into strides (1, aligned).
    column = torch.randn(61, 1)
    out = layout.get_mn_major_tma_aligned_tensor(column)
    assert out is not column and out.stride() == (1, 64) and torch.equal(out, column)


@pytest.mark.parametrize('shape', [(5, 3), (7, 4), (61, 57), (2, 61, 9), (1, 8, 1), (3, 4096, 56)])
def test_packed_matches_the_reference(shape):
    sf = ue8m0_scales(shape)
    out = layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    same(out, packed_reference(sf))
    # The exponents come back: byte b of word p is K block 4p + b.
    unpacked = (out.unsqueeze(-1) >> torch.arange(0, 32, 8)) & 0xFF
    unpacked = unpacked.flatten(-2)[..., :shape[-1]]
    assert torch.equal(torch.pow(2.0, (unpacked - 127).float()), sf)


def test_packed_reads_any_input_layout():
    sf = ue8m0_scales((300, 20)).T.contiguous().T  # MN-major, not TMA-aligned
    same(layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), packed_reference(sf))


def test_packed_psum_layout_zeroes_the_gap_rows():
    ends = [100, 300, 300, 520]  # groups start at 0, 128, 384 and 384 (128-row alignment)
    sf = ue8m0_scales((600, 6))
    out = layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=torch.tensor(ends, dtype=torch.int32))
    mask = psum_row_mask(ends, 600, deep_gemm.get_mk_alignment_for_contiguous_layout())
    same(out, packed_reference(sf, mask))
    assert bool((out[100:128] == 0).all()) and bool((out[520:] == 0).all()) and bool((out[128:300] != 0).all())


@pytest.mark.parametrize('gran_k', [32, 128])
def test_k_grouped_matches_the_reference(gran_k):
    ks = [gran_k * r for r in (5, 1, 8, 3, 4)]  # K-block rows per group: ragged counts of 4
    mn = 64
    sf = ue8m0_scales((sum(ks) // gran_k, mn))
    grouped_layout = torch.tensor(ks, dtype=torch.int32)
    out = layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks, gran_k, gran_k)
    same(out, k_grouped_reference(sf, ks, gran_k))
    assert out.shape == (2 + 1 + 2 + 1 + 1, mn) and out.is_contiguous()


def test_k_grouped_psum_layout_and_unsynced_sizes():
    gran_k, alignment, mn = 128, 256, 32
    real_ks = [640, 128 + 64, 512]  # the middle group is not a multiple of gran_k
    ends, start = [], 0
    for k in real_ks:
        ends.append(start + k)
        start = (start + k + alignment - 1) // alignment * alignment
    rows = [(k + gran_k - 1) // gran_k for k in real_ks]
    sf = ue8m0_scales((sum(rows), mn))
    reference = k_grouped_reference(sf, real_ks, gran_k)
    psum = torch.tensor(ends, dtype=torch.int32)
    fn = layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    same(fn(sf, psum, real_ks, gran_k, alignment, use_psum_layout=True), reference)
    # Without host sizes the output is an upper bound of rows; the rows the groups own match.
    for ks_cpu in (None, []):
        upper = fn(sf, psum, ks_cpu, gran_k, alignment, use_psum_layout=True)
        assert upper.shape[0] == (sum(rows) + 3 * len(real_ks)) // 4 >= reference.shape[0]
        assert torch.equal(upper[:reference.shape[0]], reference)


def test_k_grouped_without_rows_is_empty():
    out = layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
        torch.empty(0, 16), torch.zeros(2, dtype=torch.int32), [0, 0], 128, 128)
    assert out.shape == (0, 16) and out.dtype == torch.int32


def test_transform_per_block_comes_back_as_it_is():
    mn_major = torch.randn(2, 3).T  # DeepGEMM's SM90 check accepts MN-contiguous per-block scales too
    assert deep_gemm.transform_sf_into_required_layout(mn_major, 300, 200, (128, 128)) is mn_major
    k_major = torch.randn(4, 3, 2)
    assert deep_gemm.transform_sf_into_required_layout(k_major, 300, 200, (128, 128), num_groups=4) is k_major
