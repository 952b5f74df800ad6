"""Every exported FP8 GEMM against torch on DeepSeek and ragged shapes (GPU + torch; skipped otherwise).

The reference is computed in FP32 from the UNQUANTISED BF16 inputs, so the check covers the casts, the
scale layouts and the kernel together: calc_diff < 1e-3 (DeepGEMM's FP8 bar). Operands are quantised with
deep_gemm.utils (per-token 1x128 for activations and 1D1D B, per-block 128x128 for 1D2D B), fp32 scales.

Ragged shapes stay inside the contract: TMA needs 16-byte row strides (DeepGEMM has the same requirement),
so N of D is a multiple of 8 (bf16 D) or 4 (fp32 D); M is free. test_tma_alignment.py checks
that the illegal N raise ValueError naming it. References are computed per group in float32 on the GPU, so
every test stays within a few GiB (pytest -n shares one GPU between workers).
"""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import align, per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')
FP8_BAR = 1e-3
# DeepSeek-V3 (M, N, K): attention/MLP projections at decode and prefill sizes, then ragged M and K with
# the smallest legal ragged N (a multiple of 8, for bf16 and fp32 D alike).
SHAPES = [(128, 2112, 7168), (4096, 7168, 2048), (64, 24576, 1536), (1, 4096, 7168), (4096, 576, 7168),
          (129, 264, 384), (3, 80, 320), (257, 136, 7168 + 128)]


def rand(*shape):
    return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)


def diff(out, ref):
    value = float(calc_diff(out.float(), ref))
    print(f'calc_diff {value:.3g}')
    return value


def per_token(x):
    return per_token_cast_to_fp8(x, use_ue8m0=False)


def per_block(x):
    return per_block_cast_to_fp8(x, use_ue8m0=False)


@pytest.mark.parametrize('shape', [(4096, 56), (129, 3), (1, 12), (4, 61, 16), (8, 4, 1)])
@pytest.mark.parametrize('transposed', [False, True])
def test_scale_layout_kernel_matches_the_torch_copy(shape, transposed):
    # CUDA fp32 scales go through tilegemm's layout kernel, CPU ones through a torch copy: same answer.
    sf = torch.randn(*shape, device='cuda')
    if transposed:  # an MN-major but unaligned or oddly strided input
        sf = sf.mT.contiguous().mT
    out = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
    ref = deep_gemm.get_mn_major_tma_aligned_tensor(sf.cpu())
    assert out.stride() == ref.stride() and torch.equal(out.cpu(), ref)


