"""deep_gemm's GEMMs as torch.library custom ops (namespace ``deep_gemm``), so that torch.compile and torch.export
put a call into their graph as one op, with a fake implementation that checks shapes and dtypes and declares that
``d`` is written, instead of breaking the graph at the first data pointer.

Registering imports torch, which ``import deep_gemm`` never does by itself, so it happens at ``import deep_gemm``
when torch is already imported, else on the first call that runs the full checks (every process makes one before
a kept plan serves a call), or through ``deep_gemm.register_torch_ops()``: a program that imports deep_gemm before
torch and whose first GEMM call is inside torch.compile calls that first.

Once registered, each plain function starts by asking ``torch.compiler.is_compiling()`` (tens of nanoseconds).
While torch traces, the function calls ``torch.ops.deep_gemm.<name>`` instead, with the FP8 (data, scales) pairs as
separate tensors and ``c`` given as ``d`` turned into ``accumulate=True`` (an op's written argument may not alias
another); the op's implementation calls the plain function again, eagerly. The fp8_fp4_* names and the legacy
aliases reach these ops through the functions they call.
"""
import inspect
import sys

from ._checks import dtype_name


def _never():
    return False


# The plain functions' question "is torch tracing this call?": torch.compiler.is_compiling once registered.
compiling = _never
_ops = {}  # name -> torch.ops.deep_gemm.<name>

# The ops' arguments after d, family by family. FP8 ops take a pair's data as a/b and its scales as sfa/sfb.
_RECIPES = 'int[]? recipe, int[]? recipe_a, int[]? recipe_b, str compiled_dims, bool disable_ue8m0_cast'
_PSUM = 'bool use_psum_layout, bool ensure_zero_padding, int? expected_m_for_psum_layout'
_SCHEMAS = {
    'dense': 'Tensor a, Tensor b, Tensor(d!) d, Tensor? c, bool accumulate, str compiled_dims',
    'cublaslt': 'Tensor a, Tensor b, Tensor(d!) d, Tensor? c, bool accumulate',
    'm_contiguous': f'Tensor a, Tensor b, Tensor(d!) d, Tensor grouped_layout, str compiled_dims, {_PSUM}',
    'masked': 'Tensor a, Tensor b, Tensor(d!) d, Tensor masked_m, int expected_m, str compiled_dims',
    'k_grouped': 'Tensor a, Tensor b, Tensor(d!) d, int[] ks_cpu, Tensor grouped_layout, Tensor? c, '
                 'bool accumulate, str compiled_dims, bool use_psum_layout',
    'fp8_dense': f'Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c, bool accumulate, {_RECIPES}',
    'fp8_m_contiguous': f'Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor grouped_layout, '
                        f'{_RECIPES}, {_PSUM}',
    'fp8_masked': f'Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor masked_m, int expected_m, '
                  f'{_RECIPES}',
    'fp8_skip_head_mid': 'Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[] head_splits, int[]? recipe, '
                         'str compiled_dims, bool disable_ue8m0_cast',
    'fp8_k_grouped': 'Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[] ks_cpu, Tensor grouped_layout, '
                     'Tensor? c, bool accumulate, int[] recipe, str compiled_dims, bool use_psum_layout',
    'einsum': 'str expr, Tensor a, Tensor b, Tensor(d!) d, Tensor? c, bool accumulate, bool use_cublaslt',
    'fp8_einsum': 'str expr, Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c, bool accumulate, '
                  'int[] recipe',
}
_FAMILIES = {
    'dense': [f'bf16_gemm_{x}' for x in ('nt', 'nn', 'tn', 'tt')],
    'cublaslt': [f'cublaslt_gemm_{x}' for x in ('nt', 'nn', 'tn', 'tt')],
    'm_contiguous': ['m_grouped_bf16_gemm_nt_contiguous', 'm_grouped_bf16_gemm_nn_contiguous'],
    'masked': ['m_grouped_bf16_gemm_nt_masked'],
    'k_grouped': ['k_grouped_bf16_gemm_tn_contiguous'],
    'fp8_dense': [f'fp8_gemm_{x}' for x in ('nt', 'nn', 'tn', 'tt')],
    'fp8_m_contiguous': ['m_grouped_fp8_gemm_nt_contiguous', 'm_grouped_fp8_gemm_nn_contiguous'],
    'fp8_masked': ['m_grouped_fp8_gemm_nt_masked'],
    'fp8_skip_head_mid': ['fp8_gemm_nt_skip_head_mid'],
    'fp8_k_grouped': ['k_grouped_fp8_gemm_nt_contiguous'],
    'einsum': ['einsum'],
    'fp8_einsum': ['fp8_einsum'],
}
_SEQUENCES = ('recipe', 'recipe_a', 'recipe_b', 'ks_cpu', 'head_splits')


