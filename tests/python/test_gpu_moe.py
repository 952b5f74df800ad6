"""deep_gemm.moe on the GPU (skipped without one): the fused FP8 MoE layer, its unfused form and the expert-parallel
layer on a one-rank NCCL group against the float64 reference (DeepGEMM's calc_diff < 1e-3) for 1 to 700 tokens,
skipped ids, tokens with no expert, int32 and int64 ids, UE8M0 scales; the routing's layout (every kept pair one row
inside its expert's segment); a reused Workspace, torch's current stream and a CUDA graph. Every case draws fresh
random inputs."""
import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
import deep_gemm.moe as moe  # noqa: E402
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils.math import per_block_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def weights(experts, hidden, inter, use_ue8m0=False):
    def cast(n, k):
        data = torch.empty((experts, n, k), dtype=torch.float8_e4m3fn, device='cuda')
        sf = torch.empty((experts, n // 128, k // 128), dtype=torch.float32, device='cuda')
        for e in range(experts):
            data[e], sf[e] = per_block_cast_to_fp8(torch.randn(n, k, device='cuda', dtype=torch.bfloat16) * k**-0.5,
                                                   use_ue8m0=use_ue8m0)
        return data, sf

    return cast(2 * inter, hidden), cast(hidden, inter)


def routing(tokens, experts, topk, skipped=0.0, dtype=torch.int64):
    scores = torch.randn(tokens, experts, device='cuda')
    topk_weights, topk_idx = torch.topk(scores.softmax(-1), topk, dim=-1)
    if skipped:
        drop = torch.rand(tokens, topk, device='cuda') < skipped
        topk_idx = topk_idx.masked_fill(drop, -1)
        topk_weights = topk_weights.masked_fill(drop, 0)
    return topk_idx.to(dtype), topk_weights.float()


@pytest.mark.parametrize('tokens', [1, 3, 64, 700])
@pytest.mark.parametrize('experts,topk,hidden,inter', [(16, 4, 512, 256), (64, 8, 1024, 384)])
def test_layer_matches_the_reference(tokens, experts, topk, hidden, inter):
    w1, w2 = weights(experts, hidden, inter)
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16, device='cuda')
    topk_idx, topk_weights = routing(tokens, experts, topk)
    y = moe.fp8_moe(x, topk_idx, topk_weights, w1, w2)
    assert y.dtype == torch.bfloat16 and y.shape == (tokens, hidden)
    ref = moe.reference(x, topk_idx, topk_weights, w1, w2)
    assert calc_diff(y.double(), ref) < 1e-3
    assert calc_diff(moe.unfused(x, topk_idx, topk_weights, w1, w2).double(), ref) < 1e-3


@pytest.mark.parametrize('dtype', [torch.int32, torch.int64])
def test_skipped_ids_and_tokens_with_no_expert(dtype):
    experts, topk, hidden, inter, tokens = 32, 6, 256, 256, 200
    w1, w2 = weights(experts, hidden, inter)
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16, device='cuda')
    topk_idx, topk_weights = routing(tokens, experts, topk, skipped=0.3, dtype=dtype)
    topk_idx[7] = -1  # a token routed nowhere gets zeros
    topk_idx[8, 0] = experts  # an id past the experts is skipped like -1
    topk_idx[8, 1] = -5
    topk_weights[8, :2] = float('nan')  # ... and its weight never read
    out = torch.full((tokens, hidden), float('nan'), dtype=torch.bfloat16, device='cuda')
    ws = moe.Workspace(tokens, topk, experts, hidden, inter, x.device)
    assert moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out=out, workspace=ws) is out
    assert not out[7].any()
    keep = (topk_idx >= 0) & (topk_idx < experts)
    ref = moe.reference(x, topk_idx, torch.where(keep, topk_weights, 0.0), w1, w2)
    assert calc_diff(out.double(), ref) < 1e-3

    # The layout route made: each kept pair one row, inside its expert's segment, segments on 128-row boundaries.
    row_of, group_end = ws.row_of(tokens).cpu(), ws.group_end.cpu().long()
    assert (row_of[~keep.cpu()] == -1).all()
    kept_rows = row_of[keep.cpu()]
    assert kept_rows.unique().numel() == kept_rows.numel()
    counts = torch.bincount(topk_idx[keep].long().cpu(), minlength=experts)
    starts = group_end - counts
    assert (starts % 128 == 0).all() and (starts[1:] >= group_end[:-1]).all()
    expert_of = topk_idx.long().cpu()[keep.cpu()]
    assert ((kept_rows >= starts[expert_of]) & (kept_rows < group_end[expert_of])).all()


def test_ue8m0_scales():
    experts, topk, hidden, inter, tokens = 8, 2, 512, 512, 48
    w1, w2 = weights(experts, hidden, inter, use_ue8m0=True)
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16, device='cuda')
    topk_idx, topk_weights = routing(tokens, experts, topk)
    y = moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, use_ue8m0=True)
    ref = moe.reference(x, topk_idx, topk_weights, w1, w2, use_ue8m0=True)
    assert calc_diff(y.double(), ref) < 1e-3
    # The dispatched scales are powers of two.
    ws = moe.Workspace(tokens, topk, experts, hidden, inter, x.device)
    moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, use_ue8m0=True, workspace=ws)
    rows = ws.row_of(tokens).reshape(-1).long()
    scales = ws.sfa1[rows]
    assert (torch.frexp(scales).mantissa == 0.5).all()


def test_workspace_reuse_current_stream_and_cuda_graph():
    experts, topk, hidden, inter = 16, 4, 512, 256
    w1, w2 = weights(experts, hidden, inter)
    ws = moe.Workspace(96, topk, experts, hidden, inter, torch.device('cuda'))
    for tokens in (96, 5):  # a workspace serves any token count up to its own
        x = torch.randn(tokens, hidden, dtype=torch.bfloat16, device='cuda')
        topk_idx, topk_weights = routing(tokens, experts, topk, dtype=torch.int32)
        ref = moe.reference(x, topk_idx, topk_weights, w1, w2)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            y = moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, workspace=ws)
        stream.synchronize()
        assert calc_diff(y.double(), ref) < 1e-3

    x = torch.randn(32, hidden, dtype=torch.bfloat16, device='cuda')
    topk_idx, topk_weights = routing(32, experts, topk)
    out = torch.empty(32, hidden, dtype=torch.bfloat16, device='cuda')
    moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out=out, workspace=ws)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, out=out, workspace=ws)
    x.copy_(torch.randn_like(x))
    topk_idx.copy_(routing(32, experts, topk)[0])
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert calc_diff(out.double(), moe.reference(x, topk_idx, topk_weights, w1, w2)) < 1e-3


def test_expert_parallel_layer_on_a_one_rank_nccl_group(tmp_path):
    import torch.distributed as dist
    experts, topk, hidden, inter, tokens = 16, 4, 512, 256, 100
    w1, w2 = weights(experts, hidden, inter)
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16, device='cuda')
    topk_idx, topk_weights = routing(tokens, experts, topk, skipped=0.1)
    dist.init_process_group('nccl', init_method=f'file://{tmp_path}/store', rank=0, world_size=1)
    try:
        y = moe.ep_fp8_moe(x, topk_idx, topk_weights, w1, w2, moe.NcclExchange(), 1)
    finally:
        dist.destroy_process_group()
    keep = (topk_idx >= 0) & (topk_idx < experts)
    ref = moe.reference(x, topk_idx, torch.where(keep, topk_weights, 0.0), w1, w2)
    assert calc_diff(y.double(), ref) < 1e-3
