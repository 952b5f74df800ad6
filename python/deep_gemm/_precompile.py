"""deep_gemm.precompile: compile, ahead of serving and without a GPU, every kernel a range of calls will need.

A serving engine knows its weights' (N, K) and its token budget, and calls each GEMM for every M up to it. This
module checks each such call as the call itself would (the same Python and C++ checks, on stand-in tensors that
carry shapes, strides and dtypes but no memory), keeps the plan instead of running it, and compiles the plans'
kernels, for a Hopper preset, into the JIT cache on every core with a progress line. A later process on that
hardware with the same settings (set_num_sms, DG_* variables) then compiles nothing for those calls;
``set_jit_compile(False)`` makes any call that would still compile raise instead.
"""
import itertools
import os
import sys
import time

from . import _C, _plans

_DTYPES = {'bf16': 'bfloat16', 'fp32': 'float32', 'fp8': 'float8_e4m3fn', 'int32': 'int32'}
_ELEMENT_BYTES = {'bfloat16': 2, 'float32': 4, 'float8_e4m3fn': 1, 'int32': 4}


class _Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return 'torch.' + self.name


class _Device:
    type, index = 'cuda', 0


class _StandIn:
    """A tensor's geometry without memory: what the checks read (data_ptr, shape, stride(), dtype, device). The
    addresses cycle through 1024 slots 64 GiB apart, so the few tensors of one call never alias."""
    _next = [0]
    _dtypes = {name: _Dtype(name) for name in _ELEMENT_BYTES}

    def __init__(self, shape, dtype, strides=None, ptr=None):
        self.shape, self.dtype, self.device = tuple(shape), self._dtypes[dtype], _Device()
        if strides is None:
            strides, running = [], 1
            for size in reversed(self.shape):
                strides.insert(0, running)
                running *= max(size, 1)
        self._strides = tuple(strides)
        if ptr is None:
            self._next[0] += 1
            ptr = (1 << 44) + ((self._next[0] % 1024) << 36)
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        return 0

    def transpose(self, d0, d1):
        shape, strides = list(self.shape), list(self._strides)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
        return _StandIn(shape, self.dtype.name, strides, self._ptr)

    @property
    def mT(self):
        return self.transpose(-2, -1)


