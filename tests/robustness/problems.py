"""Seeded random GEMM problems for the GPU robustness run: one dict per call of an exported deep_gemm function.

Sizes are drawn log-uniformly (so M = 1 and odd multiples of the smallest legal granule come up as often as round
numbers), then snapped to what the function's contract requires (16-byte TMA rows, 128-row contiguous groups,
64- or 128-wide K groups); a few problems have an empty dimension. Every problem is small enough (operands and
float64 references under a few hundred MB) that many workers can share one GPU. Pure Python: no torch.
"""
import math
import random



class Limits:
    """The largest M, N/K and element count (of any operand, output or float64 reference) a problem may have."""

    def __init__(self, max_m, max_nk, max_elements):
        self.max_m, self.max_nk, self.max_elements = max_m, max_nk, max_elements


FULL = Limits(8192, 8192, 1 << 26)
# CPU tests and compute-sanitizer runs: every kind and edge, at sizes a CPU reference or an instrumented kernel
# gets through in milliseconds.
SMALL = Limits(512, 768, 1 << 17)

# kind -> (weight, dtype of the operands)
KINDS = {
    'dense_bf16': (22, 'bf16'),
    'dense_fp8': (24, 'fp8'),
    'm_grouped_bf16': (9, 'bf16'),
    'm_grouped_fp8': (10, 'fp8'),
    'masked_bf16': (7, 'bf16'),
    'masked_fp8': (9, 'fp8'),
    'k_grouped_bf16': (5, 'bf16'),
    'k_grouped_fp8': (6, 'fp8'),
    'einsum_bf16': (3, 'bf16'),
    'einsum_fp8': (3, 'fp8'),
    'skip_head_mid': (3, 'fp8'),
    'hc_prenorm': (3, 'bf16'),
    'cublaslt': (5, 'bf16'),
    'weight_quant': (4, 'bf16'),
    'int8': (3, 'int8'),
}


def log_uniform(rng, low, high):
    """An integer in [low, high], log-uniformly."""
    return min(high, max(low, int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))))


