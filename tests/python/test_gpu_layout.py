"""DeepGEMM's scaling-factor layout helpers on the GPU (tilegemm's layout kernels) against the torch references
(layout_reference.py): torch.equal, shape, strides and dtype on DeepGEMM's test_layout.py shapes and ragged
ones, every input layout the kernels read (row-major, MN-major, strided slices), CUDA-graph capture, and the
kernel names profilers find them by (GPU + torch; skipped otherwise).
"""
import random

import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.utils import layout, per_channel_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402
from layout_reference import (k_grouped_reference, mn_major_reference, packed_reference, psum_row_mask,  # noqa: E402
                              ue8m0_scales)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')

# DeepGEMM's enumerate_sf_layout on SM90 (gran_k 128), plus ragged MN and K-block counts around the tile sizes.
SF_SHAPES = [(g, mn, k) for g in (1, 2, 4) for mn in (4096, 4097, 8192) for k in (128, 7168, 7296)]
RAGGED = [(1, 1, 128), (3, 7, 384), (1, 129, 640), (2, 70, 17 * 128), (1, 130, 33 * 128), (2, 65, 64 * 128),
          (1, 64, 65 * 128), (1, 9, 130 * 128)]


def same(out, ref, what=''):
    assert out.dtype == ref.dtype, what
    assert out.shape == ref.shape, what
    assert out.stride() == ref.stride(), (what, out.stride(), ref.stride())
    assert torch.equal(out, ref), what


def token_scales(groups, mn, k, use_ue8m0):
    """Scales as DeepGEMM's test makes them: per_token_cast_to_fp8 of random data, [G, mn, kb] when grouped."""
    _, sf = per_token_cast_to_fp8(torch.randn((groups * mn, k), dtype=torch.bfloat16, device='cuda'),
                                  use_ue8m0=use_ue8m0)
    return sf if groups == 1 else sf.view(groups, mn, -1)


def layouts(sf):
    """The input as given (row-major), MN-major (DeepGEMM's with_transpose=False) and a strided slice."""
    mn_major = sf.transpose(-1, -2).contiguous().transpose(-1, -2)
    wide = torch.empty(sf.shape[:-1] + (sf.shape[-1] + 3, ), device='cuda', dtype=sf.dtype)
    wide[..., 1:1 + sf.shape[-1]] = sf
    return {'row-major': sf, 'mn-major': mn_major, 'sliced': wide[..., 1:1 + sf.shape[-1]]}


@pytest.mark.parametrize('groups,mn,k', SF_SHAPES + RAGGED)
def test_transpose_matches_the_reference(groups, mn, k):
    sf = token_scales(groups, mn, k, use_ue8m0=False)
    for name, x in layouts(sf).items():
        out = layout.get_mn_major_tma_aligned_tensor(x)
        if out is x:  # already MN-major and TMA-aligned (mn % 4 == 0): DeepGEMM returns it as is, as we do
            assert name == 'mn-major' and mn % 4 == 0
            continue
        same(out, mn_major_reference(x), name)


@pytest.mark.parametrize('groups,mn,k', SF_SHAPES + RAGGED)
def test_packed_matches_the_reference(groups, mn, k):
    sf = token_scales(groups, mn, k, use_ue8m0=True)
    for name, x in layouts(sf).items():
        same(layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(x), packed_reference(x), name)


def test_column_of_scales_and_single_row():
    for sf in (ue8m0_scales((4097, 1), 'cuda'), ue8m0_scales((1, 57), 'cuda'), ue8m0_scales((3, 1, 1), 'cuda')):
        same(layout.get_mn_major_tma_aligned_tensor(sf), mn_major_reference(sf))
        same(layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), packed_reference(sf))


def test_packed_psum_layout_zeroes_the_gap_rows():
    alignment = deep_gemm.get_mk_alignment_for_contiguous_layout()
    ends = [100, 300, 300, 1000, 4000]
    sf = ue8m0_scales((4097, 57), 'cuda')
    out = layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=torch.tensor(ends, dtype=torch.int32,
                                                                                           device='cuda'))
    same(out, packed_reference(sf, psum_row_mask(ends, 4097, alignment).cuda()))


