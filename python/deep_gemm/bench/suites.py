"""What each suite times: shapes and call families as plain data (no torch), and the selection options."""
import fnmatch
import random
from dataclasses import dataclass

from .mqa_cases import MQA, PAGED_MQA

# DeepSeek-V3's dense weights (N, K), as in DeepGEMM's own benchmark and docs/bench.md.
DEEPSEEK_NK = ((2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048))

DTYPES = ('bf16', 'fp8')


@dataclass(frozen=True)
class Dense:
    m: int
    n: int
    k: int

    @property
    def name(self):
        return f'{self.m}x{self.n}x{self.k}'

    @property
    def flops(self):
        return 2 * self.m * self.n * self.k


@dataclass(frozen=True)
class Grouped:
    """M-grouped contiguous. Even: every group holds m_per_group rows (no padding rows), as DeepGEMM's benchmark.
    Ragged: group g holds int(m_per_group * U(0.7, 1.3)) rows, as DeepGEMM's tests and a router's counts do, padded
    to the alignment with -1 rows, so groups start on any 128-row block and larger tiles meet their boundaries."""
    groups: int
    m_per_group: int
    n: int
    k: int
    ragged: bool = False

    @property
    def name(self):
        return f"{self.groups}x{'~' if self.ragged else ''}{self.m_per_group}x{self.n}x{self.k}"

    def group_rows(self):
        """Valid rows of each group; ragged rows are drawn from a generator seeded by the name (same every run)."""
        if not self.ragged:
            return [self.m_per_group] * self.groups
        rng = random.Random(self.name)
        return [int(self.m_per_group * rng.uniform(0.7, 1.3)) for _ in range(self.groups)]

    @property
    def flops(self):
        return 2 * sum(self.group_rows()) * self.n * self.k


@dataclass(frozen=True)
class Masked:
    """M-grouped masked: group g holds masked_m[g] valid rows, drawn around expected_m (see masked_rows)."""
    groups: int
    expected_m: int
    n: int
    k: int
    max_m: int = 4096

    @property
    def name(self):
        return f'{self.groups}x{self.expected_m}x{self.n}x{self.k}'


@dataclass(frozen=True)
class Host:
    """One exported call family timed for host cost: `function` is looked up by name in each library."""
    function: str
    dtype: str
    shape: tuple

    @property
    def name(self):
        return f"{self.function} {'x'.join(str(s) for s in self.shape)}"


@dataclass(frozen=True)
class Layout:
    """A scale-layout helper on fp32 scales [groups, mn, ceil(k / 128)] (groups 1: 2-D), or, for the K-grouped
    helper, on per-channel scales [Σk / 128, mn] of `groups` groups of k each."""
    helper: str
    mn: int
    k: int
    groups: int = 1

    @property
    def name(self):
        return (f'{self.groups}x' if self.groups > 1 else '') + f'{self.mn}x{self.k}'


@dataclass(frozen=True)
class HcPrenorm(Dense):
    """The mHC pre-norm GEMM tf32_hc_prenorm_gemm: a bf16 [m, k] times b fp32 [n, k] transposed (TF32) into
    d fp32 [m, n], and the squared sum of each row of a into sqr_sum fp32 [m]."""


@dataclass(frozen=True)
class WeightOnly(Dense):
    """The weight-only quantised GEMM: a bf16 [m, k] times W [n, k] packed as `weight` (int4g<group>[z]: int4 codes
    with bf16 group scales, z with zero points; int8: per-row scales; mxfp4: e2m1 codes, UE8M0 per 32 k)."""
    weight: str = 'int4g128'

    @property
    def name(self):
        return f'{self.weight} {self.m}x{self.n}x{self.k}'


@dataclass(frozen=True)
class WeightOnlyMasked:
    """The weight-only GEMM over MoE experts, masked: `experts` weights [n, k] packed as `weight`, a bf16
    [experts, max_m, k] with masked_m rows per expert drawn around expected_m (masked_rows)."""
    experts: int
    expected_m: int
    n: int
    k: int
    weight: str = 'mxfp4'
    max_m: int = 128

    @property
    def name(self):
        return f'{self.weight} {self.experts}x{self.expected_m}x{self.n}x{self.k}'


@dataclass(frozen=True)
class MoeLayer:
    """deep_gemm.moe.fp8_moe: `tokens` tokens, each routed to `topk` of `experts` experts (gate/up 2·inter x hidden,
    down hidden x inter)."""
    tokens: int
    experts: int = 256
    topk: int = 8
    hidden: int = 7168
    inter: int = 2048

    @property
    def name(self):
        return f'{self.tokens}x{self.hidden} top{self.topk}/{self.experts}'

    @property
    def flops(self):
        return 2 * self.tokens * self.topk * 3 * self.inter * self.hidden


