"""deep_gemm.moe's expert-parallel layer without GPUs: ep_fp8_moe run by 1, 2 and 4 ranks as threads of this
process, the all-to-all played by a mailbox and each rank's experts by the float64 layer, must give every rank the
single-device reference on all experts: the dispatch plan, the exchanges in both directions and the combine."""
import threading

import pytest

torch = pytest.importorskip('torch', reason='deep_gemm.moe takes torch tensors')

import deep_gemm.moe as moe  # noqa: E402
from deep_gemm.moe import _ep  # noqa: E402


class Mailbox:
    """all_to_all between `ranks` threads: each deposits its per-rank pieces, all wait, each takes its own."""

    def __init__(self, ranks):
        self.ranks, self.barrier, self.slots = ranks, threading.Barrier(ranks), {}

    def rank(self, r):
        box = self

        class Exchange:
            def counts(self, send_counts):
                return [int(c) for c in box._swap(r, [torch.tensor(c) for c in send_counts])]

            def __call__(self, tensor, send_counts, recv_counts):
                pieces = list(torch.split(tensor, send_counts))
                received = box._swap(r, pieces)
                assert [p.shape[0] for p in received] == recv_counts
                return torch.cat(received) if received else tensor[:0]
        return Exchange()

    def _swap(self, r, pieces):
        self.barrier.wait()
        self.slots[r] = pieces
        self.barrier.wait()
        received = [self.slots[src][r] for src in range(self.ranks)]
        self.barrier.wait()
        return received


def fp8_weights(experts, rows, cols, generator):
    w = torch.randn((experts, rows, cols), generator=generator) / cols**0.5
    sf = torch.rand((experts, rows // 128, cols // 128), generator=generator) + 0.5
    return (w / sf.repeat_interleave(128, 1).repeat_interleave(128, 2)).to(torch.float8_e4m3fn), sf


@pytest.mark.parametrize('ranks', [1, 2, 4])
def test_every_rank_gets_the_single_device_layer(ranks, monkeypatch):
    g = torch.Generator().manual_seed(ranks)
    experts, topk, hidden, inter = 8, 3, 128, 128
    w1, w2 = fp8_weights(experts, 2 * inter, hidden, g), fp8_weights(experts, hidden, inter, g)
    per_rank = experts // ranks

    def local_float64(recv_x, recv_expert, w1_local, w2_local, use_ue8m0=False):
        ones = torch.ones((recv_x.shape[0], 1))
        return moe.reference(recv_x, recv_expert.view(-1, 1), ones, w1_local, w2_local)
    monkeypatch.setattr(_ep, 'local_experts', local_float64)

    inputs = []
    for r in range(ranks):
        tokens = 5 + 3 * r  # ragged token counts per rank
        x = torch.randn((tokens, hidden), generator=g).to(torch.bfloat16)
        idx = torch.stack([torch.randperm(experts, generator=g)[:topk] for _ in range(tokens)])
        idx[0, 1] = -1  # a skipped pair
        weights = torch.rand((tokens, topk), generator=g)
        inputs.append((x, idx, weights))
    box, results, errors = Mailbox(ranks), [None] * ranks, []

    def run(r):
        try:
            local = slice(r * per_rank, (r + 1) * per_rank)
            x, idx, weights = inputs[r]
            results[r] = _ep.ep_fp8_moe(x, idx, weights, (w1[0][local], w1[1][local]), (w2[0][local], w2[1][local]),
                                        box.rank(r), ranks)
        except Exception as e:  # noqa: BLE001 - reported below, the other threads must not hang
            errors.append(e)
            box.barrier.abort()
    threads = [threading.Thread(target=run, args=(r, )) for r in range(ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r, (x, idx, weights) in enumerate(inputs):
        want = moe.reference(x, idx, weights, w1, w2)
        got = results[r].double()
        assert got.shape == want.shape
        assert torch.allclose(got, want, rtol=2**-7, atol=1e-6 * want.abs().max().item()), r


def test_plan_dispatch_groups_pairs_by_rank_and_names_bad_expert_counts():
    idx = torch.tensor([[7, 0, -1], [2, 5, 8]])
    plan = _ep.plan_dispatch(idx, 8, 4)
    assert plan.send_counts == [1, 1, 1, 1]  # ids 0 | 2 | 5 | 7; -1 and 8 skipped
    assert plan.pairs.tolist() == [1, 3, 4, 0] and plan.local_expert.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match='experts: expected a multiple of the 3 ranks'):
        _ep.plan_dispatch(idx, 8, 3)
