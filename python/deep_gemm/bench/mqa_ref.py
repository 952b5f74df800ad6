"""References and checks of the MQA logits suites, on any torch device (the bench runs them on the GPU, the tests on
the CPU): DeepGEMM's fused FP8 KV cache, float32 logits of the dequantised inputs chunked so that no temporary
exceeds CHUNK_BYTES (as DeepGEMM's ref_fp8_mqa_logits bounds its score chunk), and a row-chunked comparison: the -inf
pattern and DeepGEMM's calc_diff measure, accumulated in float64 chunk by chunk."""

CHUNK_BYTES = 256 * 1024 * 1024  # DeepGEMM's ref_fp8_mqa_logits caps its score chunk at 256 MiB
COMPARE_BYTES = 64 * 1024 * 1024  # per float64 operand of a compared row chunk
FP8_MAX = 448.0
AMAX_FLOOR = 1e-4


def fused_kv_cache(torch, blocks, block_kv, head_dim, device):
    """DeepGEMM's kv_cache_cast_to_fp8 (tests/test_attention.py) of a bf16 torch.randn cache [blocks, block_kv, 1,
    head_dim], drawn and cast CHUNK_BYTES at a time (the whole bf16 cache and its float copies would need 12 bytes
    a value): uint8 [blocks, block_kv, 1, head_dim + 4], each block its block_kv · head_dim FP8 values, then its
    block_kv fp32 scales (amax / 448 per token)."""
    values = block_kv * head_dim
    cache = torch.empty((blocks, block_kv * (head_dim + 4)), dtype=torch.uint8, device=device)
    step = max(1, CHUNK_BYTES // (values * 4))
    for b0 in range(0, blocks, step):
        b1 = min(b0 + step, blocks)
        x = torch.randn((b1 - b0, block_kv, head_dim), dtype=torch.bfloat16, device=device)
        sf = x.abs().float().amax(dim=-1, keepdim=True).clamp(AMAX_FLOOR) / FP8_MAX
        cache[b0:b1, :values] = (x * (1.0 / sf)).to(torch.float8_e4m3fn).view(b1 - b0, values).view(torch.uint8)
        cache[b0:b1, values:] = sf.reshape(b1 - b0, block_kv).view(torch.uint8)
    return cache.view(blocks, block_kv, 1, head_dim + 4)


def dequant_blocks(torch, blocks):
    """Float32 values [..., block_kv, head_dim] of fused cache blocks uint8 [..., block_kv, 1, head_dim + 4]."""
    *lead, block_kv, _, row = blocks.shape
    head_dim, values = row - 4, block_kv * (row - 4)
    flat = blocks.reshape(*lead, block_kv * row)
    x = flat[..., :values].contiguous().view(torch.float8_e4m3fn).float().view(*lead, block_kv, head_dim)
    sf = flat[..., values:].contiguous().view(torch.float32).view(*lead, block_kv, 1)
    return x * sf


def ref_mqa_logits(torch, q, kv, weights, ks, ke):
    """DeepGEMM's ref_fp8_mqa_logits in float32: logits [S, S_kv], row m column n = Σ_h relu(q[m, h] · kv[n]) ·
    weights[m, h] where ks[m] <= n < ke[m], else -inf. q [S, H, D], kv [S_kv, D] (the dequantised values),
    chunked along KV so the score chunk [H, S, chunk] stays within CHUNK_BYTES."""
    seq_len, heads, _ = q.shape
    seq_len_kv = kv.shape[0]
    # q [H, S, D] once, so each chunk is one batched matmul; w [H, S]
    q, kv, w = q.float().permute(1, 0, 2).contiguous(), kv.float(), weights.float().transpose(0, 1)
    step = max(1, CHUNK_BYTES // max(1, seq_len * heads * 4))
    positions = torch.arange(seq_len_kv, device=q.device)
    ks, ke = ks.to(q.device).long(), ke.to(q.device).long()
    logits = torch.empty((seq_len, seq_len_kv), dtype=torch.float, device=q.device)
    for n0 in range(0, seq_len_kv, step):
        n1 = min(n0 + step, seq_len_kv)
        score = torch.matmul(q, kv[n0:n1].T).relu_()  # [H, S, chunk]
        chunk = torch.einsum('hmn,hm->mn', score, w)
        cols = positions[n0:n1]
        inside = (cols[None, :] >= ks[:, None]) & (cols[None, :] < ke[:, None])
        logits[:, n0:n1] = chunk.masked_fill_(~inside, float('-inf'))
    return logits


def ref_paged_mqa_logits(torch, q, kv_cache, weights, context_lens, block_table, max_context_len):
    """DeepGEMM's ref_paged_mqa_logits with 2-D context lens in float32, vectorised over sequences (a chunk at a
    time): logits [B · next_n, max_context_len], row b · next_n + j column t = Σ_h relu(q[b, j, h] · kv(b, t)) ·
    weights[b · next_n + j, h] for t < context_lens[b, j], else -inf; kv(b, t) is token t % block_kv of block
    block_table[b, t // block_kv] of the fused cache, dequantised. q [B, next_n, H, D]."""
    batch, next_n, heads, head_dim = q.shape
    block_kv = kv_cache.shape[1]
    width = min(block_table.shape[1], -(-max_context_len // block_kv))
    tokens = width * block_kv
    q, w = q.float(), weights.float().view(batch, next_n, heads)
    lens = context_lens.to(q.device).long().view(batch, next_n)
    positions = torch.arange(tokens, device=q.device)
    logits = torch.full((batch * next_n, max_context_len), float('-inf'), dtype=torch.float, device=q.device)
    step = max(1, CHUNK_BYTES // (tokens * 4 * max(next_n * heads, head_dim)))
    for b0 in range(0, batch, step):
        b1 = min(b0 + step, batch)
        kv = dequant_blocks(torch, kv_cache[block_table[b0:b1, :width].long()]).view(b1 - b0, tokens, head_dim)
        score = torch.einsum('bjhd,btd->bjht', q[b0:b1], kv).relu_()
        chunk = torch.einsum('bjht,bjh->bjt', score, w[b0:b1])
        chunk.masked_fill_(positions[None, None, :] >= lens[b0:b1, :, None], float('-inf'))
        cols = min(tokens, max_context_len)
        logits[b0 * next_n:b1 * next_n, :cols] = chunk.reshape((b1 - b0) * next_n, tokens)[:, :cols]
    return logits


def compare(torch, out, ref_rows, rows, cols, region_rows=None):
    """(positions where the -inf pattern differs, calc_diff) of out [rows, cols] against the reference, a row
    chunk at a time: ref_rows(r0, r1) gives the reference's rows, region_rows(r0, r1, ref) the positions compared
    (all when None). calc_diff = 1 - 2 Σxy / Σ(x² + y²) in float64 over the compared positions where the reference
    is finite (the rest count as 0 in both, as DeepGEMM's tests masked_fill them); NaN if out has a NaN there."""
    step = max(1, COMPARE_BYTES // (8 * max(1, cols)))
    wrong, xy, norms = 0, 0.0, 0.0
    inf = float('-inf')
    for r0 in range(0, rows, step):
        r1 = min(r0 + step, rows)
        ref, got = ref_rows(r0, r1), out[r0:r1]
        region = None if region_rows is None else region_rows(r0, r1, ref)
        differs = (got == inf) != (ref == inf)
        keep = ref != inf
        if region is not None:
            differs &= region
            keep &= region
        wrong += int(differs.sum())
        x = torch.where(keep, got, torch.zeros((), dtype=got.dtype, device=got.device)).double()
        y = torch.where(keep, ref, torch.zeros((), dtype=ref.dtype, device=ref.device)).double()
        xy += float((x * y).sum())
        norms += float((x * x + y * y).sum())
    return wrong, (0.0 if norms == 0 else 1.0 - 2.0 * xy / norms)