def size(rng, granule, high, low=1):
    """A multiple of granule in [max(low, granule), high]; one draw in five is a multiple of 128 (the round sizes
    models use), the rest any multiple (odd ones included)."""
    if rng.random() < 0.2 and high >= 128:
        return 128 * log_uniform(rng, max(1, low // 128), high // 128)
    return granule * log_uniform(rng, max(1, -(-low // granule)), high // granule)


def _fits(lim, *shapes):
    return all(math.prod(s) <= lim.max_elements for s in shapes)


def _empty_dim(rng):
    """Which of m, n, k (or none) is 0: one problem in a hundred has an empty dimension."""
    return rng.choice('mnk') if rng.random() < 0.01 else ''


def _dense(rng, lim, fp8):
    layout = rng.choice(['nt', 'nt', 'nn', 'tn', 'tt'])
    p = {'layout': layout}
    if fp8:
        p['recipe'] = rng.choice(['1d2d', '1d2d', '1d1d'])
        p['d_dtype'] = 'fp32' if p['recipe'] == '1d1d' else 'bf16'
        p['c'] = rng.choice(['none', 'separate', 'in_place']) if p['recipe'] == '1d1d' else 'none'
        p['fp8_fp4_name'] = rng.random() < 0.25
        p['sfa_mn_major'] = rng.random() < 0.3
        k_granule = 16
    else:
        p['d_dtype'] = rng.choice(['bf16', 'bf16', 'fp32'])
        p['c'] = rng.choice(['none', 'none', 'separate', 'in_place'])
        k_granule = 8
    # Storage order of each operand: the layout's own (a contiguous tensor) or, for bf16, one time in four the
    # other (a transposed view): every combination of K- and MN-major operands comes through every name. SM90 FP8
    # reads K-major only. MN-major bf16 operands need 16-byte rows along M or N.
    natural_a, natural_b = ('mn' if layout[0] == 't' else 'k'), ('mn' if layout[1] == 'n' else 'k')
    flip = {'k': 'mn', 'mn': 'k'}
    p['a_major'] = 'k' if fp8 else natural_a if rng.random() < 0.75 else flip[natural_a]
    p['b_major'] = 'k' if fp8 else natural_b if rng.random() < 0.75 else flip[natural_b]
    m_granule = 8 if p['a_major'] == 'mn' else 1
    n_granule = 8
    while True:
        m, n, k = size(rng, m_granule, lim.max_m), size(rng, n_granule, lim.max_nk), size(rng, k_granule, lim.max_nk)
        if _fits(lim, (m, k), (n, k), (m, n)):
            break
    empty = _empty_dim(rng)
    p.update(m=0 if empty == 'm' else m, n=0 if empty == 'n' else n, k=0 if empty == 'k' else k)
    p['pad_a'], p['pad_b'], p['pad_d'] = (rng.random() < 0.25 for _ in range(3))
    return p


def _group_rows(rng, groups, high):
    """Rows per group: one in five groups empty, one in ten exactly a multiple of 128."""
    rows = []
    for _ in range(groups):
        r = rng.random()
        rows.append(0 if r < 0.2 else 128 * rng.randint(1, 4) if r < 0.3 else log_uniform(rng, 1, high))
    return rows


def _m_grouped(rng, lim, fp8):
    while True:
        groups = log_uniform(rng, 1, 16)
        rows = _group_rows(rng, groups, min(1024, lim.max_m))
        m = sum(-(-r // 128) * 128 for r in rows)
        n, k = size(rng, 8, lim.max_nk), size(rng, 16 if fp8 else 8, lim.max_nk)
        if 0 < m <= lim.max_m and _fits(lim, (m, k), (groups, n, k), (m, n)):
            break
    return {'layout': rng.choice(['nt', 'nt', 'nn']), 'group_rows': rows, 'm': m, 'n': n, 'k': k,
            'groups': groups, 'd_dtype': 'bf16', 'pad_a': rng.random() < 0.25, 'pad_d': rng.random() < 0.25,
            'fp8_fp4_name': fp8 and rng.random() < 0.25}


def _masked(rng, lim, fp8):
    while True:
        groups = log_uniform(rng, 1, 16)
        m_max = size(rng, 1, min(2048, lim.max_m))
        n, k = size(rng, 8, lim.max_nk), size(rng, 16 if fp8 else 8, lim.max_nk)
        if _fits(lim, (groups, m_max, k), (groups, n, k), (groups, m_max, n)):
            break
    masked = []
    for _ in range(groups):
        r = rng.random()
        masked.append(0 if r < 0.25 else m_max if r < 0.4 else rng.randint(1, m_max))
    # The name: DeepGEMM's, its fp8_fp4_* one, or the legacy alias engines call (FP8), for one problem in four each.
    name = rng.choice(['plain', 'plain', 'fp8_fp4', 'legacy']) if fp8 else rng.choice(['plain', 'legacy'])
    return {'groups': groups, 'm_max': m_max, 'n': n, 'k': k, 'masked_m': masked, 'name': name,
            'expected_m': rng.randint(1, m_max), 'd_dtype': 'bf16', 'pad_a': rng.random() < 0.25}


def _k_grouped(rng, lim, fp8):
    k_block = 128 if fp8 else 64
    while True:
        groups = log_uniform(rng, 1, 8)
        ks = [0 if rng.random() < 0.2 else k_block * log_uniform(rng, 1, min(4096, lim.max_nk) // k_block)
              for _ in range(groups)]
        # bf16 tn: a [ΣK, M] and b [ΣK, N] are M- and N-contiguous; FP8 reads K-major [mn, k_g] blocks.
        m = size(rng, 1 if fp8 else 8, min(4096, lim.max_nk))
        n = size(rng, 8, min(4096, lim.max_nk))
        if _fits(lim, (sum(ks), m), (sum(ks), n), (groups, m, n)):
            break
    return {'groups': groups, 'ks': ks, 'm': m, 'n': n, 'd_dtype': 'fp32',
            'c': rng.choice(['none', 'separate', 'in_place'])}


def _einsum(rng, lim, fp8):
    # 'bhr,hdr->bhd': a [b, h, r], b [h, d, r], d [b, h, d]; the batch is h.
    while True:
        b, h = size(rng, 1, min(4096, lim.max_m)), log_uniform(rng, 1, 16)
        d, r = size(rng, 8, min(4096, lim.max_nk)), size(rng, 16 if fp8 else 8, min(4096, lim.max_nk))
        if _fits(lim, (b, h, r), (h, d, r), (b, h, d)):
            break
    return {'expr': 'bhr,hdr->bhd', 'b': b, 'h': h, 'd': d, 'r': r, 'd_dtype': 'bf16'}


def _skip_head_mid(rng, lim):
    # fp8_gemm_nt_skip_head_mid: GEMM heads of left + right columns into d heads of left + mid + right. left and right
    # share a tile width: multiples of 16, or one time in four of 24 (only odd-multiple-of-8 tiles then fit); either
    # may be 0. mid is any multiple of 8 (d keeps 16-byte rows), 0 included. K > 0, as the contract asks.
    while True:
        unit = 24 if rng.random() < 0.25 else 16
        left, right = unit * rng.randint(0, 8), unit * rng.randint(1, 8)
        if rng.random() < 0.5:
            left, right = right, left
        mid, heads = 8 * rng.randint(0, 16), log_uniform(rng, 1, 64)
        m, n, k = size(rng, 1, lim.max_m), heads * (left + right), size(rng, 16, lim.max_nk)
        if n <= lim.max_nk and _fits(lim, (m, k), (n, k), (m, n + heads * mid)):
            break
    return {'m': m, 'n': n, 'k': k, 'head_splits': (left, mid, right), 'd_dtype': 'bf16', 'pad_a': rng.random() < 0.25,
            'pad_d': rng.random() < 0.25}


def _hc_prenorm(rng, lim):
    # tf32_hc_prenorm_gemm: a bf16 [M, K] (16-byte rows: K any multiple of 8, most not of the kernel's 128-wide K
    # blocks; K > 0, as the contract asks), b fp32 [N, K] with N in {8, 16, 24, 32}. Half the problems leave the K
    # split to the library (summed in the kernel, through a per-stream workspace); half pass num_splits = S in 1..20,
    # often more splits than K has 128-wide blocks (those splits' slices must hold zeros).
    n, splits = rng.choice([8, 16, 24, 32]), None if rng.random() < 0.5 else rng.randint(1, 20)
    while True:
        m, k = size(rng, 1, lim.max_m), size(rng, 8, lim.max_nk)
        if _fits(lim, (m, k), (n, k), (splits or 1, m, n)):
            break
    return {'m': 0 if rng.random() < 0.01 else m, 'n': n, 'k': k, 'num_splits': splits, 'd_dtype': 'fp32',
            'pad_a': rng.random() < 0.25, 'pad_b': rng.random() < 0.25, 'pad_d': rng.random() < 0.25}


def _weight_quant(rng, lim):
    # deep_gemm.weight_quant.gemm: a [M, K] of bf16 (fp16 one time in four, not with MXFP4) times W [N, K] packed as
    # int4 (groups of 32, 64 or 128 k, zero points or not), int8 (channel scales) or MXFP4; D bf16, fp16 or fp32.
    # K a multiple of 8 (16-byte rows) and of int4's group; N any size (the packed rows pad to 16).
    fmt = rng.choice(['int4', 'int4', 'int8', 'mxfp4'])
    group = rng.choice([32, 64, 128]) if fmt == 'int4' else 32 if fmt == 'mxfp4' else 0
    act = 'fp16' if fmt != 'mxfp4' and rng.random() < 0.25 else 'bf16'
    while True:
        m, n, k = size(rng, 1, lim.max_m), size(rng, 1, lim.max_nk), size(rng, max(8, group), lim.max_nk)
        if _fits(lim, (m, k), (n, k), (m, n)):
            break
    return {'m': 0 if rng.random() < 0.01 else m, 'n': n, 'k': k, 'format': fmt, 'group_size': group,
            'zeros': fmt == 'int4' and rng.random() < 0.5, 'act': act,
            'd_dtype': rng.choice([act, act, 'fp32']), 'pad_a': rng.random() < 0.25, 'pad_d': rng.random() < 0.25}


def _int8(rng, lim):
    # deep_gemm.int8.gemm_nt: int8 a [M, K] and b [N, K] (K-major), fp32 scales per row of each, bf16 D. K a multiple of
    # 16 (16-byte rows), N of 8 (D's rows through TMA).
    while True:
        m, n, k = size(rng, 1, lim.max_m), size(rng, 8, lim.max_nk), size(rng, 16, lim.max_nk)
        if _fits(lim, (m, k), (n, k), (m, n)):
            break
    return {'m': 0 if rng.random() < 0.01 else m, 'n': n, 'k': k, 'pad_a': rng.random() < 0.25,
            'pad_b': rng.random() < 0.25, 'pad_d': rng.random() < 0.25}


def _cublaslt(rng, lim):
    p = _dense(rng, lim, fp8=False)
    p['pad_a'] = p['pad_b'] = p['pad_d'] = False
    p['a_major'], p['b_major'] = ('mn' if p['layout'][0] == 't' else 'k'), ('mn' if p['layout'][1] == 'n' else 'k')
    if p['a_major'] == 'mn' and p['m'] % 8:
        p['m'] += 8 - p['m'] % 8
    return p


def make_problem(seed, index, lim=FULL):
    """Problem number ``index`` of the run seeded ``seed``: the same pair always gives the same problem."""
    rng = random.Random(f'{seed}/{index}')
    kinds = list(KINDS)
    kind = rng.choices(kinds, weights=[KINDS[k][0] for k in kinds])[0]
    fp8 = KINDS[kind][1] == 'fp8'
    if kind.startswith('dense'):
        p = _dense(rng, lim, fp8)
    elif kind.startswith('m_grouped'):
        p = _m_grouped(rng, lim, fp8)
    elif kind.startswith('masked'):
        p = _masked(rng, lim, fp8)
    elif kind.startswith('k_grouped'):
        p = _k_grouped(rng, lim, fp8)
    elif kind.startswith('einsum'):
        p = _einsum(rng, lim, fp8)
    elif kind == 'skip_head_mid':
        p = _skip_head_mid(rng, lim)
    elif kind == 'hc_prenorm':
        p = _hc_prenorm(rng, lim)
    elif kind == 'weight_quant':
        p = _weight_quant(rng, lim)
    elif kind == 'int8':
        p = _int8(rng, lim)
    else:
        p = _cublaslt(rng, lim)
    p.update(kind=kind, index=index, seed=seed, data_seed=rng.getrandbits(31),
             scale=rng.choice([1.0, 1.0, 1e-3, 64.0]))
    return p


def function_name(p):
    """The deep_gemm function a problem calls."""
    kind = p['kind']
    if kind == 'cublaslt':
        return 'cublaslt_gemm_' + p['layout']
    if kind == 'dense_bf16':
        return 'bf16_gemm_' + p['layout']
    if kind == 'dense_fp8':
        return ('fp8_fp4_gemm_' if p['fp8_fp4_name'] else 'fp8_gemm_') + p['layout']
    if kind.startswith('m_grouped'):
        family = 'fp8_fp4' if p.get('fp8_fp4_name') else kind.split('_')[-1]
        return f"m_grouped_{family}_gemm_{p['layout']}_contiguous"
    if kind == 'masked_fp8':
        return {'plain': 'm_grouped_fp8_gemm_nt_masked', 'fp8_fp4': 'm_grouped_fp8_fp4_gemm_nt_masked',
                'legacy': 'fp8_m_grouped_gemm_nt_masked'}[p['name']]
    if kind == 'masked_bf16':
        return 'm_grouped_bf16_gemm_nt_masked' if p['name'] == 'plain' else 'bf16_m_grouped_gemm_nt_masked'
    if kind == 'k_grouped_bf16':
        return 'k_grouped_bf16_gemm_tn_contiguous'
    if kind == 'k_grouped_fp8':
        return 'k_grouped_fp8_gemm_nt_contiguous'
    if kind == 'skip_head_mid':
        return 'fp8_gemm_nt_skip_head_mid'
    if kind == 'hc_prenorm':
        return 'tf32_hc_prenorm_gemm'
    if kind == 'weight_quant':
        return 'weight_quant.gemm'
    if kind == 'int8':
        return 'int8.gemm_nt'
    return 'fp8_einsum' if kind == 'einsum_fp8' else 'einsum'


def describe(p):
    """A short, stable one-line name of a problem (reports and failure messages)."""
    dims = {k: p[k] for k in ('groups', 'm', 'm_max', 'n', 'k', 'b', 'h', 'd', 'r', 'num_splits') if k in p}
    extra = [p[k] for k in ('layout', 'recipe', 'expr', 'head_splits', 'format') if k in p]
    return f"#{p['index']} {p['kind']} {' '.join(map(str, extra))} " + ' '.join(f'{k}={v}' for k, v in dims.items())