@pytest.mark.parametrize('m,n,k', SHAPES)
def test_fp8_gemm_nt_1d2d(m, n, k):
    a, b = rand(m, k), rand(n, k)
    d = torch.full((m, n), float('nan'), device='cuda', dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt(per_token(a), per_block(b), d)
    assert diff(d, a.float() @ b.float().T) < FP8_BAR


@pytest.mark.parametrize('m,n,k', SHAPES)
@pytest.mark.parametrize('accumulate', ['none', 'c', 'in_place'])
def test_fp8_gemm_nt_1d1d(m, n, k, accumulate):
    a, b = rand(m, k), rand(n, k)
    ref = a.float() @ b.float().T
    d = torch.full((m, n), float('nan'), device='cuda')
    c = None
    if accumulate != 'none':
        c = torch.randn(m, n, device='cuda') * 32
        ref = ref + c
        if accumulate == 'in_place':
            d, c = c, c
    deep_gemm.fp8_gemm_nt(per_token(a), per_token(b), d, c=c, recipe=(1, 1, 128))
    assert diff(d, ref) < FP8_BAR


def test_recipe_pairs_and_pre_transformed_scales_give_the_same_result():
    m, n, k = 256, 2112, 7168
    a, b = per_token(rand(m, k)), per_block(rand(n, k))
    d1 = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    d2, d3 = torch.empty_like(d1), torch.empty_like(d1)
    deep_gemm.fp8_gemm_nt(a, b, d1)
    deep_gemm.fp8_gemm_nt(a, b, d2, recipe_a=(1, 128), recipe_b=(128, 128), disable_ue8m0_cast=True)
    sfa = deep_gemm.transform_sf_into_required_layout(a[1], m, k, (1, 128, 128), is_sfa=True)
    assert sfa.stride() == (1, deep_gemm.get_tma_aligned_size(m, 4))
    deep_gemm.fp8_gemm_nt((a[0], sfa), b, d3)
    assert torch.equal(d1, d2) and torch.equal(d1, d3)


@pytest.mark.parametrize('layout', ['nn', 'tn', 'tt'])
@pytest.mark.parametrize('m,n,k', [(128, 2112, 7168), (129, 264, 384)])
def test_transposed_names_on_k_major_storage(layout, m, n, k):
    # SM90 reads FP8 only K-major, so the nn/tn/tt names take transposed VIEWS of K-major storage (DeepGEMM's
    # contract there); the scales are transposed with their operand.
    x, y = rand(m, k), rand(n, k)
    a, b = per_token(x), per_block(y)
    a_arg = (a[0].T, a[1].T) if layout[0] == 't' else a
    b_arg = (b[0].T, b[1].T) if layout[1] == 'n' else b
    d = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)
    getattr(deep_gemm, f'fp8_gemm_{layout}')(a_arg, b_arg, d)
    assert diff(d, x.float() @ y.float().T) < FP8_BAR


def test_empty_and_k_zero():
    a, b = per_token(rand(0, 256)), per_block(rand(128, 256))
    deep_gemm.fp8_gemm_nt(a, b, torch.empty(0, 128, device='cuda', dtype=torch.bfloat16))
    c = torch.randn(64, 128, device='cuda')
    d = torch.full_like(c, float('nan'))
    empty_k = (torch.empty(64, 0, device='cuda', dtype=torch.float8_e4m3fn),
               torch.empty(64, 0, device='cuda'))
    b_empty = (torch.empty(128, 0, device='cuda', dtype=torch.float8_e4m3fn), torch.empty(128, 0, device='cuda'))
    deep_gemm.fp8_gemm_nt(empty_k, b_empty, d, c=c, recipe=(1, 1, 128))
    assert torch.equal(d, c)


def grouped_weights(groups, n, k):
    w = rand(groups, n, k)
    pairs = [per_block(w[g]) for g in range(groups)]
    return w, (torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs]))


@pytest.mark.parametrize('n,k', [(4096, 7168), (7168, 2048), (576, 384)])
@pytest.mark.parametrize('use_psum_layout', [False, True])
def test_m_grouped_contiguous(n, k, use_psum_layout):
    ms = [300, 1, 0, 513]
    aligned = [align(m, 128) for m in ms]
    total = sum(aligned)
    x, (w, b) = rand(total, k), grouped_weights(len(ms), n, k)
    rows = torch.full((total, ), -1, dtype=torch.int32, device='cuda')
    ref = torch.zeros(total, n, device='cuda')
    ends, start = [], 0
    for g, (m, am) in enumerate(zip(ms, aligned)):
        rows[start:start + m] = g
        x[start + m:start + am] = 0  # padding rows of A are zero, as DeepGEMM's callers make them
        # Per group: gathering w per row instead would build [M, N, K] in fp32 (89 GiB at N=4096, K=7168).
        ref[start:start + m] = x[start:start + m].float() @ w[g].float().T
        ends.append(start + m)
        start += am
    layout = torch.tensor(ends, dtype=torch.int32, device='cuda') if use_psum_layout else rows
    d = torch.full((total, n), 7.0, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous(per_token(x), b, d, layout, use_psum_layout=use_psum_layout)
    valid = rows >= 0
    # ensure_zero_padding launches nothing (DeepGEMM 2.6.1 on SM90): see test_gpu_gemm's M-grouped test.
    if use_psum_layout:
        assert diff(d[valid], ref[valid]) < FP8_BAR
    else:
        assert diff(d, ref) < FP8_BAR
        assert bool((d[~valid] == 0).all())


def test_m_grouped_nn_contiguous_on_k_major_storage():
    groups, m_per, n, k = 4, 256, 4096, 7168
    x, (w, b) = rand(groups * m_per, k), grouped_weights(groups, n, k)
    layout = torch.arange(groups, dtype=torch.int32, device='cuda').repeat_interleave(m_per)
    d = torch.empty(groups * m_per, n, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nn_contiguous(per_token(x), (b[0].mT, b[1].mT), d, layout)
    ref = torch.bmm(x.view(groups, m_per, k).float(), w.float().mT).view(-1, n)
    assert diff(d, ref) < FP8_BAR


def masked_operands(groups, m_max, n, k):
    x, (w, b) = rand(groups, m_max, k), grouped_weights(groups, n, k)
    pairs = [per_token(x[g]) for g in range(groups)]
    a = (torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs]))
    return x, w, a, b