def _argument_names(schema):
    return [part.split()[-1] for part in schema.split(', ')]


class _Op:
    """One plain function and its op: how the arguments of one map onto the other's."""

    def __init__(self, name, family, function):
        self.name, self.family, self.function = name, family, function
        self.schema = _SCHEMAS[family]
        self.op_args = _argument_names(self.schema)
        self.params = list(inspect.signature(function).parameters)
        self.fp8 = 'sfa' in self.op_args
        missing = set(self.params) - set(self.op_args)
        assert not missing, f'{name}: the op lacks {missing}'

    def op_values(self, args):
        """The op's arguments for the plain function's ``args`` (every parameter, in order)."""
        given = dict(zip(self.params, args))
        c, d = given.get('c'), given['d']
        accumulate = c is not None and c is d
        values = []
        for arg in self.op_args:
            if arg == 'accumulate':
                values.append(accumulate)
            elif arg == 'c':
                values.append(None if accumulate else c)
            elif self.fp8 and arg in ('a', 'b'):
                values.append(given[arg][0])
            elif arg in ('sfa', 'sfb'):
                values.append(given[arg[-1]][1])
            elif arg in _SEQUENCES:
                value = given.get(arg)
                values.append(None if value is None else list(value))
            else:
                values.append(given.get(arg))
        return values

    def plain_arguments(self, values):
        """The plain function's keyword arguments for the op's ``values``."""
        got = dict(zip(self.op_args, values))
        if got.pop('accumulate', False):
            got['c'] = got['d']
        if self.fp8:
            got['a'], got['b'] = (got['a'], got.pop('sfa')), (got['b'], got.pop('sfb'))
        for arg in ('recipe', 'recipe_a', 'recipe_b', 'head_splits'):
            if got.get(arg) is not None:
                got[arg] = tuple(got[arg])
        return {p: got[p] for p in self.params}

    def run(self, *values):
        self.function(**self.plain_arguments(values))

    def fake(self, *values):
        _FAKE_CHECKS[self.family](self.name, self.plain_arguments(values))


_registry = {}


def traced(name, *args):
    """The call ``name(*args)`` (every parameter, in order) as its op, while torch traces it."""
    op = _registry[name]
    return _ops[name](*op.op_values(args))


def register_torch_ops():
    """Registers every deep_gemm GEMM as ``torch.ops.deep_gemm.<name>`` (once; imports torch)."""
    global compiling
    if _ops:
        return
    import torch

    package = sys.modules[__package__]
    for family, names in _FAMILIES.items():
        for name in names:
            op = _Op(name, family, getattr(package, name))
            custom = torch.library.custom_op(f'deep_gemm::{name}', op.run, mutates_args=('d', ),
                                             schema=f'({op.schema}) -> ()')
            custom.register_fake(op.fake)
            _registry[name] = op
            _ops[name] = getattr(torch.ops.deep_gemm, name)
    compiling = torch.compiler.is_compiling


def register_if_torch_imported():
    """register_torch_ops() when torch is imported already (called where importing it is not allowed)."""
    if not _ops and 'torch' in sys.modules:
        register_torch_ops()


# ---- fake implementations: shapes and dtypes, no data ----------------------------------------------------------
# Written apart from the plain functions' checks (which need integer sizes and pointers): under torch.compile with
# dynamic shapes the sizes here are symbols, compared without being turned into ints, so a dynamic M stays dynamic.

_OPERAND = {False: ('bfloat16', ), True: ('float8_e4m3fn', )}


def _sizes(t):
    """A tensor's sizes as they are: symbols under dynamic shapes (an int() of one would specialise it, and every new
    M would recompile)."""
    return tuple(t.shape)


def _require(ok, message):
    if not ok:
        raise ValueError(message)


def _dims(t, name, count, what):
    shape = _sizes(t)
    _require(len(shape) == count, f'{name}: expected a {count}-D tensor {what}, got {len(shape)}-D {shape}')
    return shape


def _dtype(t, name, allowed):
    _require(dtype_name(t) in allowed, f'{name}: expected {" or ".join(allowed)} elements, got {t.dtype}')


