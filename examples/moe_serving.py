#!/usr/bin/env python3
"""A DeepSeek-V3 MoE layer's forward pass as a serving engine (vLLM, SGLang) runs it through deep_gemm.

One rank of expert parallelism holds 8 routed experts (hidden 7168, expert width 2048) and the shared expert.
Tokens are routed to 2 of the 8, so every routed row is one (token, expert) pair. Two paths, as the engines
have them:

- decode (low latency): rows are dispatched into a [experts, max_m, hidden] buffer with a per-expert count
  (masked_m), quantised to FP8 per token (1x128 scales), then up/gate and down run as masked grouped GEMMs with
  SwiGLU and a second quantisation between them; the whole step is captured in one CUDA graph and replayed on
  new tokens and new routing (masked_m lives on the GPU, so nothing is recaptured).
- prefill: rows are sorted by expert into the contiguous layout (each expert's block padded to 128 rows,
  padding marked -1 in m_indices) and run as contiguous grouped GEMMs.
- the shared expert (dense FP8 GEMMs, per-token cast inside) under torch.compile(fullgraph=True): deep_gemm's
  functions are torch.library ops there, so the compiler traces them with no graph break.

Every step is timed with deep_gemm.testing.bench (L2 flushed) next to a BF16 torch implementation (a per-expert
matmul loop, what an engine without grouped kernels runs) and, with --deepgemm FOLDER, DeepGEMM on the same
FP8 bytes in the same process. Outputs are checked against a float32 reference of the unquantised layer, the
CUDA-graph replay against the eager pass (bitwise), and the compiled shared expert against the eager one.

    python examples/moe_serving.py [--deepgemm /tmp/dg] [--decode-tokens 512] [--prefill-tokens 4096] [--out DIR]

Exit status: 0 when every path ran and every check held, 1 otherwise (each failure printed), 77 without torch
or a GPU.
"""
import argparse
import json
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print('moe_serving.py needs PyTorch with CUDA (pip install torch); it is not installed')
    sys.exit(77)
if not torch.cuda.is_available():
    print('moe_serving.py needs a CUDA GPU (SM90); torch.cuda.is_available() is False')
    sys.exit(77)

import deep_gemm  # noqa: E402
from deep_gemm.testing import bench, calc_diff  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

HIDDEN, INTER, EXPERTS, TOP_K, ALIGN = 7168, 2048, 8, 2, 128
# Against the float32 reference of the unquantised layer: two FP8 GEMMs with a requantisation between them.
LAYER_DIFF_LIMIT = 5e-3
# The same FP8 bytes through two libraries, or eager against compiled: only accumulation order differs.
SAME_INPUT_DIFF_LIMIT = 1e-4
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def quantise_rows(x):
    """[..., K] BF16 -> (FP8 [..., K], FP32 scales [..., K / 128]): DeepSeek's per-token 1x128 cast."""
    shape = x.shape
    x_fp8, sf = per_token_cast_to_fp8(x.reshape(-1, shape[-1]), use_ue8m0=False)
    return x_fp8.view(shape), sf.view(*shape[:-1], -1)


def pairs(x):
    """[tokens, hidden] -> [tokens * TOP_K, hidden]: each token once per chosen expert, in routing order."""
    return x[:, None].expand(-1, TOP_K, -1).reshape(-1, x.size(-1))


def swiglu(up_gate):
    gate, up = up_gate.chunk(2, dim=-1)
    return F.silu(gate.float()) * up.float()