@pytest.mark.parametrize('n,k', [(4096, 7168), (7168, 2048), (264, 384)])
def test_m_grouped_masked(n, k):
    groups, m_max = 4, 256
    x, w, a, b = masked_operands(groups, m_max, n, k)
    masked = torch.tensor([0, 17, 256, 100], dtype=torch.int32, device='cuda')
    d = torch.empty(groups, m_max, n, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked, 128)
    for g, m in enumerate(masked.tolist()):
        if m:
            assert diff(d[g, :m], x[g, :m].float() @ w[g].float().T) < FP8_BAR


def test_m_grouped_masked_in_a_cuda_graph():
    groups, m_max, n, k = 8, 128, 2048, 7168
    x, w, a, b = masked_operands(groups, m_max, n, k)
    d = torch.zeros(groups, m_max, n, device='cuda', dtype=torch.bfloat16)
    masked = torch.full((groups, ), 64, dtype=torch.int32, device='cuda')
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked, 64)  # compile (and convert layouts) outside
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked, 64)
    for counts in ([5, 0, 128, 64, 1, 127, 33, 100], [128] * 8):
        masked.copy_(torch.tensor(counts, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        for g, m in enumerate(counts):
            if m:
                assert diff(d[g, :m], x[g, :m].float() @ w[g].float().T) < FP8_BAR


def k_grouped_operand(x_groups):
    """DeepGEMM's SM90 K-grouped operand from per-group BF16 [mn, k_g] blocks: the per-token FP8 blocks one
    after another (flat), and the scales [mn, ΣK/128] with the groups' K-blocks side by side."""
    casts = [per_token(x) for x in x_groups if x.size(1)]
    data = torch.cat([c[0].flatten() for c in casts])
    return data, torch.cat([c[1] for c in casts], dim=1)


@pytest.mark.parametrize('m,n', [(4096, 7168), (7168, 2048), (129, 264)])
@pytest.mark.parametrize('ks', [[128, 0, 384, 4096], [2048] * 4])
@pytest.mark.parametrize('with_c', [True, False])
def test_k_grouped_nt_contiguous(m, n, ks, with_c):
    xs, ys = [rand(m, k) for k in ks], [rand(n, k) for k in ks]
    a, b = k_grouped_operand(xs), k_grouped_operand(ys)
    c = torch.randn(len(ks), m, n, device='cuda') if with_c else None
    d = torch.full((len(ks), m, n), float('nan'), device='cuda')
    layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, layout, c=c)
    for g, (x, y) in enumerate(zip(xs, ys)):
        ref = x.float() @ y.float().T + (c[g] if with_c else 0)
        if ks[g] == 0:
            assert torch.equal(d[g], ref if with_c else torch.zeros_like(ref))
        else:
            assert diff(d[g], ref) < FP8_BAR
