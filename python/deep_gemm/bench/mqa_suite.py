"""The mqa and paged_mqa suites: DeepSeek-V3.2's MQA logits (the lightning indexer) in prefill
(fp8_fp4_mqa_logits) and decode (fp8_fp4_paged_mqa_logits) on DeepGEMM's SM90 test shapes, inputs and counting
(tests/test_attention.py). Both libraries' functions come from their top level and read the same tensors."""
from . import stats
from .inputs import seed_for
from .measure import Entry, Problem, absent
from .mqa_ref import compare, fused_kv_cache, ref_mqa_logits, ref_paged_mqa_logits
from .peer import lookup

PREFILL, PAGED, METADATA = 'fp8_fp4_mqa_logits', 'fp8_fp4_paged_mqa_logits', 'get_paged_mqa_logits_metadata'
TOLERANCE = 1e-3  # calc_diff against the float32 reference of the dequantised inputs, as DeepGEMM's test asserts
LOGITS_BYTES = 4  # fp32 logits
DEVICE = 'cuda'

NOTES = {
    'mqa': (
        f'{PREFILL}((q, None), (kv, kv scales), weights, ks, ke, clean_logits, max_seqlen_k, fp32 logits): both '
        'libraries\' from their top level, on the same tensors: q fp8 '
        'cast from bf16 randn [S, H, D], kv bf16 randn [S_kv, D] through per_custom_dims_cast_to_fp8(kv, (0,), False) '
        '(an fp32 scale per token), weights fp32 randn [S, H], windows [ks, ke) from DeepGEMM\'s generate_ks_ke_tests '
        '(-cp: its context-parallel rank cp_size // 3; otherwise ks = 0, ke = i + S_kv - S). clean_logits=True and '
        'max_seqlen_k=0, except -compressed (max_seqlen_k = the longest window, clean_logits=False). The time is the '
        'whole call (allocation, the logits kernel and, with clean_logits, the clean kernel; DeepGEMM\'s test '
        'prints the logits kernel alone). TFLOP/s = 2 · cost · H · D / time, cost = Σ over query rows of their window '
        'clamped to [0, S_kv) (DeepGEMM\'s ref_cost). Checked against float32 logits of the dequantised q and kv '
        '(DeepGEMM\'s ref_fp8_mqa_logits, chunked along KV): the -inf pattern identical (-compressed: no -inf '
        f'within a row\'s window, the columns past it not compared), calc_diff < {TOLERANCE:g} over the rest.'),
    'paged_mqa': (
        f'{PAGED}((q, None), kv_cache, weights, context_lens, block_table, schedule, max_context_len, '
        'clean_logits=False, fp32 logits): both libraries\' from their top level, on the same tensors: q fp8 cast '
        'from bf16 randn [B, next_n, H, 128], the fused cache uint8 [blocks, 64, 1, 132] '
        'from bf16 randn by DeepGEMM\'s kv_cache_cast_to_fp8, weights fp32 randn [B·next_n, H], sequence lengths '
        'randint(0.7·avg, 1.3·avg), 2-D context_lens (the last token the sequence\'s length, the others '
        '(length + 1) · U(0, 1)), each sequence\'s blocks a slice of a random permutation of the pool (B · avg ≤ 32M '
        f'tokens, DeepGEMM\'s limit). Each library\'s schedule is its own {METADATA}(context_lens, 64, its '
        'get_num_sms()), made before timing; only the logits call is timed. GB/s = the bytes DeepGEMM\'s test prints: '
        'q counted as bf16 (B·next_n·H·D·2, its count of q before the cast) + weights (B·next_n·H·4) + Σlen · (D + 4) '
        'of KV + Σlen · next_n · 4 of logits, Σlen over the sequences\' lengths; TFLOP/s = 2 · Σlen · next_n · H · D. '
        'copy: dst.copy_(src) of the whole fused cache (the blocks the call reads; 2 bytes moved per byte), ours / '
        'copy = our GB/s over its. Checked against float32 logits of the dequantised inputs (DeepGEMM\'s '
        'ref_paged_mqa_logits, vectorised over sequences): no -inf where a token is visible (column < its context '
        f'length), calc_diff < {TOLERANCE:g} there; the columns past it are not compared (clean_logits=False leaves '
        'them unwritten, as in DeepGEMM\'s test).'),
}