class Weights:
    """BF16 weights (for torch and the reference) and their 128x128 block FP8 casts (for the GEMMs)."""

    def __init__(self, generator):
        def randn(*shape, scale):
            return (torch.randn(*shape, device='cuda', generator=generator) * scale).to(torch.bfloat16)
        self.w13 = randn(EXPERTS, 2 * INTER, HIDDEN, scale=HIDDEN ** -0.5)
        self.w2 = randn(EXPERTS, HIDDEN, INTER, scale=INTER ** -0.5)
        self.shared_w13 = randn(2 * INTER, HIDDEN, scale=HIDDEN ** -0.5)
        self.shared_w2 = randn(HIDDEN, INTER, scale=INTER ** -0.5)
        self.w13_fp8 = self._per_block(self.w13)
        self.w2_fp8 = self._per_block(self.w2)
        self.shared_w13_fp8 = per_block_cast_to_fp8(self.shared_w13, use_ue8m0=False)
        self.shared_w2_fp8 = per_block_cast_to_fp8(self.shared_w2, use_ue8m0=False)

    @staticmethod
    def _per_block(w):
        pairs = [per_block_cast_to_fp8(w[e], use_ue8m0=False) for e in range(w.size(0))]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def route(tokens, generator):
    """Each token's TOP_K distinct experts and their weights, as a router's top-k softmax gives them."""
    logits = torch.randn(tokens, EXPERTS, device='cuda', generator=generator)
    weights, ids = logits.softmax(dim=-1).topk(TOP_K, dim=-1)
    return ids.int(), (weights / weights.sum(dim=-1, keepdim=True)).float()


def routed_torch(w, x, ids, topk_w, dtype):
    """The routed experts in torch, one matmul per expert (BF16 for the baseline, float32 for the reference)."""
    out = torch.zeros(x.size(0), HIDDEN, device='cuda', dtype=torch.float32)
    for e in range(EXPERTS):
        token, slot = (ids == e).nonzero(as_tuple=True)
        if token.numel() == 0:
            continue
        h = swiglu(x[token].to(dtype) @ w.w13[e].to(dtype).T).to(dtype)
        out.index_add_(0, token, (h @ w.w2[e].to(dtype).T).float() * topk_w[token, slot, None])
    return out


def shared_torch(w, x, dtype):
    h = swiglu(x.to(dtype) @ w.shared_w13.to(dtype).T).to(dtype)
    return (h @ w.shared_w2.to(dtype).T).float()


class Decode:
    """The low-latency path on static buffers, so that one CUDA graph holds it and replays on new inputs."""

    def __init__(self, lib, w, tokens):
        self.lib, self.w, self.max_m = lib, w, tokens  # an expert receives at most every token
        self.expected_m = tokens * TOP_K // EXPERTS
        self.x = torch.zeros(tokens, HIDDEN, device='cuda', dtype=torch.bfloat16)
        self.ids = torch.zeros(tokens, TOP_K, device='cuda', dtype=torch.int32)
        self.topk_w = torch.zeros(tokens, TOP_K, device='cuda', dtype=torch.float32)
        self.packed = torch.zeros(EXPERTS, self.max_m, HIDDEN, device='cuda', dtype=torch.bfloat16)
        # Rows past masked_m are never written by the masked GEMMs; zeros keep the combine's gather finite.
        self.up_gate = torch.zeros(EXPERTS, self.max_m, 2 * INTER, device='cuda', dtype=torch.bfloat16)
        self.down = torch.zeros(EXPERTS, self.max_m, HIDDEN, device='cuda', dtype=torch.bfloat16)

    def load(self, x, ids, topk_w):
        self.x.copy_(x)
        self.ids.copy_(ids)
        self.topk_w.copy_(topk_w)

    def dispatch(self):
        """Packs each (token, expert) row into its expert's next slot, as DeepEP's low-latency dispatch does."""
        flat = self.ids.view(-1).long()
        one_hot = (flat[:, None] == torch.arange(EXPERTS, device='cuda')).long()  # F.one_hot may sync
        self.slot = (one_hot.cumsum(dim=0) - 1).gather(1, flat[:, None]).view(-1)
        self.masked_m = one_hot.sum(dim=0).int()
        self.packed[flat, self.slot] = pairs(self.x)
        self.a = quantise_rows(self.packed)

    def up_gate_gemm(self):
        self.lib.m_grouped_fp8_gemm_nt_masked(self.a, self.w.w13_fp8, self.up_gate, self.masked_m, self.expected_m)

    def activation(self):
        self.h = quantise_rows(swiglu(self.up_gate).to(torch.bfloat16))

    def down_gemm(self):
        self.lib.m_grouped_fp8_gemm_nt_masked(self.h, self.w.w2_fp8, self.down, self.masked_m, self.expected_m)

    def combine(self):
        rows = self.down[self.ids.view(-1).long(), self.slot].view(-1, TOP_K, HIDDEN).float()
        self.out = (rows * self.topk_w[..., None]).sum(dim=1)

    def forward(self):
        self.dispatch()
        self.up_gate_gemm()
        self.activation()
        self.down_gemm()
        self.combine()
        return self.out

    def capture(self):
        """A CUDA graph of forward() (warmed up on a side stream first, as torch.cuda.graph asks)."""
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                self.forward()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self.forward()
        return graph, out


