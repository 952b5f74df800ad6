"""The layer's float64 reference and its unfused form (separate PyTorch steps around the same grouped GEMMs)."""
import torch

from .. import _C
from ..utils.math import per_token_cast_to_fp8


def _dequantize_blocks(w, sf):
    """e4m3 [N, K] with fp32 [ceil(N/128), ceil(K/128)] block scales, as float64."""
    n, k = w.shape
    scales = sf.double().repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    return w.double() * scales


def valid_pairs(topk_idx, experts):
    """The flat (token, k) expert ids as int64 and which of them are kept (in [0, experts))."""
    flat = topk_idx.reshape(-1).long()
    return flat, (flat >= 0) & (flat < experts)


def reference(x, topk_idx, topk_weights, w1, w2, use_ue8m0=False):
    """float64 [T, H]: the layer's math on the FP8 input (x quantised as the layer does) and dequantised weights, the
    intermediate kept in float64 (the layer quantises it: the difference is that rounding)."""
    tokens, hidden = x.shape
    topk = topk_idx.shape[1]
    experts, inter = w1[0].shape[0], w1[0].shape[1] // 2
    xq, xs = per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    x_hat = xq.double() * xs.double().repeat_interleave(128, 1)[:, :hidden]
    flat, valid = valid_pairs(topk_idx, experts)
    token_of = torch.arange(tokens * topk, device=x.device) // topk
    weight = topk_weights.reshape(-1).double()
    y = torch.zeros((tokens, hidden), dtype=torch.float64, device=x.device)
    for e in torch.unique(flat[valid]).tolist():
        pairs = torch.nonzero(valid & (flat == e)).squeeze(1)
        h = x_hat[token_of[pairs]] @ _dequantize_blocks(w1[0][e], w1[1][e]).T
        act = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
        out = act @ _dequantize_blocks(w2[0][e], w2[1][e]).T
        y.index_add_(0, token_of[pairs], out * weight[pairs, None])
    return y


def _scatter_fp8(values, rows, data, sf, use_ue8m0):
    q, s = per_token_cast_to_fp8(values, use_ue8m0=use_ue8m0)
    data[rows] = q
    sf[rows] = s


def unfused(x, topk_idx, topk_weights, w1, w2, *, use_ue8m0=False):
    """The layer as separate steps: routing by a stable sort, PyTorch gather and per-token casts
    (deep_gemm.utils.per_token_cast_to_fp8), deep_gemm.m_grouped_fp8_gemm_nt_contiguous (psum layout, the buffers the
    fused layer lays out), torch's silu and the weighted sum. bf16 [T, H]; no host sync."""
    from .. import m_grouped_fp8_gemm_nt_contiguous
    return unfused_steps(m_grouped_fp8_gemm_nt_contiguous, x, topk_idx, topk_weights, w1, w2, use_ue8m0=use_ue8m0)


def unfused_steps(grouped_gemm, x, topk_idx, topk_weights, w1, w2, *, use_ue8m0=False):
    """:func:`unfused` with ``grouped_gemm`` (m_grouped_fp8_gemm_nt_contiguous of this package or of DeepGEMM)."""
    tokens, hidden = x.shape
    topk = topk_idx.shape[1]
    experts, inter = w1[0].shape[0], w1[0].shape[1] // 2
    device = x.device
    flat, valid = valid_pairs(topk_idx, experts)
    expert = torch.where(valid, flat, experts)  # skipped pairs sort last
    order = torch.argsort(expert, stable=True)
    counts = torch.bincount(expert, minlength=experts + 1)[:experts]
    aligned = (counts + 127) // 128 * 128
    starts = torch.cumsum(aligned, 0) - aligned
    group_end = (starts + counts).int()
    sorted_expert = expert[order]
    first_of_expert = torch.cumsum(counts, 0) - counts
    kept = sorted_expert < experts
    safe_expert = sorted_expert.clamp(max=experts - 1)
    ranks = torch.arange(order.numel(), device=device) - first_of_expert[safe_expert]
    rows_sorted = torch.where(kept, starts[safe_expert] + ranks, -1)
    row_of = torch.empty_like(rows_sorted).scatter_(0, order, rows_sorted)

    # Skipped pairs go to a spare row past every group (the GEMMs never compute it), so no step depends on how many
    # pairs are kept (which only a host sync would tell). Padding rows stay uninitialised: each row's results depend
    # on that row alone, and no padding row is read back.
    rows = _C.moe_buffer_rows(tokens, topk, experts)
    spare = rows
    pair_rows = torch.where(row_of >= 0, row_of, spare)
    a1 = torch.empty((rows + 128, hidden), dtype=torch.float8_e4m3fn, device=device)
    sfa1 = torch.empty((hidden // 128, rows + 128), dtype=torch.float32, device=device).T
    token_of = torch.arange(tokens * topk, device=device) // topk
    _scatter_fp8(x[token_of], pair_rows, a1, sfa1, use_ue8m0)
    h1 = torch.empty((rows + 128, 2 * inter), dtype=torch.bfloat16, device=device)
    grouped_gemm((a1, sfa1), w1, h1, group_end, use_psum_layout=True)
    h = h1[pair_rows].float()
    act = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
    a2 = torch.empty((rows + 128, inter), dtype=torch.float8_e4m3fn, device=device)
    sfa2 = torch.empty((inter // 128, rows + 128), dtype=torch.float32, device=device).T
    _scatter_fp8(act, pair_rows, a2, sfa2, use_ue8m0)
    y2 = torch.empty((rows + 128, hidden), dtype=torch.bfloat16, device=device)
    grouped_gemm((a2, sfa2), w2, y2, group_end, use_psum_layout=True)
    weighted = y2[pair_rows].float() * topk_weights.reshape(-1, 1).float()
    weighted = torch.where((row_of >= 0)[:, None], weighted, 0.0)  # a spare row may hold NaN
    return weighted.view(tokens, topk, hidden).sum(1).to(torch.bfloat16)