def _align(x, y):
    return (x + y - 1) // y * y


def prefill_alloc_bytes(seq_len, seq_len_kv, heads, max_seqlen_k=0):
    """Bytes of the fp32 logits tensor fp8_fp4_mqa_logits allocates (DeepGEMM's csrc/apis/attention.hpp; ours
    follows it): [align(S, 128 / H), row stride], rows 1024-byte aligned, 256 columns past S_kv when uncompressed."""
    cols = seq_len_kv + 256 if max_seqlen_k == 0 else _align(max_seqlen_k, 256)
    return _align(seq_len, 128 // heads) * _align(cols, 1024 // LOGITS_BYTES) * LOGITS_BYTES


def paged_alloc_bytes(rows, max_context_len):
    """Bytes of the fp32 logits fp8_fp4_paged_mqa_logits allocates: [B·next_n, align(align(len, 256), 256)]."""
    return rows * _align(_align(max_context_len, 256), 1024 // LOGITS_BYTES) * LOGITS_BYTES


def paged_bytes(case, sum_lens):
    """The bytes DeepGEMM's paged test prints: count_bytes(q bf16, weights fp32) + Σlen · (D + 4) of KV (FP8
    values and an fp32 scale per token) + Σlen · next_n fp32 logits."""
    rows = case.batch * case.next_n
    return rows * case.heads * (case.head_dim * 2 + 4) + sum_lens * (case.head_dim + 4) + \
        sum_lens * case.next_n * LOGITS_BYTES


def paged_flops(case, sum_lens):
    return 2 * sum_lens * case.next_n * case.heads * case.head_dim


def params(case):
    """The row's shape parameters (also of a row whose inputs could not be made)."""
    if hasattr(case, 'batch'):
        return {'batch': case.batch, 'next_n': case.next_n, 'heads': case.heads, 'head_dim': case.head_dim,
                'avg_kv': case.avg_kv, 'block_kv': case.block_kv}
    return {'seq_len': case.seq_len, 'seq_len_kv': case.seq_len_kv, 'heads': case.heads, 'head_dim': case.head_dim,
            'cp': case.cp, 'compressed': case.compressed}


def _poison(torch, nbytes):
    """prepare() of an entry whose call returns a new tensor: 0xFF bytes (NaN as fp32) in a freed block of the
    result's size, which torch's caching allocator hands to the call's torch.empty next, so a call that writes
    nothing reads NaN rather than an earlier call's logits."""
    def prepare():
        torch.empty(nbytes, dtype=torch.uint8, device=DEVICE).fill_(0xFF)
    return prepare


def verifier(torch, shape, ref_rows, region_rows=None, region_what=''):
    """verify(out) -> (ok, message, calc_diff) against ref_rows (see mqa_ref.compare)."""
    def verify(out):
        if tuple(out.shape) != shape or out.dtype != torch.float32:
            return False, f'expected float32 logits {shape}, got {out.dtype} {tuple(out.shape)}', None
        wrong, diff = compare(torch, out, ref_rows, shape[0], shape[1], region_rows)
        ok = wrong == 0 and diff < TOLERANCE  # NaN fails
        message = None if ok else '; '.join(
            ([f'{wrong} positions where the -inf pattern differs from the reference{region_what}'] if wrong else []) +
            ([f'calc_diff {diff:.3g} against the float32 reference (tolerance {TOLERANCE:g})']
             if not diff < TOLERANCE else []))
        return ok, message, diff
    return verify


def prefill_problem(ctx, case):
    from ..utils import per_custom_dims_cast_to_fp8
    torch = ctx.torch
    torch.manual_seed(seed_for(ctx.seed, f'mqa {case.name}'))
    s, s_kv, h, d = case.seq_len, case.seq_len_kv, case.heads, case.head_dim
    q = torch.randn((s, h, d), dtype=torch.bfloat16, device=DEVICE).to(torch.float8_e4m3fn)
    kv, kv_sf = per_custom_dims_cast_to_fp8(torch.randn((s_kv, d), dtype=torch.bfloat16, device=DEVICE), (0, ), False)
    weights = torch.randn((s, h), dtype=torch.float, device=DEVICE)
    ks_list, ke_list = case.windows()
    ks, ke = (torch.tensor(x, dtype=torch.int32, device=DEVICE) for x in (ks_list, ke_list))
    ref = ref_mqa_logits(torch, q.float(), kv.float() * kv_sf[:, None], weights, ks, ke)
    max_k = case.max_seqlen_k
    cols = torch.arange(max_k, device=DEVICE)
    starts, lengths = ks.long()[:, None], (ke - ks).long()[:, None]

    def ref_rows(r0, r1):  # compressed: column c of row i is token ks[i] + c
        return ref[r0:r1].gather(1, (starts[r0:r1] + cols).clamp_(max=s_kv - 1)) if max_k else ref[r0:r1]

    def window(r0, r1, _):  # compressed: compared for c < ke[i] - ks[i]
        return cols[None, :] < lengths[r0:r1]
    shape, region_rows, what = ((s, max_k), window, ' within the rows\' windows') if max_k else ((s, s_kv), None, '')
    kwargs = dict(clean_logits=not case.compressed, max_seqlen_k=max_k, logits_dtype=torch.float32)
    entries = {}
    for key in ('ours', 'deepgemm'):
        if key not in ctx.libs:
            continue
        f = lookup(ctx.libs[key], PREFILL)
        entries[key] = absent(PREFILL) if f is None else Entry(
            fn=lambda f=f: f((q, None), (kv, kv_sf), weights, ks, ke, **kwargs),
            prepare=_poison(torch, prefill_alloc_bytes(s, s_kv, h, max_k)),
            verify=verifier(torch, shape, ref_rows, region_rows, what),
            label=f'{PREFILL}((q, None), (kv, sf), weights, ks, ke, clean_logits={not case.compressed}, '
                  f'max_seqlen_k={max_k}, logits_dtype=torch.float32)')
    return Problem(case.name, entries, flops=case.flops, num_bytes=case.num_bytes,
                   params=params(case) | {'cost': case.cost, 'max_seqlen_k': max_k})


def paged_problem(ctx, case):
    torch = ctx.torch
    torch.manual_seed(seed_for(ctx.seed, f'paged_mqa {case.name}'))
    b, n, h, d, block_kv = case.batch, case.next_n, case.heads, case.head_dim, case.block_kv
    q = torch.randn((b, n, h, d), dtype=torch.bfloat16, device=DEVICE).to(torch.float8_e4m3fn)
    weights = torch.randn((b * n, h), dtype=torch.float, device=DEVICE)
    lens = torch.randint(int(0.7 * case.avg_kv), int(1.3 * case.avg_kv), (b, ), dtype=torch.int32, device=DEVICE)
    blocks = (lens.long() + block_kv - 1) // block_kv
    width, pool = int(blocks.max()), int(blocks.sum())
    max_context_len = width * block_kv
    kv_cache = fused_kv_cache(torch, pool, block_kv, d, DEVICE)
    # each sequence's blocks: the next slice of one random permutation of the pool; unused entries 0
    perm = torch.randperm(pool, dtype=torch.int32, device=DEVICE)
    col = torch.arange(width, device=DEVICE)
    index = (blocks.cumsum(0) - blocks)[:, None] + col[None, :]
    block_table = torch.where(col[None, :] < blocks[:, None], perm[index.clamp(max=pool - 1)],
                              torch.zeros((), dtype=torch.int32, device=DEVICE)).contiguous()
    context_lens = ((lens[:, None] + 1) * torch.rand((b, n), device=DEVICE)).int()
    context_lens[:, -1] = lens
    context_lens = context_lens.contiguous()
    ref = ref_paged_mqa_logits(torch, q.float(), kv_cache, weights, context_lens, block_table, max_context_len)
    sum_lens = int(lens.long().sum())

    def ref_rows(r0, r1):
        return ref[r0:r1]

    def visible(r0, r1, ref_chunk):  # the reference is -inf exactly where a token is not visible
        return ref_chunk != float('-inf')
    entries = {}
    for key in ('ours', 'deepgemm'):
        if key not in ctx.libs:
            continue
        lib = ctx.libs[key]
        f, meta, num_sms = (lookup(lib, name) for name in (PAGED, METADATA, 'get_num_sms'))
        if f is None or meta is None or num_sms is None:
            entries[key] = absent(PAGED if f is None else METADATA if meta is None else 'get_num_sms')
            continue
        try:  # the schedule is made once, outside the timed call, as in DeepGEMM's test
            schedule = meta(context_lens, block_kv, num_sms())
        except Exception as e:  # a library refusing the schedule: its result on this case, not a crash
            entries[key] = Entry(status='error', message=f'{METADATA}: {type(e).__name__}: {e}'.splitlines()[0])
            continue
        entries[key] = Entry(
            fn=lambda f=f, schedule=schedule: f((q, None), kv_cache, weights, context_lens, block_table, schedule,
                                                max_context_len, clean_logits=False, logits_dtype=torch.float32),
            prepare=_poison(torch, paged_alloc_bytes(b * n, max_context_len)),
            verify=verifier(torch, (b * n, max_context_len), ref_rows, visible, ' where tokens are visible'),
            label=f'{PAGED}((q, None), kv_cache, weights, context_lens [B, next_n], block_table, its schedule, '
                  f'max_context_len, clean_logits=False, logits_dtype=torch.float32)')
    src = kv_cache.view(-1)
    dst = torch.empty_like(src)
    entries['copy'] = Entry(fn=lambda: dst.copy_(src), label='fused KV cache: dst.copy_(src)',
                            verify=lambda out: (True, None, None))
    return Problem(case.name, entries, flops=paged_flops(case, sum_lens), num_bytes=paged_bytes(case, sum_lens),
                   params=params(case) | {'sum_lens': sum_lens, 'pool_blocks': pool, 'max_context_len': max_context_len,
                                          'copy_bytes': 2 * src.numel()})


def problem(ctx, case):
    """The case's entries ('ours', 'deepgemm' when loaded, and for paged 'copy') on one set of inputs, seeded per
    case, and the reference computed once for both."""
    return paged_problem(ctx, case) if hasattr(case, 'batch') else prefill_problem(ctx, case)


def add_rates(row):
    """TFLOP/s and GB/s of ours and DeepGEMM (the row's flops and bytes, DeepGEMM's counts, over each time), the
    ratio DeepGEMM / ours, and for paged rows the copy's GB/s and ours / copy (and DeepGEMM / copy) in GB/s."""
    times = {key: stats.ok_us(row, key) for key in ('ours', 'deepgemm')}
    for key, us in times.items():
        row[f'{key}_tflops'] = stats.tflops(row.get('flops'), us)
        row[f'{key}_gbps'] = None if row.get('bytes') is None else stats.gbps(row['bytes'], us)
    row['ratio_vs_deepgemm'] = stats.ratio(times['deepgemm'], times['ours'])
    if 'copy_bytes' in row['params']:
        row['copy_gbps'] = stats.gbps(row['params']['copy_bytes'], stats.ok_us(row, 'copy'))
        for key in times:
            gbps = row[f'{key}_gbps']
            row[f'{key}_vs_copy'] = None if gbps is None or not row['copy_gbps'] else gbps / row['copy_gbps']
    return row