def _dense(ms, nks=DEEPSEEK_NK):
    return tuple(Dense(m, n, k) for m in ms for n, k in nks)


RAGGED = (Dense(65, 2112, 7168), Dense(129, 7168, 2048), Dense(129, 4096, 7168), Dense(257, 24576, 1536),
          Dense(2048, 7168, 2048))

GROUPED = tuple(Grouped(g, m, n, k) for g, m in ((4, 8192), (8, 4096)) for n, k in ((4096, 7168), (7168, 2048))) + \
    (Grouped(4, 8192, 6144, 7168), Grouped(8, 4096, 7168, 3072)) + \
    tuple(Grouped(g, m, n, k, ragged=True) for g, m, n, k in ((8, 1024, 4096, 7168), (8, 1024, 7168, 2048),
                                                             (4, 8192, 6144, 7168), (8, 4096, 7168, 3072)))

# M-grouped masked problems of MoE decoding: groups of about 20 rows, and of 192 to 1024; the last two are the up/gate
# and down projections of 8 local DeepSeek-V3 experts at 512 tokens, top-2, on buffers of 512 rows per expert.
MASKED = (Masked(32, 192, 6144, 7168), Masked(6, 1024, 7168, 3072), Masked(32, 20, 4096, 4096),
          Masked(6, 20, 4096, 2048), Masked(16, 256, 4096, 7168), Masked(8, 128, 4096, 7168, max_m=512),
          Masked(8, 128, 7168, 2048, max_m=512))

# Shapes small enough that the GPU keeps up with back-to-back calls (each kernel a few µs), so the median host time is
# the call's own cost: with a deeper queue of launches than the GPU drains, every launch of either library costs more.
_HOST_DENSE = (128, 2112, 1024)
HOST = tuple(Host(f'bf16_gemm_{layout}', 'bf16', _HOST_DENSE) for layout in ('nt', 'nn', 'tn', 'tt')) + \
    tuple(Host(f'fp8_gemm_{layout}', 'fp8', _HOST_DENSE) for layout in ('nt', 'nn', 'tn', 'tt')) + (
    Host('m_grouped_bf16_gemm_nt_contiguous', 'bf16', (4, 128, 1024, 1024)),
    Host('m_grouped_fp8_gemm_nt_contiguous', 'fp8', (4, 128, 1024, 1024)),
    Host('m_grouped_bf16_gemm_nt_masked', 'bf16', (4, 64, 1024, 1024)),
    Host('m_grouped_fp8_gemm_nt_masked', 'fp8', (4, 64, 1024, 1024)),
    Host('k_grouped_bf16_gemm_tn_contiguous', 'bf16', (4, 256, 512, 512)),
    Host('k_grouped_fp8_gemm_nt_contiguous', 'fp8', (4, 256, 512, 512)),
    Host('einsum', 'bf16', (32, 128, 512, 128)),
    Host('fp8_einsum', 'fp8', (32, 8, 4096, 1024)),
)

LAYOUT_HELPERS = ('get_mn_major_tma_aligned_tensor', 'get_mn_major_tma_aligned_packed_ue8m0_tensor',
                  'get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor')
_LAYOUT_MN_K = tuple((mn, k) for mn in (4096, 8192, 32768) for k in (7168, 16384))
LAYOUT = tuple(Layout(helper, mn, k) for helper in LAYOUT_HELPERS[:2] for mn, k in _LAYOUT_MN_K) + \
    tuple(Layout(helper, 4096, 7168, groups=8) for helper in LAYOUT_HELPERS[:2]) + \
    (Layout(LAYOUT_HELPERS[2], 4096, 4096, groups=8), Layout(LAYOUT_HELPERS[2], 7168, 2048, groups=16))

# DeepGEMM's own test shapes of tf32_hc_prenorm_gemm (tests/test_hyperconnection.py), in its order.
HC = tuple(HcPrenorm(m, n, k) for m in (13, 137, 4096, 8192) for n, k in ((24, 28672), (24, 7680), (24, 7168)))

# Weight-only GEMMs: DeepSeek-V3 dense weights, gpt-oss-120b's MoE expert (gate/up 5760 x 2880, down 2880 x 2880),
# a Llama-3-8B MLP (14336 x 4096) and the 8192 x 8192 shape of Marlin's published H100 figures
# (bench/published/marlin-machete.md); decode (M = 1, 16), a small batch (64) and prefill (4096).
WQ_NK = ((4096, 7168), (7168, 2048), (2112, 7168), (5760, 2880), (2880, 2880), (14336, 4096), (8192, 8192))
WQ_WEIGHTS = ('int4g128', 'int4g128z', 'int4g32', 'int8', 'mxfp4')


