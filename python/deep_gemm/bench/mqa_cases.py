"""The cases of the mqa and paged_mqa suites (DeepSeek-V3.2's MQA logits) as plain data (no torch): shapes, DeepGEMM's
windows and the prefill cost and byte counts (tests/test_attention.py)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class MqaLogits:
    """DeepSeek-V3.2's MQA logits in prefill (fp8_fp4_mqa_logits): q [seq_len, heads, head_dim] against kv
    [seq_len_kv, head_dim], query row i seeing kv tokens [ks[i], ke[i]) as DeepGEMM's test draws them (see windows).
    cp: its context-parallel windows; compressed: max_seqlen_k = the longest window (clean_logits False)."""
    seq_len: int
    seq_len_kv: int
    heads: int
    head_dim: int = 128
    cp: bool = False
    compressed: bool = False

    @property
    def name(self):
        return f'{self.seq_len}x{self.seq_len_kv}x{self.heads}x{self.head_dim}' + ('-cp' if self.cp else '') + \
            ('-compressed' if self.compressed else '')

    def windows(self):
        """(ks, ke) per query row, as DeepGEMM's generate_ks_ke_tests (tests/test_attention.py) makes them."""
        s, s_kv = self.seq_len, self.seq_len_kv
        if not self.cp:  # causal: row i sees the kv tokens before its own position s_kv - s + i
            return [0] * s, [i + s_kv - s for i in range(s)]
        if not cp_allowed(s, s_kv):
            raise ValueError(f'cp: expected seq_len_kv a multiple of an even seq_len, got {s} and {s_kv}')
        chunk, cp_size = s // 2, s_kv // s
        cp_id = cp_size // 3  # DeepGEMM's "arbitrary CP rank"
        ke = [cp_id * chunk + i for i in range(chunk)] + [(cp_size * 2 - 1 - cp_id) * chunk + i for i in range(chunk)]
        return [0] * s, ke

    @property
    def cost(self):
        """Σ over query rows of their window clamped to [0, seq_len_kv): DeepGEMM's ref_cost (cost_only)."""
        clamp = lambda x: min(max(x, 0), self.seq_len_kv)  # noqa: E731
        return sum(max(clamp(e) - clamp(s), 0) for s, e in zip(*self.windows()))

    @property
    def max_seqlen_k(self):
        return max(e - s for s, e in zip(*self.windows())) if self.compressed else 0

    @property
    def flops(self):
        """DeepGEMM's test's TFLOP/s numerator: 2 · cost · H · D."""
        return 2 * self.cost * self.heads * self.head_dim

    @property
    def num_bytes(self):
        """DeepGEMM's test's GB/s numerator: count_bytes(q fp8, kv fp8 and its fp32 scales, weights fp32, ks, ke)
        plus cost · 4 bytes of fp32 logits."""
        s, s_kv, h, d = self.seq_len, self.seq_len_kv, self.heads, self.head_dim
        return s * h * d + s_kv * d + s_kv * 4 + s * h * 4 + 2 * s * 4 + self.cost * 4


@dataclass(frozen=True)
class PagedMqaLogits:
    """DeepSeek-V3.2's MQA logits in decode (fp8_fp4_paged_mqa_logits): `batch` sequences of next_n query tokens
    each, context lengths drawn around avg_kv, the KV cache paged in blocks of block_kv tokens."""
    batch: int
    next_n: int
    heads: int
    avg_kv: int
    head_dim: int = 128
    block_kv: int = 64

    @property
    def name(self):
        return f'{self.batch}x{self.next_n}x{self.heads}x{self.head_dim} kv{self.avg_kv}'


def cp_allowed(seq_len, seq_len_kv):
    """Whether DeepGEMM's test draws context-parallel windows for the shape (it skips it otherwise)."""
    return seq_len_kv % seq_len == 0 and seq_len % 2 == 0


# DeepSeek-V3.2's indexer in prefill: DeepGEMM's SM90 test grid (seq_len, seq_len_kv, heads, CP on and off, in its
# order) at head_dim 128, fp32 logits, clean_logits, max_seqlen_k 0; then one head_dim 64 row and one compressed row.
MQA = tuple(MqaLogits(s, s_kv, h, 128, cp) for s in (2048, 8192) for s_kv in (8192, 65536) for h in (32, 64)
            for cp in (True, False) if not cp or cp_allowed(s, s_kv)) + \
    (MqaLogits(8192, 65536, 64, 64), MqaLogits(8192, 65536, 64, 128, cp=True, compressed=True))
# DeepGEMM's test keeps batch · avg_kv within a pool of 32M tokens (max_kv_pool_tokens).
MAX_KV_POOL_TOKENS = 32 * 1024 * 1024
# The indexer in decode: DeepGEMM's SM90 paged grid (block_kv 64, head_dim 128, 2-D context lens, fp32 logits).
PAGED_MQA = tuple(PagedMqaLogits(b, n, h, kv) for b in (256, 4096) for n in (1, 2) for h in (32, 64)
                  for kv in (8192, 65536) if b * kv <= MAX_KV_POOL_TOKENS)
