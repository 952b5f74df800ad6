"""The MoE layer with its experts spread over the ranks of a process group (expert parallelism), the unfused way:
dispatch the (token, k) pairs to the rank that holds their expert with NCCL all-to-all, run that rank's experts
with :func:`fp8_moe` (each received pair a token of top-1), send the outputs back, combine on the token's rank.

The steps are plain functions so the bookkeeping can be checked without GPUs: :func:`plan_dispatch` (which pairs
go where, in send order), :func:`local_experts` (a rank's experts on what it received) and :func:`combine`; an
``exchange`` moves rows between ranks (:class:`NcclExchange` on a real group)."""
from dataclasses import dataclass

import torch

from ._layer import fp8_moe
from ._reference import valid_pairs


@dataclass
class Dispatch:
    """Where a rank's pairs go: ``pairs`` (flat (token, k) indices, grouped by destination rank in rank order),
    ``send_counts`` (pairs per rank, on the host) and each sent pair's expert id on its destination rank."""
    pairs: torch.Tensor
    send_counts: list
    local_expert: torch.Tensor


def plan_dispatch(topk_idx, experts, ranks):
    """The dispatch of ``topk_idx`` [T, K] (ids outside [0, experts) skipped) over ``ranks`` ranks holding
    ``experts / ranks`` consecutive experts each. One host sync (the send counts size the exchange)."""
    if experts % ranks:
        raise ValueError(f'experts: expected a multiple of the {ranks} ranks, got {experts}')
    per_rank = experts // ranks
    flat, kept = valid_pairs(topk_idx, experts)
    dest = torch.where(kept, flat // per_rank, ranks)  # skipped pairs sort last and are not sent
    order = torch.argsort(dest, stable=True)
    send_counts = torch.bincount(dest, minlength=ranks + 1)[:ranks].tolist()
    pairs = order[:sum(send_counts)]
    return Dispatch(pairs, send_counts, (flat[pairs] % per_rank).int())


def local_experts(recv_x, recv_expert, w1, w2, *, use_ue8m0=False):
    """This rank's experts on the rows it received: recv_x bf16 [P, H], recv_expert int32 [P] (ids among its own
    experts); bf16 [P, H], row i the output of expert recv_expert[i] on row i (unweighted)."""
    ones = torch.ones((recv_x.shape[0], 1), dtype=torch.float32, device=recv_x.device)
    return fp8_moe(recv_x, recv_expert.view(-1, 1), ones, w1, w2, use_ue8m0=use_ue8m0)


def combine(dispatch, returned, topk_weights, tokens, topk):
    """y bf16 [tokens, H]: each token's returned expert outputs weighted and summed in fp32 (pairs in k order)."""
    hidden = returned.shape[1]
    weights = topk_weights.reshape(-1).float()[dispatch.pairs]
    full = torch.zeros((tokens * topk, hidden), dtype=torch.float32, device=returned.device)
    full[dispatch.pairs] = returned.float() * weights[:, None]
    return full.view(tokens, topk, hidden).sum(1).to(torch.bfloat16)


def ep_fp8_moe(x, topk_idx, topk_weights, w1, w2, exchange, ranks, *, use_ue8m0=False):
    """The layer on this rank's tokens x bf16 [T, H] with global expert ids; w1 and w2 hold this rank's experts
    (E / ranks of them, as for :func:`fp8_moe`). ``exchange`` is an :class:`NcclExchange` of the group (or a stand-in
    with its two methods). bf16 [T, H]."""
    tokens, topk = topk_idx.shape
    dispatch = plan_dispatch(topk_idx, w1[0].shape[0] * ranks, ranks)
    recv_counts = exchange.counts(dispatch.send_counts)
    recv_x = exchange(x[dispatch.pairs // topk], dispatch.send_counts, recv_counts)
    recv_expert = exchange(dispatch.local_expert, dispatch.send_counts, recv_counts)
    out = local_experts(recv_x, recv_expert, w1, w2, use_ue8m0=use_ue8m0)
    returned = exchange(out, recv_counts, dispatch.send_counts)
    return combine(dispatch, returned, topk_weights, tokens, topk)


class NcclExchange:
    """Rows between the ranks of ``group`` with torch.distributed's all-to-all (NCCL on GPUs)."""

    def __init__(self, group=None):
        import torch.distributed as dist
        self.dist, self.group = dist, group

    def counts(self, send_counts):
        send = torch.tensor(send_counts, dtype=torch.int64, device='cuda')
        recv = torch.empty_like(send)
        self.dist.all_to_all_single(recv, send, group=self.group)
        return recv.tolist()

    def __call__(self, tensor, send_counts, recv_counts):
        out = torch.empty((sum(recv_counts), *tensor.shape[1:]), dtype=tensor.dtype, device=tensor.device)
        self.dist.all_to_all_single(out, tensor.contiguous(), recv_counts, send_counts, group=self.group)
        return out