def _ceil128(x):
    return -(-x // 128)


def _mn_major_sf(mn, kb, groups=None):
    """Per-token scales [(G,) mn, kb] MN-major and TMA-aligned (what get_mn_major_tma_aligned_tensor returns)."""
    aligned = -(-mn // 4) * 4
    if groups is None:
        return _StandIn((mn, kb), 'float32', (1, aligned))
    return _StandIn((groups, mn, kb), 'float32', (kb * aligned, 1, aligned))


def _token_sf(mn, k, layout, groups=None):
    kb = _ceil128(k)
    if layout == 'mn-major':
        return _mn_major_sf(mn, kb, groups)
    return _StandIn(((groups, ) if groups else ()) + (mn, kb), 'float32')  # row-major, as the casts return them


def _block_sf(n, k, groups=None):
    return _StandIn(((groups, ) if groups else ()) + (_ceil128(n), _ceil128(k)), 'float32')


def _dense_call(name, m, n, k, out_dtype, per_token_b, accumulate, sf_layout):
    layout = name[-2:]
    fp8 = 'fp8' in name
    dtype = 'float8_e4m3fn' if fp8 else 'bfloat16'
    a, b = _StandIn((m, k), dtype), _StandIn((n, k), dtype)
    d = _StandIn((m, n), out_dtype)
    if fp8:
        a = (a, _token_sf(m, k, sf_layout))
        b = (b, _token_sf(n, k, 'mn-major') if per_token_b else _block_sf(n, k))
        if layout[0] == 't':
            a = (a[0].transpose(0, 1), a[1].transpose(0, 1))
        if layout[1] == 'n':
            b = (b[0].transpose(0, 1), b[1].transpose(0, 1))
    else:
        if layout[0] == 't':
            a = _StandIn((k, m), dtype)
        if layout[1] == 'n':
            b = _StandIn((k, n), dtype)
    kwargs = {'c': d} if accumulate else {}
    if fp8 and per_token_b:
        kwargs['recipe'] = (1, 1, 128)
    return (a, b, d), kwargs


def _m_grouped_call(name, m, n, k, groups, sf_layout):
    fp8 = 'fp8' in name
    nn = '_nn_' in name
    d, rows = _StandIn((m, n), 'bfloat16'), _StandIn((m, ), 'int32')
    if not fp8:
        b = _StandIn((groups, k, n) if nn else (groups, n, k), 'bfloat16')
        return (_StandIn((m, k), 'bfloat16'), b, d, rows), {}
    b = (_StandIn((groups, n, k), 'float8_e4m3fn'), _block_sf(n, k, groups))
    if nn:
        b = (b[0].mT, b[1].mT)
    return ((_StandIn((m, k), 'float8_e4m3fn'), _token_sf(m, k, sf_layout)), b, d, rows), {}


def _masked_call(name, m, n, k, groups, expected_m, sf_layout):
    d, masked_m = _StandIn((groups, m, n), 'bfloat16'), _StandIn((groups, ), 'int32')
    if 'fp8' not in name:
        return (_StandIn((groups, m, k), 'bfloat16'), _StandIn((groups, n, k), 'bfloat16'), d, masked_m,
                expected_m), {}
    a = (_StandIn((groups, m, k), 'float8_e4m3fn'), _token_sf(m, k, sf_layout, groups))
    b = (_StandIn((groups, n, k), 'float8_e4m3fn'), _block_sf(n, k, groups))
    return (a, b, d, masked_m, expected_m), {}


def _skip_head_mid_call(m, n, k, head_splits, sf_layout):
    """fp8_gemm_nt_skip_head_mid: the 1D2D GEMM [m, n] (n = heads * (left + right)) into d [m, n + heads * mid]."""
    left, mid, right = head_splits
    a = (_StandIn((m, k), 'float8_e4m3fn'), _token_sf(m, k, sf_layout))
    b = (_StandIn((n, k), 'float8_e4m3fn'), _block_sf(n, k))
    d = _StandIn((m, n + n // max(left + right, 1) * mid), 'bfloat16')
    return (a, b, d, head_splits), {}


def _k_grouped_call(name, m, n, ks, accumulate):
    groups, sum_k = len(ks), sum(ks)
    d, ks_tensor = _StandIn((groups, m, n), 'float32'), _StandIn((groups, ), 'int32')
    kwargs = {'c': d} if accumulate else {}
    if 'fp8' not in name:
        return (_StandIn((sum_k, m), 'bfloat16'), _StandIn((sum_k, n), 'bfloat16'), d, list(ks), ks_tensor), kwargs
    a = (_StandIn((sum_k * m, ), 'float8_e4m3fn'), _StandIn((m, sum_k // 128), 'float32'))
    b = (_StandIn((sum_k * n, ), 'float8_e4m3fn'), _StandIn((n, sum_k // 128), 'float32'))
    return (a, b, d, list(ks), ks_tensor), kwargs


_DENSE = [f'{p}_gemm_{x}' for p in ('bf16', 'fp8', 'fp8_fp4') for x in ('nt', 'nn', 'tn', 'tt')]
_M_GROUPED = [f'm_grouped_{p}_gemm_{x}_contiguous' for p in ('bf16', 'fp8', 'fp8_fp4') for x in ('nt', 'nn')]
_MASKED = [f'm_grouped_{p}_gemm_nt_masked' for p in ('bf16', 'fp8', 'fp8_fp4')]
_K_GROUPED = ['k_grouped_bf16_gemm_tn_contiguous', 'k_grouped_fp8_gemm_nt_contiguous']
_SKIP_HEAD_MID = 'fp8_gemm_nt_skip_head_mid'
_HC_PRENORM = 'tf32_hc_prenorm_gemm'
SUPPORTED = _DENSE + _M_GROUPED + _MASKED + _K_GROUPED + [_SKIP_HEAD_MID, _HC_PRENORM]


def _sizes(value, name):
    try:
        values = [value] if isinstance(value, int) else list(value)
    except TypeError:
        values = []
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
        raise ValueError(f'{name}: expected a size >= 0 or an iterable of them, got {value!r}')
    return values


class _Progress:
    """One line on stderr, rewritten in place on a terminal; every tenth of the work otherwise."""

    def __init__(self, enabled):
        self.enabled, self.tty, self.shown = enabled, sys.stderr.isatty(), -1

    def __call__(self, done, total, compiled, elapsed):
        if not self.enabled:
            return
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else 0.0
        line = (f'deep_gemm.precompile: {done}/{total} kernels ({compiled} compiled), {rate:.1f}/s, '
                f'ETA {eta:.0f} s')
        if self.tty:
            sys.stderr.write('\r' + line + ('\n' if done == total else ''))
        elif done * 10 // max(total, 1) > self.shown or done == total:
            self.shown = done * 10 // max(total, 1)
            sys.stderr.write(line + '\n')
        sys.stderr.flush()


def precompile(function, *, m, n, k, num_groups=None, expected_m=None, out_dtype=None, recipe=None,
               accumulate=False, sf_layout='mn-major', head_splits=None, num_splits=None, hw='h200', jobs=0,
               progress=True):
    """Compiles into the JIT cache the kernels of ``function`` (a deep_gemm GEMM name) for every combination of the
    sizes given, on ``jobs`` threads (0: all cores); no GPU needed. Returns {'calls', 'kernels', 'compiled',
    'cached', 'seconds'}.

    m, n, k: a size or an iterable of sizes each (K-grouped: k is the list of group sizes). Dense: d [m, n]; M-grouped
    contiguous: m rows in all over num_groups groups; masked: num_groups groups of m rows, ``expected_m`` (a size or
    sizes; default m) the heuristics' hint; out_dtype 'bf16' or 'fp32' where the function takes both (default bf16;
    FP8 with recipe (1, 1, 128) fp32); accumulate: c given as d. sf_layout: how the per-token A scales come,
    'mn-major' (TMA-aligned, as get_mn_major_tma_aligned_tensor and serving engines' quantisers make them) or
    'row-major' (as per_token_cast_to_fp8 returns them): each selects its own kernel. fp8_gemm_nt_skip_head_mid:
    ``head_splits`` (left, mid, right) as the calls pass it, n the GEMM's N = heads * (left + right) (b's rows; d
    has n + heads * mid columns). tf32_hc_prenorm_gemm: a bf16 [m, k], b fp32 [n, k] (n in 8, 16, 24, 32),
    ``num_splits`` None (the library's split, summed in the kernel) or the calls' split count; 'calls' counts the
    M values. hw: the Hopper preset the calls will run on (h200, h100-sxm, h800, h20)."""
    if function not in SUPPORTED:
        raise ValueError(f'function: expected one of {", ".join(SUPPORTED)}, got {function!r}')
    if sf_layout not in ('mn-major', 'row-major'):
        raise ValueError(f"sf_layout: expected 'mn-major' or 'row-major', got {sf_layout!r}")
    if recipe is not None and tuple(recipe) not in ((1, 128, 128), (1, 1, 128)):
        raise ValueError(f'recipe: expected (1, 128, 128) or (1, 1, 128), got {recipe!r}')
    per_token_b = recipe is not None and tuple(recipe) == (1, 1, 128)
    out = _DTYPES.get(out_dtype or ('fp32' if per_token_b else 'bf16'))
    if out not in ('bfloat16', 'float32'):
        raise ValueError(f"out_dtype: expected 'bf16' or 'fp32', got {out_dtype!r}")
    if function != _SKIP_HEAD_MID and head_splits is not None:
        raise ValueError(f'head_splits: only fp8_gemm_nt_skip_head_mid takes head_splits, got {head_splits!r} '
                         f'for {function}')
    if function != _HC_PRENORM and num_splits is not None:
        raise ValueError(f'num_splits: only tf32_hc_prenorm_gemm takes num_splits, got {num_splits!r} for {function}')
    if function == _SKIP_HEAD_MID and (per_token_b or out != 'bfloat16'):
        raise ValueError(f'{"recipe" if per_token_b else "out_dtype"}: fp8_gemm_nt_skip_head_mid runs the 1D2D recipe '
                         f'into bf16 d, got recipe {recipe!r}, out_dtype {out_dtype!r}')
    unused = {'num_groups': num_groups, 'expected_m': expected_m, 'accumulate': accumulate or None}
    if function == _HC_PRENORM:
        unused.update(recipe=recipe, out_dtype=out_dtype, sf_layout=None if sf_layout == 'mn-major' else sf_layout)
    for name, value in unused.items() if function in (_SKIP_HEAD_MID, _HC_PRENORM) else ():
        if value is not None:
            raise ValueError(f'{name}: {function} takes no {name}, got {value!r}')
    fn = getattr(sys.modules[__package__], function)
    ms, ns = _sizes(m, 'm'), _sizes(n, 'n')
    if function == _HC_PRENORM:
        return _precompile_hc_prenorm(ms, ns, _sizes(k, 'k'), num_splits, hw, jobs, progress)
    if function == _SKIP_HEAD_MID:
        head_splits = _head_splits(head_splits, ns)
    if function in _K_GROUPED:
        ks_options = [_sizes(k, 'k')]
    else:
        ks_options = _sizes(k, 'k')
    if function in _M_GROUPED + _MASKED and num_groups is None:
        raise ValueError(f'num_groups: expected the number of groups of {function}, got None')
    calls = []
    for m_, n_, k_ in itertools.product(ms, ns, ks_options):
        if function in _DENSE:
            calls.append(_dense_call(function, m_, n_, k_, out, per_token_b, accumulate, sf_layout))
        elif function in _M_GROUPED:
            calls.append(_m_grouped_call(function, m_, n_, k_, num_groups, sf_layout))
        elif function == _SKIP_HEAD_MID:
            calls.append(_skip_head_mid_call(m_, n_, k_, head_splits, sf_layout))
        elif function in _MASKED:
            for e in _sizes(m_ if expected_m is None else expected_m, 'expected_m'):
                calls.append(_masked_call(function, m_, n_, k_, num_groups, e, sf_layout))
        else:
            calls.append(_k_grouped_call(function, m_, n_, k_, accumulate))
    start = time.perf_counter()
    plans = _plans.collect(lambda: [_call(fn, args, kwargs) for args, kwargs in calls])
    return _result(len(calls), _C.precompile_plans(plans, hw, jobs, _Progress(progress)), start)


def _result(calls, compiled_counts, start):
    total, compiled, cached, failures = compiled_counts
    if failures:
        raise RuntimeError(f'precompile: {len(failures)} of {total} kernels failed to compile:\n' +
                           '\n'.join(failures[:10]))
    return {'calls': calls, 'kernels': total, 'compiled': compiled, 'cached': cached,
            'seconds': round(time.perf_counter() - start, 2)}


def _head_splits(head_splits, ns):
    """(left, mid, right) as fp8_gemm_nt_skip_head_mid checks it, and left + right dividing every n."""
    try:
        parts = tuple(head_splits)
    except TypeError:
        parts = ()
    if (len(parts) != 3 or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in parts) or
            parts[0] + parts[2] == 0):
        raise ValueError(f'head_splits: expected (left, mid, right), sizes >= 0 with left + right > 0, for '
                         f'fp8_gemm_nt_skip_head_mid, got {head_splits!r}')
    for n_ in ns:
        if n_ % (parts[0] + parts[2]):
            raise ValueError(f'n: expected the GEMM\'s N = heads * (left + right), a multiple of '
                             f'{parts[0] + parts[2]} for head_splits {parts}, got {n_}')
    return parts


def _precompile_hc_prenorm(ms, ns, ks, num_splits, hw, jobs, progress):
    """tf32_hc_prenorm_gemm has no plan: its kernels come from the C++ call path's configuration and kernel spec
    for each M (_C.hc_prenorm_kernel_specs lists them), with the set_num_sms setting as the call reads it."""
    if num_splits is not None and (isinstance(num_splits, bool) or not isinstance(num_splits, int) or
                                   not 1 <= num_splits <= 2**31 - 1):
        raise ValueError(f'num_splits: expected None (chosen by the library) or a split count >= 1, got '
                         f'{num_splits!r}')
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise ValueError(f'jobs: expected a thread count >= 0 (0 = all cores), got {jobs!r}')
    for m_ in ms:
        if m_ > 2**31 - 1:
            raise ValueError(f'm: expected sizes below 2^31, got {m_}')
    for n_ in ns:
        if n_ not in (8, 16, 24, 32):
            raise ValueError(f'n: expected 8, 16, 24 or 32 (b\'s rows) for tf32_hc_prenorm_gemm, got {n_}')
    for k_ in ks:
        # TMA reads a (bf16) and b (fp32) rows 16-byte aligned, as the call checks.
        if k_ == 0 or k_ > 2**31 - 1 or (k_ % 8 and max(ms) > 1) or k_ % 4:
            raise ValueError(f'k: expected K > 0 with a\'s and b\'s rows a multiple of 16 bytes (K a multiple of '
                             f'8), got {k_}')
    start = time.perf_counter()
    counts = _C.precompile_hc_prenorm(ms, ns, ks, num_splits, hw, _C.num_sms_setting(), jobs, _Progress(progress))
    return _result(len(ms) * len(ns) * len(ks), counts, start)


def _call(fn, args, kwargs):
    try:
        fn(*args, **kwargs)
    except _plans.Collected:
        pass


def set_jit_compile(allowed):
    """set_jit_compile(False): a GEMM call whose kernel is not in the JIT cache raises RuntimeError naming it instead
    of compiling (DG_JIT_DISABLE=1); set_jit_compile(True) allows compiling again. For serving after precompile."""
    if not isinstance(allowed, bool):
        raise TypeError(f'allowed: expected a bool, got {type(allowed).__name__} {allowed!r}')
    os.environ['DG_JIT_DISABLE'] = '0' if allowed else '1'
    _C.reload_env()
