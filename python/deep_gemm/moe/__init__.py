"""An FP8 mixture-of-experts layer on one GPU (expert parallelism 1), DeepSeek-V3's recipe::

    y[t] = sum over k of topk_weights[t, k] * FFN_e(x[t]),   e = topk_idx[t, k]
    FFN_e(v) = fp8(silu(g) * u) @ W2[e].T   with [g | u] = fp8(v) @ W1[e].T

``fp8(.)`` is DeepGEMM's per-token 1x128 quantisation (``per_token_cast_to_fp8``; with ``use_ue8m0`` its scales are
powers of two); the weights are DeepGEMM's FP8 B operands with 128x128 block scales (``per_block_cast_to_fp8``):
``w1 = (e4m3 [E, 2 * I, H], fp32 [E, 2 * I / 128, H / 128])`` with each expert's gate rows before its up rows,
``w2 = (e4m3 [E, H, I], fp32 [E, H / 128, I / 128])``. This module is tilegemm's own API, not DeepGEMM's: ``import
deep_gemm`` does not load it. Import it by name::

    import deep_gemm.moe as moe

    y = moe.fp8_moe(x, topk_idx, topk_weights, w1, w2)          # x bf16 [T, H] -> y bf16 [T, H]
    ws = moe.Workspace(max_tokens, topk, experts, hidden, intermediate, x.device)
    y = moe.fp8_moe(x, topk_idx, topk_weights, w1, w2, workspace=ws)   # no allocation per call (CUDA graphs)

``topk_idx`` is int32 or int64 [T, K] (K <= 32; ids outside [0, E) are skipped, as DeepEP's -1), ``topk_weights``
fp32 [T, K]; H and I are multiples of 128 and E at most 1024. One call runs six kernels on torch's current stream
with no host sync: route (each (token, k) pair's row in an expert-sorted buffer), dispatch (each token quantised once
and stored at its pairs' rows), grouped GEMM 1 (DeepGEMM's m_grouped_fp8_gemm_nt_contiguous, psum layout), SwiGLU and
quantisation in one kernel, grouped GEMM 2, and the weighted combine (fp32, k order, one bf16 rounding).

:func:`reference` is the float64 math the GPU results are tested against; :func:`unfused` runs the same layer as
separate PyTorch steps around the same grouped GEMMs, the baseline the fused layer is benchmarked against.

Expert parallelism (experts spread over the ranks of a process group), unfused: :func:`ep_fp8_moe` sends each
(token, k) pair to the rank holding its expert with torch.distributed's all-to-all (:class:`NcclExchange`), runs
that rank's experts with :func:`fp8_moe` and sends the outputs back to be combined. Not yet run on several GPUs.
"""
from ._ep import NcclExchange, ep_fp8_moe
from ._layer import Workspace, fp8_moe
from ._reference import reference, unfused

__all__ = ['NcclExchange', 'Workspace', 'ep_fp8_moe', 'fp8_moe', 'reference', 'unfused']