def _shape(t, name, expected, what=''):
    _require(_sizes(t) == tuple(expected),
             f'{name}: expected shape {tuple(expected)}{what}, got {_sizes(t)}')


def _operands(g, fp8):
    """(a, b, a scales, b scales) of the plain arguments ``g``, the operands' dtypes checked."""
    a, b = (g['a'][0], g['b'][0]) if fp8 else (g['a'], g['b'])
    _dtype(a, 'a', _OPERAND[fp8])
    _dtype(b, 'b', _OPERAND[fp8])
    if not fp8:
        return a, b, None, None
    for sf, name in ((g['a'][1], 'a[1]'), (g['b'][1], 'b[1]')):
        _dtype(sf, name, ('float32', ))
    return a, b, g['a'][1], g['b'][1]


def _scales(sf, name, count, what):
    """Scale factors in any layout: their element count (per token or per 128x128 block) is fixed."""
    numel = 1
    for s in _sizes(sf):
        numel *= s
    _require(numel == count, f'{name}: expected {count} scale factors ({what}), got shape {_sizes(sf)}')


def _ceil128(x):
    return -(-x // 128)


def _c(g, shape):
    c = g.get('c')
    if c is not None and c is not g['d']:
        _shape(c, 'c', shape, ' (like d)')
        _dtype(c, 'c', ('bfloat16', 'float32'))


def _fake_dense(name, g):
    fp8 = name.startswith('fp8')
    a, b, sfa, sfb = _operands(g, fp8)
    layout = name[-2:]
    rows, cols = _dims(a, 'a', 2, '[M, K]' if layout[0] == 'n' else '[K, M]'), \
        _dims(b, 'b', 2, '[N, K]' if layout[1] == 't' else '[K, N]')
    m, k = rows if layout[0] == 'n' else rows[::-1]
    n, k_b = cols if layout[1] == 't' else cols[::-1]
    _require(k_b == k, f'b: expected K = {k} like a, got shape {cols}')
    d = g['d']
    _shape(d, 'd', (m, n), ' ([M, N])')
    _dtype(d, 'd', ('bfloat16', 'float32'))
    _c(g, (m, n))
    if fp8:
        per_token_b = g.get('recipe') in ([1, 1, 128], (1, 1, 128)) or g.get('recipe_b') in ([1, 128], (1, 128))
        _scales(sfa, 'a[1]', m * _ceil128(k), 'one per token and 128 of K')
        _scales(sfb, 'b[1]', (n if per_token_b else _ceil128(n)) * _ceil128(k),
                'one per token' if per_token_b else 'one per 128x128 block')


def _fake_m_contiguous(name, g):
    fp8 = name.startswith('m_grouped_fp8')
    a, b, sfa, sfb = _operands(g, fp8)
    m, k = _dims(a, 'a', 2, '[M, K]')
    nn = '_nn_' in name
    groups, x, y = _dims(b, 'b', 3, '[G, K, N]' if nn else '[G, N, K]')
    n, k_b = (y, x) if nn else (x, y)
    _require(k_b == k, f'b: expected K = {k} like a, got shape {(groups, x, y)}')
    _shape(g['d'], 'd', (m, n), ' ([M, N])')
    _dtype(g['d'], 'd', ('bfloat16', ))
    _dtype(g['grouped_layout'], 'grouped_layout', ('int32', ))
    _shape(g['grouped_layout'], 'grouped_layout', (groups, ) if g['use_psum_layout'] else (m, ))
    if fp8:
        _scales(sfa, 'a[1]', m * _ceil128(k), 'one per token and 128 of K')
        _scales(sfb, 'b[1]', groups * _ceil128(n) * _ceil128(k), 'one per 128x128 block of each group')


def _fake_masked(name, g):
    fp8 = name.startswith('m_grouped_fp8')
    a, b, sfa, sfb = _operands(g, fp8)
    groups, m, k = _dims(a, 'a', 3, '[G, M, K]')
    groups_b, n, k_b = _dims(b, 'b', 3, '[G, N, K]')
    _require((groups_b, k_b) == (groups, k), f'b: expected [G, N, K] with G = {groups} and K = {k} like a, got '
             f'shape {(groups_b, n, k_b)}')
    _shape(g['d'], 'd', (groups, m, n), ' ([G, M, N])')
    _dtype(g['d'], 'd', ('bfloat16', ))
    _dtype(g['masked_m'], 'masked_m', ('int32', ))
    _shape(g['masked_m'], 'masked_m', (groups, ))
    if fp8:
        _scales(sfa, 'a[1]', groups * m * _ceil128(k), 'one per token and 128 of K')
        _scales(sfb, 'b[1]', groups * _ceil128(n) * _ceil128(k), 'one per 128x128 block of each group')


def _fake_skip_head_mid(name, g):
    a, b, sfa, sfb = _operands(g, True)
    m, k = _dims(a, 'a', 2, '[M, K]')
    n, k_b = _dims(b, 'b', 2, '[N, K]')
    _require(k_b == k, f'b: expected K = {k} like a, got shape {(n, k_b)}')
    left, mid, right = g['head_splits']
    _require(left + right > 0 and n % (left + right) == 0,
             f'head_splits: expected left + right to divide N = {n}, got {tuple(g["head_splits"])}')
    _shape(g['d'], 'd', (m, n + n // (left + right) * mid), ' ([M, N + N / (left + right) * mid])')
    _dtype(g['d'], 'd', ('bfloat16', ))
    _scales(sfa, 'a[1]', m * _ceil128(k), 'one per token and 128 of K')
    _scales(sfb, 'b[1]', _ceil128(n) * _ceil128(k), 'one per 128x128 block')


def _fake_k_grouped(name, g):
    fp8 = name.startswith('k_grouped_fp8')
    a, b, sfa, sfb = _operands(g, fp8)
    ks = list(g['ks_cpu'])
    d = g['d']
    groups, m, n = _dims(d, 'd', 3, '[G, M, N]')
    _dtype(d, 'd', ('float32', ))
    _require(len(ks) == groups, f'ks_cpu: expected {groups} sizes (one per group of d), got {len(ks)}')
    sum_k = sum(ks)
    if fp8:
        for t, label, mn in ((a, 'a', m), (b, 'b', n)):
            numel = 1
            for s in _sizes(t):
                numel *= s
            _require(numel == sum_k * mn, f'{label}: expected {sum_k * mn} elements (the groups\' K-major '
                     f'[{mn}, k] blocks), got shape {_sizes(t)}')
        _scales(sfa, 'a[1]', m * (sum_k // 128), 'one per token and 128 of K')
        _scales(sfb, 'b[1]', n * (sum_k // 128), 'one per token and 128 of K')
    else:
        _shape(a, 'a', (sum_k, m), ' ([ΣK, M])')
        _shape(b, 'b', (sum_k, n), ' ([ΣK, N])')
    _c(g, (groups, m, n))
    _dtype(g['grouped_layout'], 'grouped_layout', ('int32', ))


def _fake_einsum(name, g):
    fp8 = name == 'fp8_einsum'
    a, b, _, _ = _operands(g, fp8)
    expr = g['expr']
    _require(isinstance(expr, str) and expr.count(',') == 1 and expr.count('->') == 1,
             f'expr: expected an expression "x,y->z", got {expr!r}')
    inputs, out = expr.replace(' ', '').split('->')
    sizes = {}
    for letters, t, label in zip(inputs.split(','), (a, b), ('a', 'b')):
        shape = _sizes(t)
        _require(len(letters) == len(shape), f'{label}: expected {len(letters)} dimensions ({letters!r} of '
                 f'{expr!r}), got shape {shape}')
        for letter, size in zip(letters, shape):
            _require(sizes.setdefault(letter, size) == size, f'{label}: size {size} of {letter!r} differs from '
                     f'{sizes[letter]} elsewhere in {expr!r}')
    _require(all(x in sizes for x in out), f'expr: output letters of {expr!r} must appear in the inputs')
    _shape(g['d'], 'd', tuple(sizes[x] for x in out), f' (the output of {expr!r})')
    _dtype(g['d'], 'd', ('bfloat16', 'float32'))
    _c(g, tuple(sizes[x] for x in out))


_FAKE_CHECKS = {
    'dense': _fake_dense, 'cublaslt': _fake_dense, 'fp8_dense': _fake_dense,
    'm_contiguous': _fake_m_contiguous, 'fp8_m_contiguous': _fake_m_contiguous,
    'masked': _fake_masked, 'fp8_masked': _fake_masked, 'fp8_skip_head_mid': _fake_skip_head_mid,
    'k_grouped': _fake_k_grouped, 'fp8_k_grouped': _fake_k_grouped,
    'einsum': _fake_einsum, 'fp8_einsum': _fake_einsum,
}
