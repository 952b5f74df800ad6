"""The hc suite: the mHC pre-norm GEMM tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits) on DeepGEMM's test shapes,
in GB/s. Ours with num_splits=None (it chooses its K split and sums inside); DeepGEMM with num_splits=None (one
split) and with num_splits=16 (d [16, M, N] and sqr_sum [16, M] of partial sums the caller adds: the sum is not
timed, as in DeepGEMM's test, and is taken before the check). 'DeepGEMM best' is the faster of its two."""
import contextlib

from ..testing import calc_diff
from . import stats
from .inputs import seed_for
from .measure import Entry, Problem, absent
from .peer import lookup

FUNCTION = 'tf32_hc_prenorm_gemm'
PEER_SPLITS = 16
SPLIT_KEY = 'deepgemm_split16'  # DeepGEMM's call with num_splits=PEER_SPLITS, a third entry beside ours and deepgemm
ENTRY_KEYS = ('ours', 'deepgemm', SPLIT_KEY)
# (entry key, library key, num_splits) of each timed call
CALLS = (('ours', 'ours', None), ('deepgemm', 'deepgemm', None), (SPLIT_KEY, 'deepgemm', PEER_SPLITS))
TOLERANCE = 1e-8  # calc_diff of d and of sqr_sum against the TF32 torch reference, as DeepGEMM's test asserts
DEVICE = 'cuda'

NOTE = (f'DeepGEMM none: num_splits=None (one split); DeepGEMM 16: num_splits={PEER_SPLITS}, d [{PEER_SPLITS}, M, N] '
        f'and sqr_sum [{PEER_SPLITS}, M] of partial sums (the sum over splits is not timed, as in DeepGEMM\'s test); '
        'DeepGEMM best: the faster of the two. Ours: num_splits=None. GB/s: bytes of a, b, d and sqr_sum (each '
        'call\'s own d and sqr_sum) over the time. Checked against a.float() @ b.T in TF32 and '
        f'a.float().square().sum(-1): calc_diff < {TOLERANCE:g} for both (split outputs summed first).')


def hc_bytes(m, n, k, splits=None):
    """Bytes of a call as DeepGEMM's count_bytes(a, b, d, sqr_sum) counts them: a bf16 [m, k], b fp32 [n, k],
    d fp32 [m, n] and sqr_sum fp32 [m], or with splits, d [splits, m, n] and sqr_sum [splits, m]."""
    s = 1 if splits is None else splits
    return m * k * 2 + n * k * 4 + s * m * n * 4 + s * m * 4


@contextlib.contextmanager
def tf32_matmul(torch):
    """torch.backends.cuda.matmul.allow_tf32 = True inside (the reference is a TF32 matmul, as in DeepGEMM's test),
    restored afterwards."""
    matmul = torch.backends.cuda.matmul
    saved = matmul.allow_tf32
    matmul.allow_tf32 = True
    try:
        yield
    finally:
        matmul.allow_tf32 = saved


def _diff(x, ref):
    return float(calc_diff(x, ref))


def verifier(ref_d, ref_s, splits=None):
    """Checks (d, sqr_sum) against the references, after summing over the split dimension when splits is set;
    returns (ok, message, diff), diff the larger of the two calc_diffs (NaN when either is)."""
    def verify(out):
        d, s = out
        if splits is not None:
            d, s = d.sum(0), s.sum(0)
        diff_d, diff_s = _diff(d, ref_d), _diff(s, ref_s)
        ok = diff_d < TOLERANCE and diff_s < TOLERANCE  # NaN fails both comparisons
        diff = next((x for x in (diff_d, diff_s) if x != x), max(diff_d, diff_s))
        message = None if ok else (f'calc_diff d {diff_d:.3g}, sqr_sum {diff_s:.3g} against the TF32 torch '
                                   f'reference (tolerance {TOLERANCE:g})' +
                                   (f'; d and sqr_sum summed over {splits} splits' if splits is not None else ''))
        return ok, message, diff
    return verify


def _entry(torch, f, a, b, ref_d, ref_s, splits):
    m, n = ref_d.shape
    lead = () if splits is None else (splits, )
    d = torch.empty(lead + (m, n), dtype=torch.float, device=DEVICE)
    s = torch.empty(lead + (m, ), dtype=torch.float, device=DEVICE)

    def prepare():  # both outputs NaN before the check: a call that writes nothing fails it
        d.fill_(float('nan'))
        s.fill_(float('nan'))
    shape = f'd [{splits}, M, N], sqr_sum [{splits}, M]' if splits else 'd [M, N], sqr_sum [M]'
    return Entry(fn=lambda: f(a, b, d, s, num_splits=splits), out=(d, s), prepare=prepare,
                 verify=verifier(ref_d, ref_s, splits), label=f'{FUNCTION}(num_splits={splits}): {shape}')


def problem(ctx, case):
    """The case's entries on one a [M, K] bf16 and b [N, K] fp32 (torch.randn, seeded per case). Build and check it
    under tf32_matmul: the reference d is a torch matmul."""
    torch = ctx.torch
    torch.manual_seed(seed_for(ctx.seed, f'hc {case.name}'))
    a = torch.randn((case.m, case.k), dtype=torch.bfloat16, device=DEVICE)
    b = torch.randn((case.n, case.k), dtype=torch.float, device=DEVICE)
    ref_d = a.float() @ b.T
    ref_s = a.float().square().sum(-1)
    entries = {}
    for key, lib, splits in CALLS:
        if lib not in ctx.libs:
            continue
        f = lookup(ctx.libs[lib], FUNCTION)
        entries[key] = absent(FUNCTION) if f is None else _entry(torch, f, a, b, ref_d, ref_s, splits)
    return Problem(case.name, entries, flops=case.flops, num_bytes=hc_bytes(case.m, case.n, case.k),
                   params={'m': case.m, 'n': case.n, 'k': case.k, 'peer_splits': PEER_SPLITS,
                           'split_bytes': hc_bytes(case.m, case.n, case.k, PEER_SPLITS)})


def add_rates(row):
    """GB/s of each entry (its call's bytes over its time), DeepGEMM's best of its two calls (of those that ran and
    matched) and the ratios their time / our time: vs its one split, its 16 splits and its best."""
    byte_counts = {'ours': row['bytes'], 'deepgemm': row['bytes'], SPLIT_KEY: row['params']['split_bytes']}
    times = {key: stats.ok_us(row, key) for key in ENTRY_KEYS}
    for key in ENTRY_KEYS:
        row[f'{key}_gbps'] = stats.gbps(byte_counts[key], times[key])
    measured = [(times[key], key) for key in ('deepgemm', SPLIT_KEY) if times[key] is not None]
    row['deepgemm_best_us'], row['deepgemm_best'] = min(measured) if measured else (None, None)
    row['ratio_vs_deepgemm'] = stats.ratio(times['deepgemm'], times['ours'])
    row['ratio_vs_deepgemm_split16'] = stats.ratio(times[SPLIT_KEY], times['ours'])
    row['ratio_vs_deepgemm_best'] = stats.ratio(row['deepgemm_best_us'], times['ours'])
    return row