class Prefill:
    """The prefill path: rows sorted by expert into 128-aligned blocks, contiguous grouped GEMMs."""

    def __init__(self, lib, w, x, ids, topk_w):
        self.lib, self.w, self.tokens, self.topk_w = lib, w, x.size(0), topk_w
        flat = ids.view(-1).long()
        counts = torch.bincount(flat, minlength=EXPERTS).tolist()  # engines read these counts on the host too
        starts, total = [], 0
        for c in counts:
            starts.append(total)
            total += -(-c // ALIGN) * ALIGN
        order = torch.argsort(flat, stable=True)
        rank_in_expert = torch.empty_like(order)
        offsets = torch.tensor(starts, device='cuda')
        first_of = torch.cumsum(torch.tensor([0] + counts[:-1], device='cuda'), dim=0)
        rank_in_expert[order] = torch.arange(order.numel(), device='cuda') - first_of[flat[order]]
        self.position = offsets[flat] + rank_in_expert  # row of each (token, expert) pair in the layout
        self.m_indices = torch.full((total, ), -1, device='cuda', dtype=torch.int32)
        self.m_indices[self.position] = flat.int()
        rows = torch.zeros(total, HIDDEN, device='cuda', dtype=torch.bfloat16)
        rows[self.position] = pairs(x)
        self.rows = rows
        self.up_gate = torch.empty(total, 2 * INTER, device='cuda', dtype=torch.bfloat16)
        self.down = torch.empty(total, HIDDEN, device='cuda', dtype=torch.bfloat16)

    def quantise(self):
        self.a = quantise_rows(self.rows)

    def up_gate_gemm(self):
        self.lib.m_grouped_fp8_gemm_nt_contiguous(self.a, self.w.w13_fp8, self.up_gate, self.m_indices)

    def activation(self):
        self.h = quantise_rows(swiglu(self.up_gate).to(torch.bfloat16))

    def down_gemm(self):
        self.lib.m_grouped_fp8_gemm_nt_contiguous(self.h, self.w.w2_fp8, self.down, self.m_indices)

    def combine(self):
        rows = self.down[self.position].view(self.tokens, TOP_K, HIDDEN).float()
        self.out = (rows * self.topk_w[..., None]).sum(dim=1)

    def forward(self):
        self.quantise()
        self.up_gate_gemm()
        self.activation()
        self.down_gemm()
        self.combine()
        return self.out


def shared_expert(lib, w):
    """The shared expert as a function of the BF16 tokens: per-token cast, FP8 GEMM, SwiGLU, cast, FP8 GEMM."""
    def forward(x):
        up_gate = torch.empty(x.size(0), 2 * INTER, device=x.device, dtype=torch.bfloat16)
        lib.fp8_gemm_nt(per_token_cast_to_fp8(x, use_ue8m0=False), w.shared_w13_fp8, up_gate)
        h = swiglu(up_gate).to(torch.bfloat16)
        out = torch.empty(x.size(0), HIDDEN, device=x.device, dtype=torch.bfloat16)
        lib.fp8_gemm_nt(per_token_cast_to_fp8(h, use_ue8m0=False), w.shared_w2_fp8, out)
        return out
    return forward


def timed(fn):
    """Microseconds per call of fn, or None when it raised (recorded as a failure)."""
    try:
        fn()
        torch.cuda.synchronize()
        return bench(fn) * 1e6
    except (RuntimeError, ValueError, AssertionError) as e:
        failures.append(f'{getattr(fn, "__qualname__", fn)}: {e}')
        return None


def diff(x, y):
    return float(calc_diff(x.double(), y.double()))


def run(libs, decode_tokens, prefill_tokens, seed):
    generator = torch.Generator(device='cuda').manual_seed(seed)
    w = Weights(generator)
    rows, checks = [], []

    def row(step, torch_us, **by_lib):
        rows.append({'step': step, 'torch': torch_us, **by_lib})

    # Decode: eager steps, then the captured graph replayed on a second batch.
    x1 = torch.randn(decode_tokens, HIDDEN, device='cuda', generator=generator).to(torch.bfloat16)
    x2 = torch.randn(decode_tokens, HIDDEN, device='cuda', generator=generator).to(torch.bfloat16)
    (ids1, tw1), (ids2, tw2) = route(decode_tokens, generator), route(decode_tokens, generator)
    ref2 = routed_torch(w, x2, ids2, tw2, torch.float32)
    decode_times = {name: {} for name in ('dispatch + quantise', 'up/gate masked GEMM', 'SwiGLU + quantise',
                                          'down masked GEMM', 'combine', 'layer, eager', 'layer, CUDA graph')}
    outputs = {}
    for name, lib in libs.items():
        d = Decode(lib, w, decode_tokens)
        d.load(x1, ids1, tw1)
        for step, fn in zip(decode_times, (d.dispatch, d.up_gate_gemm, d.activation, d.down_gemm, d.combine,
                                           d.forward)):
            decode_times[step][name] = timed(fn)
        try:
            graph, graph_out = d.capture()
            d.load(x2, ids2, tw2)
            graph.replay()
            replayed = graph_out.clone()
            eager = d.forward().clone()
            check(torch.equal(replayed, eager), f'decode {name}: CUDA-graph replay differs from the eager pass')
            decode_times['layer, CUDA graph'][name] = timed(graph.replay)
            outputs[name] = eager
            checks.append(f'decode {name}: graph replay == eager (bitwise), diff vs float32 reference '
                          f'{diff(eager, ref2):.1e}')
            check(diff(eager, ref2) < LAYER_DIFF_LIMIT, f'decode {name}: diff {diff(eager, ref2):.1e} vs reference')
        except (RuntimeError, ValueError) as e:
            failures.append(f'decode {name}: {e}')
    torch_decode = timed(lambda: routed_torch(w, x1, ids1, tw1, torch.bfloat16))
    for step, times in decode_times.items():
        row(f'decode {decode_tokens} tokens: {step}', torch_decode if step == 'layer, eager' else None, **times)
    if len(outputs) == 2:
        a, b = outputs.values()
        checks.append(f'decode: deep_gemm vs DeepGEMM diff {diff(a, b):.1e}')
        check(diff(a, b) < SAME_INPUT_DIFF_LIMIT, f'decode: deep_gemm and DeepGEMM differ by {diff(a, b):.1e}')

    # Prefill: contiguous layout, eager.
    x = torch.randn(prefill_tokens, HIDDEN, device='cuda', generator=generator).to(torch.bfloat16)
    ids, tw = route(prefill_tokens, generator)
    ref = routed_torch(w, x, ids, tw, torch.float32)
    prefill_times = {name: {} for name in ('quantise', 'up/gate contiguous GEMM', 'SwiGLU + quantise',
                                           'down contiguous GEMM', 'combine', 'layer, eager')}
    outputs = {}
    for name, lib in libs.items():
        p = Prefill(lib, w, x, ids, tw)
        for step, fn in zip(prefill_times, (p.quantise, p.up_gate_gemm, p.activation, p.down_gemm, p.combine,
                                            p.forward)):
            prefill_times[step][name] = timed(fn)
        if prefill_times['layer, eager'][name] is not None:
            outputs[name] = p.forward().clone()
            checks.append(f'prefill {name}: diff vs float32 reference {diff(outputs[name], ref):.1e}')
            check(diff(outputs[name], ref) < LAYER_DIFF_LIMIT, f'prefill {name}: diff vs reference too large')
    torch_prefill = timed(lambda: routed_torch(w, x, ids, tw, torch.bfloat16))
    for step, times in prefill_times.items():
        row(f'prefill {prefill_tokens} tokens: {step}', torch_prefill if step == 'layer, eager' else None, **times)
    if len(outputs) == 2:
        a, b = outputs.values()
        checks.append(f'prefill: deep_gemm vs DeepGEMM diff {diff(a, b):.1e}')
        check(diff(a, b) < SAME_INPUT_DIFF_LIMIT, f'prefill: deep_gemm and DeepGEMM differ by {diff(a, b):.1e}')

    # The shared expert: eager and under torch.compile(fullgraph=True) for deep_gemm; eager for DeepGEMM, whose
    # functions are not torch ops (a compiler would break the graph at each).
    ref = shared_torch(w, x, torch.float32)
    eager_times, compiled_times = {}, {}
    for name, lib in libs.items():
        forward = shared_expert(lib, w)
        eager_times[name] = timed(lambda: forward(x))
        eager_out = forward(x).float()
        checks.append(f'shared expert {name}: diff vs float32 reference {diff(eager_out, ref):.1e}')
        check(diff(eager_out, ref) < LAYER_DIFF_LIMIT, f'shared expert {name}: diff vs reference too large')
        if lib is deep_gemm:
            torch._dynamo.reset()
            try:
                compiled = torch.compile(forward, fullgraph=True)
                compiled_times[name] = timed(lambda: compiled(x))
                compiled_out = compiled(x).float()
                checks.append(f'shared expert {name}: torch.compile(fullgraph=True) vs eager diff '
                              f'{diff(compiled_out, eager_out):.1e}')
                check(diff(compiled_out, eager_out) < SAME_INPUT_DIFF_LIMIT, 'shared expert: compiled != eager')
            except Exception as e:  # a graph break or an inductor error: report it, keep the rest of the run
                failures.append(f'shared expert torch.compile: {type(e).__name__}: {str(e)[:300]}')
    torch_shared = timed(lambda: shared_torch(w, x, torch.bfloat16))
    row(f'shared expert {prefill_tokens} tokens, eager', torch_shared, **eager_times)
    row(f'shared expert {prefill_tokens} tokens, torch.compile', None, **compiled_times)
    return rows, checks


def table(rows, names):
    def cell(us):
        return '' if us is None else f'{us:.1f}'
    lines = ['| step | torch BF16 (us) | ' + ' | '.join(f'{n} (us)' for n in names) + ' |',
             '|---|---:|' + '---:|' * len(names)]
    for r in rows:
        lines.append(f'| {r["step"]} | {cell(r["torch"])} | ' + ' | '.join(cell(r.get(n)) for n in names) + ' |')
    return '\n'.join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--deepgemm', metavar='FOLDER', help="a folder that imports as DeepGEMM's deep_gemm (e.g. /tmp/dg)")
    p.add_argument('--decode-tokens', type=int, default=512)
    p.add_argument('--prefill-tokens', type=int, default=4096)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--out', metavar='DIR', help='also write DIR/moe_serving.json and DIR/moe_serving.md')
    args = p.parse_args()
    libs = {'deep_gemm': deep_gemm}
    if args.deepgemm:
        from deep_gemm.bench.peer import load_peer
        libs['DeepGEMM'] = load_peer(args.deepgemm)
    header = (f'{torch.cuda.get_device_name()}, {deep_gemm.get_num_sms()} SMs, torch {torch.__version__}; ' +
              ', '.join(f'{n} {getattr(m, "__version__", "?")}' for n, m in libs.items()))
    rows, checks = run(libs, args.decode_tokens, args.prefill_tokens, args.seed)
    text = '\n'.join([header, '', table(rows, list(libs)), '', *[f'- {c}' for c in checks],
                      *[f'- FAILED {f}' for f in failures]]) + '\n'
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, 'moe_serving.md'), 'w') as f:
            f.write(text)
        with open(os.path.join(args.out, 'moe_serving.json'), 'w') as f:
            json.dump({'header': header, 'rows': rows, 'checks': checks, 'failures': failures}, f, indent=1)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