def k_grouped_case(mn, num_groups, avg_k, gran_k=128):
    """DeepGEMM's enumerate_k_grouped_sf_layout: random group K sizes, per-channel UE8M0 scales [Σk/128, mn]."""
    ks = [(int(random.uniform(0.7, 1.3) * avg_k) + gran_k - 1) // gran_k * gran_k for _ in range(num_groups)]
    x = torch.randn((sum(ks), mn), dtype=torch.bfloat16, device='cuda')
    _, sf = per_channel_cast_to_fp8(x, use_ue8m0=True)
    return ks, sf


@pytest.mark.parametrize('mn', [4096, 7168])
@pytest.mark.parametrize('num_groups,avg_k', [(16, 2048), (8, 4096), (72, 384), (128, 256)])
def test_k_grouped_matches_the_reference(mn, num_groups, avg_k):
    random.seed(mn + num_groups)
    ks, sf = k_grouped_case(mn, num_groups, avg_k)
    grouped_layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    out = layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks, 128, 128)
    same(out, k_grouped_reference(sf, ks, 128))


@pytest.mark.parametrize('k_alignment', [128, 160, 224])
def test_k_grouped_psum_layout(k_alignment):
    random.seed(k_alignment)
    gran_k, mn = 128, 4096
    ks = [(int(random.uniform(0.7, 1.3) * 1024) + 127) // 128 * 128 for _ in range(16)]
    real_ks = [k + (gran_k // 2 if i % 2 else 0) for i, k in enumerate(ks)]  # odd groups end mid-block
    rows = [(k + gran_k - 1) // gran_k for k in real_ks]
    sf = ue8m0_scales((sum(rows), mn), 'cuda')
    ends, start = [], 0
    for k in real_ks:
        ends.append(start + k)
        start = (start + k + k_alignment - 1) // k_alignment * k_alignment
    psum = torch.tensor(ends, dtype=torch.int32, device='cuda')
    reference = k_grouped_reference(sf, real_ks, gran_k)
    fn = layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    same(fn(sf, psum, real_ks, gran_k, k_alignment, use_psum_layout=True), reference)
    aligned_ks = [(k + k_alignment - 1) // k_alignment * k_alignment for k in real_ks]
    for ks_cpu in (aligned_ks, None, []):  # upper-bound row counts: the owned rows match
        out = fn(sf, psum, ks_cpu, gran_k, k_alignment, use_psum_layout=True)
        assert torch.equal(out[:reference.shape[0]], reference)


def test_transform_per_token_on_the_gpu():
    sf = token_scales(1, 4097, 7168, use_ue8m0=False)
    out = deep_gemm.transform_sf_into_required_layout(sf, 4097, 7168, (1, 128, 128), is_sfa=True)
    same(out, mn_major_reference(sf))


def test_layout_kernels_capture_in_a_cuda_graph():
    sf = token_scales(2, 4097, 7296, use_ue8m0=True)
    ks, k_sf = k_grouped_case(4096, 8, 1024)
    grouped_layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    calls = (lambda: layout.get_mn_major_tma_aligned_tensor(sf),
             lambda: layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf),
             lambda: layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(k_sf, grouped_layout, ks, 128, 128))
    eager = [call() for call in calls]  # also compiles the kernels before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = [call() for call in calls]
    for out in captured:
        out.fill_(0) if out.dtype == torch.int32 else out.fill_(float('nan'))
    graph.replay()
    torch.cuda.synchronize()
    for out, ref in zip(captured, eager):
        assert torch.equal(out, ref)


def profiled_kernel_names(fn):
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profiler:
        fn()
        torch.cuda.synchronize()
    # Every row of the profile, as bench_kineto reads its table (it asserts that at most one row matches).
    return [event.key for event in profiler.key_averages()]


def test_kernel_names_are_what_deepgemms_benchmarks_look_for():
    # bench_kineto(fn, 'transpose') / (fn, 'pack_fp32_into_ue8m0') time the one kernel whose name contains the
    # substring; DeepGEMM's GEMM tests count kernels named 'gemm_', which no layout kernel may match.
    sf = token_scales(2, 4097, 7168, use_ue8m0=True)
    ks, k_sf = k_grouped_case(4096, 8, 1024)
    grouped_layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    cases = [(lambda: layout.get_mn_major_tma_aligned_tensor(sf), 'transpose'),
             (lambda: layout.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), 'pack_fp32_into_ue8m0'),
             (lambda: layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(k_sf, grouped_layout, ks, 128,
                                                                                     128), 'pack_fp32_into_ue8m0')]
    for fn, substring in cases:
        names = profiled_kernel_names(fn)
        print(names)
        assert sum(substring in name for name in names) == 1, names
        assert not any('gemm_' in name for name in names), names