def wq_group_size(weight):
    """K elements per scale of a WQ_WEIGHTS name (int4g<G>[z]: G; int8: per channel, 1; mxfp4: 32). An int4
    weight exists only where its group divides K (gpt-oss's K = 2880 takes g32, not g128)."""
    if weight.startswith('int4g'):
        return int(weight[len('int4g'):].rstrip('z'))
    return 32 if weight == 'mxfp4' else 1


WQ = tuple(WeightOnly(m, n, k, weight) for weight in WQ_WEIGHTS for m in (1, 16, 64, 4096) for n, k in WQ_NK
           if not (weight == 'int4g32' and m == 4096) and k % wq_group_size(weight) == 0)
# MoE decoding over local experts (masked): gpt-oss-120b's 32 experts (MXFP4: gate/up 5760 x 2880, down 2880 x 2880)
# and DeepSeek-V3's (int4 g128: gate/up 4096 x 7168, down 7168 x 2048) at about 1, 8 and 32 tokens per expert.
WQ_MASKED = tuple(WeightOnlyMasked(32, m, n, k, weight) for weight, nks in (
    ('mxfp4', ((5760, 2880), (2880, 2880))), ('int4g128', ((4096, 7168), (7168, 2048)))) for n, k in nks
    for m in (1, 8, 32))

# int8 x int8 (deep_gemm.int8.gemm_nt) on DeepSeek-V3's dense shapes, decode to prefill.
INT8 = _dense((1, 16, 64, 128, 4096))
# FP8 x FP4 (deep_gemm._fp8_fp4_sm90) on the same shapes; K of every DeepSeek shape is a multiple of 128. MoE
# decoding: DeepSeek-V3's experts (gate/up 4096 x 7168, down 7168 x 2048), 32 local ones at about 1, 8 and 32 tokens.
FP8_FP4 = _dense((1, 16, 32, 64, 128, 4096)) + tuple(
    Masked(32, m, n, k, max_m=128) for n, k in ((4096, 7168), (7168, 2048)) for m in (1, 8, 32))

# DeepSeek-V3's MoE layer on one GPU (all 256 experts local), decode to prefill.
MOE = tuple(MoeLayer(t) for t in (1, 8, 64, 128, 256, 512, 1024, 4096, 8192))

SUITES = {
    'deepseek': _dense((64, 128, 4096)),
    'decode': _dense((1, 8, 16, 32)),
    'ragged': RAGGED,
    'grouped': GROUPED,
    'masked': MASKED,
    'host': HOST,
    'layout': LAYOUT,
    'hc': HC,
    'wq': WQ + WQ_MASKED,
    'int8': INT8,
    'fp8_fp4': FP8_FP4,
    'moe': MOE,
    'mqa': MQA,
    'paged_mqa': PAGED_MQA,
}
# Suites whose rows do not depend on --dtype (the host suite filters its families by their own dtype).
DTYPE_FREE = ('layout', 'hc', 'wq', 'int8', 'fp8_fp4', 'moe', 'mqa', 'paged_mqa')


def masked_rows(groups, expected_m, max_m, rng):
    """Valid rows per group, int(expected_m * U(0.7, 1.3)) as DeepGEMM's generators.py draws them, from the
    given random.Random (a fixed seed gives the same rows every run)."""
    rows = [int(expected_m * rng.uniform(0.7, 1.3)) for _ in range(groups)]
    if max(rows) > max_m:
        raise ValueError(f'max_m: expected at least the largest drawn group ({max(rows)}), got {max_m}')
    return rows


def contiguous_layout(group_rows, alignment):
    """DeepGEMM's contiguous grouped_layout: per row its group index, each group's rows padded up to the
    alignment with -1 rows."""
    layout = []
    for g, rows in enumerate(group_rows):
        padded = (rows + alignment - 1) // alignment * alignment
        layout += [g] * rows + [-1] * (padded - rows)
    return layout


def parse_list(text, allowed, name):
    """Comma-separated choices; 'all' means every one. ValueError naming the option on an unknown word."""
    words = [w.strip() for w in str(text).split(',') if w.strip()]
    if not words:
        raise ValueError(f'{name}: expected one or more of {", ".join(allowed)} (or all), got {text!r}')
    if 'all' in words:
        return list(allowed)
    for w in words:
        if w not in allowed:
            raise ValueError(f'{name}: expected one or more of {", ".join(allowed)} (or all), got {w!r}')
    return list(dict.fromkeys(words))


def shape_filter(text):
    """Glob patterns (comma-separated) a case's name must match one of; None keeps every case."""
    patterns = [p.strip() for p in (text or '').split(',') if p.strip()]
    if not patterns:
        return None
    return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select(suite, dtype, keep=None):
    """The cases of one suite for one dtype, filtered by name."""
    cases = SUITES[suite]
    if suite == 'host':
        cases = tuple(c for c in cases if c.dtype == dtype)
    return [c for c in cases if keep is None or keep(c.name)]
