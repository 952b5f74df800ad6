"""Fuzzed calls of every exported GEMM, einsum and layout function, and of tilegemm's own GPU calls outside the top level
(deep_gemm.int8, the private SM90 FP8 x FP4 entries) (issue #31: nothing a user types crashes, hangs, overflows or
reports success falsely).

Each case takes a valid call of one function (random small shapes; stand-in tensors, and CPU torch tensors for the
layout functions when torch is there) and breaks one argument in a way no call accepts: a wrong type or None, a
wrong dtype, shape, stride or device, a pointer no tensor has, a size, stride or scalar at 2^31, 2^63 or -1, a
real CPU torch tensor where a CUDA one belongs. The invariants:
- a broken call raises TypeError or ValueError whose message starts with an argument's name (``a: ``,
  ``b[1]: ``, ``ks_cpu[0]: ``); for a wrong kind of object, the name of the argument that was broken;
- a valid call returns (the layout functions) or, past every check, raises the library's RuntimeError (no GPU
  here); a broken call that gets that far passed a check it should have failed: a false success;
- no case takes more than CASE_SECONDS.
The cases run in a child process that prints each one before running it, so that a crash or a hang leaves the
case as the last line of the report, with the seed. DG_FUZZ_SEED and DG_FUZZ_CASES rerun or widen a run;
`python tests/python/test_fuzz_calls.py SEED CASES` runs it in the foreground.
"""
import importlib
import inspect
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

import deep_gemm
from conftest import HAVE_TORCH, FakeTensor, gpu_available

SEED = int(os.environ.get('DG_FUZZ_SEED', '31'))
CASES = int(os.environ.get('DG_FUZZ_CASES', '4000'))
CASE_SECONDS = 2.0  # a case checks arguments only (no GPU, no JIT): about 0.1 ms
RUN_SECONDS = 120

# The modules whose public functions are the GEMM, einsum and layout functions deep_gemm exports.
MODULES = ('deep_gemm._gemm', 'deep_gemm._fp8', 'deep_gemm._fp8_fp4', 'deep_gemm._einsum', 'deep_gemm._sf_layout')

DTYPES = ('bfloat16', 'float32', 'float16', 'float8_e4m3fn', 'float8_e5m2', 'int8', 'int32', 'float64', 'int64',
          'uint8', 'bool', 'complex64')
NOT_A_TENSOR = (None, 3, 1.5, 'a', [[1.0]], object())
NOT_A_BOOL = (None, 0, 1, 'True', 1.0)
NOT_DIMS = (None, 3, 'xyz', 'nkk', b'nk')
BAD_INTS = (None, 1.5, '32', True, -1, 2**31, 2**63, -2**63)


# --- stand-in tensors --------------------------------------------------------------------------------------------

_DTYPE_OBJECTS = {}
_next_ptr = [0x7F0000000000]


class T(FakeTensor):
    """A stand-in closer to a torch tensor (as in test_plan_cache.py): one dtype object per dtype and get_device(),
    so that a call repeating a signature takes the kept plan; an address of its own, 1 MiB apart."""

    def __init__(self, shape, dtype, strides=None, ptr=None, device='cuda', index=0):
        if ptr is None:
            ptr = _next_ptr[0] = _next_ptr[0] + (1 << 20)
        super().__init__(shape, dtype, device=device, index=index, strides=strides, ptr=ptr)
        self.dtype = _DTYPE_OBJECTS.setdefault(dtype, self.dtype)

    def get_device(self):
        return self.device.index if self.device.type == 'cuda' else -1

    def like(self, shape=None, dtype=None, strides=None, ptr=None, device=None, index=None):
        """This tensor with some attributes replaced (strides as they are unless given)."""
        return T(self.shape if shape is None else shape, self.dtype.name if dtype is None else dtype,
                 self._strides if strides is None else strides, self._ptr if ptr is None else ptr,
                 self.device.type if device is None else device, self.device.index if index is None else index)

    def transpose(self, d0, d1):
        shape, strides = list(self.shape), list(self._strides)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
        return self.like(tuple(shape), strides=tuple(strides))

    @property
    def T(self):
        return self.transpose(-2, -1)

    def __repr__(self):
        where = self.device.type + ('' if self.device.index is None else f':{self.device.index}')
        return f'T({self.shape}, {self.dtype.name}, strides={self._strides}, ptr={self._ptr:#x}, {where})'


class Odd(T):
    """A stand-in whose data_ptr() returns what no tensor's does."""

    def __init__(self, base, value):
        super().__init__(base.shape, base.dtype.name, base._strides, base._ptr, base.device.type, base.device.index)
        self.value = value

    def data_ptr(self):
        return self.value

    def __repr__(self):
        return f'Odd({super().__repr__()}, data_ptr={self.value!r})'


def odd_attribute(x, attribute, value):
    """A stand-in with one attribute replaced: a shape that is not sizes, a stride or data_ptr that is no method."""
    x = x.like()
    setattr(x, attribute, value)
    return x


def t(*shape, dtype='bfloat16', **kw):
    return T(shape, dtype, **kw)


def token_sf(*shape):
    """Per-token scales [(G,) mn, kb], MN-major and TMA-aligned (what get_mn_major_tma_aligned_tensor makes)."""
    mn, kb = shape[-2], shape[-1]
    aligned = (mn + 3) // 4 * 4
    return T(shape, 'float32', ((aligned * kb, ) if len(shape) == 3 else ()) + (1, aligned))


def cdiv(x, y):
    return (x + y - 1) // y


# --- roles: what a valid value of an argument is, so that a broken one is certainly invalid ------------------------

class Tensor:
    """A tensor argument: the dtypes a valid call may give it; ``fixed_shape``: its sizes follow from the others'
    (any other size is invalid), but for those of ``free_dims``; ``free_strides``: any non-negative strides are
    valid (scales); ``cuda``: it must be on the GPU; ``optional``: None is valid; ``ndims``: the valid numbers of
    dimensions when there are several; ``output``: written (its elements must not overlap); ``tma``: moved
    through TMA (a 16-byte aligned address, rows 16 bytes apart)."""

    def __init__(self, dtypes, fixed_shape=True, free_dims=(), free_strides=False, cuda=True, optional=False,
                 ndims=None, output=False, tma=False):
        self.dtypes, self.fixed_shape, self.free_dims, self.free_strides = dtypes, fixed_shape, free_dims, free_strides
        self.cuda, self.optional, self.ndims, self.output, self.tma = cuda, optional, ndims, output, tma


class Pair:
    """A (data, scale factors) operand of the FP8 functions."""

    def __init__(self, data, sf):
        self.data, self.sf = data, sf


class Scalar:
    """A non-tensor argument and values of it that no valid call has; the error must name this argument, except for
    the ``loose`` values, which may also be blamed on another one (a K size that no longer matches a's)."""

    def __init__(self, *bad, loose=()):
        self.bad, self.loose = bad, loose


class Call:
    """A valid call: fn's arguments by name, each argument's role, and whether it needs torch to run."""

    def __init__(self, args, roles, needs_torch=False):
        self.args, self.roles, self.needs_torch = args, roles, needs_torch


def data(*dtypes, **kw):
    return Tensor(dtypes, **kw)


def tma(*dtypes, **kw):
    """A tensor the kernels read through TMA."""
    return Tensor(dtypes, tma=True, **kw)


def out(*dtypes, **kw):
    """The output the kernels write through TMA."""
    return Tensor(dtypes, output=True, tma=True, **kw)


SCALES = dict(dtypes=('float32', ), free_strides=True)


# --- valid calls of each family ------------------------------------------------------------------------------------

def dense_bf16(layout, cublaslt):
    def make(rng):
        m, n, k = rng.choice((64, 192)), rng.choice((64, 256)), rng.choice((64, 384))
        if layout in ('nt', 'nn') and rng.random() < 0.3:
            m = 1
        a = t(m, k) if layout[0] == 'n' else t(k, m)
        b = t(n, k) if layout[1] == 't' else t(k, n)
        d_dtype = rng.choice(('bfloat16', 'float32'))
        d = t(m, n, dtype=d_dtype)
        c = rng.choice((None, t(m, n, dtype=d_dtype), d))
        args = dict(a=a, b=b, d=d, c=c)
        ab = ('bfloat16', 'float8_e4m3fn') if cublaslt else ('bfloat16', )
        operand = data if cublaslt else tma  # cuBLASLt has no TMA rules of ours
        roles = dict(a=operand(*ab), b=operand(*ab), d=Tensor(('bfloat16', 'float32'), output=True, tma=not cublaslt),
                     c=data('bfloat16', 'float32', optional=True))
        if not cublaslt:
            args['compiled_dims'] = rng.choice(('nk', 'mn', ''))
            roles['compiled_dims'] = Scalar(*NOT_DIMS)
        return Call(args, roles)
    return make


def m_grouped_bf16(layout, with_hint):
    def make(rng):
        groups, n, k = rng.choice((1, 3)), rng.choice((64, 256)), rng.choice((64, 384))
        m = 128 * rng.choice((1, 4))
        psum = rng.random() < 0.3
        args = dict(a=t(m, k), b=t(groups, n, k) if layout == 'nt' else t(groups, k, n), d=t(m, n),
                    grouped_layout=t(groups if psum else m, dtype='int32'), compiled_dims='nk',
                    use_psum_layout=psum, ensure_zero_padding=rng.random() < 0.5)
        # Without the prefix-sum layout b may hold groups no row uses.
        roles = dict(a=tma('bfloat16'), b=tma('bfloat16', free_dims=() if psum else (0, )), d=out('bfloat16'),
                     grouped_layout=data('int32'), compiled_dims=Scalar(*NOT_DIMS), use_psum_layout=Scalar(*NOT_A_BOOL),
                     ensure_zero_padding=Scalar(*NOT_A_BOOL))
        if with_hint:
            args['expected_m_for_psum_layout'] = rng.choice((None, 64)) if psum else None
            roles['expected_m_for_psum_layout'] = Scalar(0, -1, 1.5, 'x', True) if psum else Scalar(64, 0, 'x')
        return Call(args, roles)
    return make


def masked_bf16(rng):
    groups, m_max, n, k = rng.choice((1, 4)), rng.choice((64, 128)), rng.choice((64, 256)), rng.choice((64, 384))
    args = dict(a=t(groups, m_max, k), b=t(groups, n, k), d=t(groups, m_max, n), masked_m=t(groups, dtype='int32'),
                expected_m=rng.choice((1, 32, 2**31 - 1)), compiled_dims='nk')
    roles = dict(a=tma('bfloat16'), b=tma('bfloat16'), d=out('bfloat16'), masked_m=data('int32'),
                 expected_m=Scalar(*BAD_INTS, 0), compiled_dims=Scalar(*NOT_DIMS))
    return Call(args, roles)


def k_grouped_bf16(rng):
    ks = [64 * rng.choice((0, 1, 2)) for _ in range(rng.choice((1, 3)))]
    m, n, sum_k = rng.choice((64, 128)), rng.choice((64, 256)), sum(ks)
    d = t(len(ks), m, n, dtype='float32')
    args = dict(a=t(sum_k, m), b=t(sum_k, n), d=d, ks_cpu=ks, grouped_layout=t(len(ks), dtype='int32'),
                c=rng.choice((None, d, t(len(ks), m, n, dtype='float32'))), compiled_dims='mn', use_psum_layout=False)
    roles = dict(a=tma('bfloat16'), b=tma('bfloat16'), d=out('float32'), grouped_layout=data('int32'),
                 c=data('float32', optional=True), compiled_dims=Scalar(*NOT_DIMS),
                 use_psum_layout=Scalar(True, *NOT_A_BOOL), ks_cpu=bad_ks(ks, 64))
    return Call(args, roles)


def bad_ks(ks, multiple):
    """ks_cpu values no call with these operands accepts."""
    g = len(ks)
    return Scalar(None, [], 'abc', 128, [1.5] * g, [True] * g, [2**31] * g, [2**63] * g, [-multiple] + ks[1:],
                  [k + multiple // 2 for k in ks], loose=(ks + [multiple], [k + multiple for k in ks]))


RECIPE_ARGS = dict(recipe=None, recipe_a=None, recipe_b=None)
BAD_RECIPES = ((3, 3, 3), 'abc', 1, (1, 128), (1, 128, 128, 1), (True, 128, 128), (1.0, 128, 128), (1, 128, 32))


def fp8_recipe_args(rng, one_d_one_d):
    """One of the ways to name the recipe, and values that break it."""
    if one_d_one_d:
        args = rng.choice((dict(recipe=(1, 1, 128)), dict(recipe_a=(1, 128), recipe_b=(1, 128))))
    else:
        args = rng.choice((dict(), dict(recipe=(1, 128, 128)), dict(recipe_a=(1, 128), recipe_b=(128, 128))))
    args = dict(RECIPE_ARGS, **args)
    # recipe_a and recipe_b go together: one broken may be blamed on the other.
    roles = dict(recipe=Scalar(*BAD_RECIPES), recipe_a=Scalar(loose=((128, 128), (1, 1, 128), 'x', (1, 128.0))),
                 recipe_b=Scalar(loose=((1, 1), (128, 128, 128), 'x')))
    if args['recipe_a'] is not None:
        roles['recipe'] = Scalar((1, 128, 128), (1, 1, 128), *BAD_RECIPES)
    else:
        roles['recipe_a'] = Scalar(loose=((1, 128), (128, 128), 'x'))
    return args, roles


def fp8_common(rng):
    return (dict(compiled_dims='nk', disable_ue8m0_cast=rng.random() < 0.5),
            dict(compiled_dims=Scalar(*NOT_DIMS), disable_ue8m0_cast=Scalar(*NOT_A_BOOL)))


def fp8_operand(rows, k, per_token, transposed):
    """(fp8 [rows, K], scales) as DeepGEMM's nn/tn/tt callers pass them: transposed views of K-major storage."""
    sf = token_sf(rows, cdiv(k, 128)) if per_token else t(cdiv(rows, 128), cdiv(k, 128), dtype='float32')
    x = t(rows, k, dtype='float8_e4m3fn')
    return (x.T, sf.T) if transposed else (x, sf)


def dense_fp8(transpose_a, transpose_b):
    def make(rng):
        m, n, k = rng.choice((1, 64, 200)), rng.choice((64, 256)), rng.choice((128, 384, 640))
        one_d_one_d = rng.random() < 0.5
        d = t(m, n, dtype='float32' if one_d_one_d else 'bfloat16')
        args = dict(a=fp8_operand(m, k, True, transpose_a), b=fp8_operand(n, k, one_d_one_d, transpose_b), d=d,
                    c=rng.choice((None, d, t(m, n, dtype='float32'))) if one_d_one_d else None)
        roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                     d=out('float32' if one_d_one_d else 'bfloat16'),
                     c=data('float32', optional=True) if one_d_one_d else Scalar(t(m, n, dtype='float32')))
        for extra, extra_roles in (fp8_recipe_args(rng, one_d_one_d), fp8_common(rng)):
            args.update(extra)
            roles.update(extra_roles)
        return Call(args, roles)
    return make


def skip_head_mid_call(rng):
    m, k, heads = rng.choice((1, 64, 200)), rng.choice((128, 384, 640)), rng.choice((1, 3))
    left, mid, right = rng.choice(((128, 64, 128), (64, 16, 128), (0, 32, 64)))
    n = heads * (left + right)
    args = dict(a=fp8_operand(m, k, True, False), b=fp8_operand(n, k, False, False),
                d=t(m, n + heads * mid, dtype='bfloat16'), head_splits=(left, mid, right),
                recipe=rng.choice((None, (1, 128, 128))))
    # Splits that keep every part's sign and sum but no longer fit N or d's width may be blamed on those.
    roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                 d=out('bfloat16'),
                 head_splits=Scalar(None, 128, 'abc', (128, 64), (128, 64, 128, 0), (-128, 64, 128), (0, 64, 0),
                                    (128.0, 64, 128), (True, 64, 128), (2**31, 0, 0),
                                    loose=((128, 64, 64), (8, 0, 8), (left, mid + 8, right))),
                 recipe=Scalar((1, 1, 128), *BAD_RECIPES))
    common, common_roles = fp8_common(rng)
    args.update(common)
    roles.update(common_roles)
    return Call(args, roles)


def m_grouped_fp8(layout, with_hint):
    def make(rng):
        groups, n, k = rng.choice((1, 3)), rng.choice((128, 256)), rng.choice((128, 384))
        m = 128 * rng.choice((1, 4))
        psum = rng.random() < 0.3
        b = t(groups, n, k, dtype='float8_e4m3fn')
        b_sf = t(groups, cdiv(n, 128), cdiv(k, 128), dtype='float32')
        args = dict(a=(t(m, k, dtype='float8_e4m3fn'), token_sf(m, cdiv(k, 128))),
                    b=(b, b_sf) if layout == 'nt' else (b.T, b_sf.T), d=t(m, n),
                    grouped_layout=t(groups if psum else m, dtype='int32'))
        roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                     d=out('bfloat16'), grouped_layout=data('int32'))
        recipe_args, recipe_roles = fp8_recipe_args(rng, False)
        recipe_roles['recipe'] = Scalar((1, 1, 128), *BAD_RECIPES)
        for extra, extra_roles in ((recipe_args, recipe_roles), fp8_common(rng)):
            args.update(extra)
            roles.update(extra_roles)
        args.update(use_psum_layout=psum, ensure_zero_padding=rng.random() < 0.5)
        roles.update(use_psum_layout=Scalar(*NOT_A_BOOL), ensure_zero_padding=Scalar(*NOT_A_BOOL))
        if with_hint:
            args['expected_m_for_psum_layout'] = rng.choice((None, 64)) if psum else None
            roles['expected_m_for_psum_layout'] = Scalar(0, -1, 1.5, 'x', True) if psum else Scalar(64, 0, 'x')
        return Call(args, roles)
    return make


def masked_fp8(rng):
    groups, m_max, n, k = rng.choice((1, 4)), rng.choice((64, 128)), rng.choice((128, 256)), rng.choice((128, 384))
    args = dict(a=(t(groups, m_max, k, dtype='float8_e4m3fn'), token_sf(groups, m_max, cdiv(k, 128))),
                b=(t(groups, n, k, dtype='float8_e4m3fn'), t(groups, cdiv(n, 128), cdiv(k, 128), dtype='float32')),
                d=t(groups, m_max, n), masked_m=t(groups, dtype='int32'), expected_m=rng.choice((1, 32, 2**31 - 1)))
    roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                 d=out('bfloat16'), masked_m=data('int32'), expected_m=Scalar(*BAD_INTS, 0))
    recipe_args, recipe_roles = fp8_recipe_args(rng, False)
    recipe_roles['recipe'] = Scalar((1, 1, 128), *BAD_RECIPES)
    for extra, extra_roles in ((recipe_args, recipe_roles), fp8_common(rng)):
        args.update(extra)
        roles.update(extra_roles)
    return Call(args, roles)


def k_grouped_fp8(rng):
    # One non-empty group: the operands are viewed, not copied, so stand-ins reach the library.
    groups = rng.choice((1, 3))
    ks = [0] * groups
    ks[rng.randrange(groups)] = 128 * rng.choice((1, 2))
    m, n, sum_k = rng.choice((64, 128)), rng.choice((64, 256)), sum(ks)
    d = t(groups, m, n, dtype='float32')
    args = dict(a=(t(m * sum_k, dtype='float8_e4m3fn'), token_sf(m, sum_k // 128)),
                b=(t(n * sum_k, dtype='float8_e4m3fn'), token_sf(n, sum_k // 128)), d=d, ks_cpu=ks,
                grouped_layout=t(groups, dtype='int32'), c=rng.choice((None, d, t(groups, m, n, dtype='float32'))),
                recipe=(1, 1, 128), compiled_dims='mn', use_psum_layout=False)
    roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                 d=out('float32'), grouped_layout=data('int32'), c=data('float32', optional=True),
                 ks_cpu=bad_ks(ks, 128), recipe=Scalar((1, 128, 128), *BAD_RECIPES),
                 compiled_dims=Scalar(*NOT_DIMS), use_psum_layout=Scalar(True, *NOT_A_BOOL))
    return Call(args, roles)


BAD_EXPRS = (None, 1, 'abc', 'bhr,hdr->bhd ', 'bhr,hdr->hbd', ['bhr,hdr->bhd'])


def einsum_call(rng):
    expr = rng.choice(('bhr,hdr->bhd', 'bhd,hdr->bhr', 'bhd,bhr->hdr', 'bmk,bnk->mn'))
    if expr == 'bmk,bnk->mn':
        s, m, n, k = rng.choice((1, 3)), rng.choice((64, 128)), rng.choice((64, 192)), rng.choice((64, 128))
        accumulate = rng.random() < 0.5
        d = t(m, n, dtype='float32' if accumulate else 'bfloat16')
        args = dict(expr=expr, a=t(s, m, k), b=t(s, n, k), d=d, c=d if accumulate else None, use_cublaslt=False)
        roles = dict(c=Scalar(t(m, n, dtype='float32')), use_cublaslt=Scalar(True, *NOT_A_BOOL))
    else:
        sizes = dict(b=rng.choice((1, 64)), h=rng.choice((1, 4)), d=rng.choice((64, 128)), r=rng.choice((64, 512)))
        a_letters, b_letters, d_letters = re.split('[,>-]+', expr)
        accumulate = expr == 'bhd,bhr->hdr'
        if accumulate:  # MN-major operands: b contiguous, a b multiple of 16
            sizes['b'] = rng.choice((16, 64))
        d = t(*(sizes[x] for x in d_letters), dtype='float32' if accumulate else 'bfloat16')
        c = rng.choice((None, d, t(*d.shape, dtype='float32'))) if accumulate else None
        args = dict(expr=expr, a=t(*(sizes[x] for x in a_letters)), b=t(*(sizes[x] for x in b_letters)), d=d, c=c,
                    use_cublaslt=False)
        roles = dict(c=data('float32', optional=True) if accumulate else Scalar(t(*d.shape, dtype='bfloat16')),
                     use_cublaslt=Scalar(*NOT_A_BOOL))
    roles.update(expr=Scalar(*BAD_EXPRS), a=tma('bfloat16'), b=tma('bfloat16'),
                 d=out('float32' if accumulate else 'bfloat16'))
    return Call(args, roles)


def fp8_einsum_call(rng):
    expr = rng.choice(('bhr,hdr->bhd', 'bhd,hdr->bhr', 'bhd,bhr->hdr'))
    sizes = dict(b=rng.choice((1, 64)), h=rng.choice((1, 4)), d=rng.choice((128, 256)), r=rng.choice((128, 512)))
    one_d_one_d = expr == 'bhd,bhr->hdr' or rng.random() < 0.5
    if expr == 'bhd,bhr->hdr':
        sizes['b'] = rng.choice((16, 128))

    def operand(letters, k_letter, blocked):
        # Stored with the contracted letter last (K-major), then permuted back into the expression's order.
        order = [x for x in letters if x != k_letter] + [k_letter]
        x = t(*(sizes[letter] for letter in order), dtype='float8_e4m3fn')
        sf_sizes = [cdiv(sizes[letter], 128) if letter in blocked else sizes[letter] for letter in letters]
        perm = [order.index(letter) for letter in letters]
        x = x.like(tuple(x.shape[i] for i in perm), strides=tuple(x._strides[i] for i in perm))
        return x, t(*sf_sizes, dtype='float32')

    a_letters, b_letters, d_letters = re.split('[,>-]+', expr)
    k_letter = {'bhr,hdr->bhd': 'r', 'bhd,hdr->bhr': 'd', 'bhd,bhr->hdr': 'b'}[expr]
    n_letter = {'bhr,hdr->bhd': 'd', 'bhd,hdr->bhr': 'r', 'bhd,bhr->hdr': 'r'}[expr]
    d = t(*(sizes[x] for x in d_letters), dtype='float32' if one_d_one_d else 'bfloat16')
    args = dict(expr=expr, a=operand(a_letters, k_letter, (k_letter, )),
                b=operand(b_letters, k_letter, (k_letter, ) if one_d_one_d else (k_letter, n_letter)), d=d,
                c=rng.choice((None, d, t(*d.shape, dtype='float32'))) if one_d_one_d else None,
                recipe=(1, 1, 128) if one_d_one_d else rng.choice(((1, 128, 128), [1, 128, 128])))
    roles = dict(expr=Scalar(*BAD_EXPRS, 'bmk,bnk->mn'), a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                 b=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), d=out('float32' if one_d_one_d else 'bfloat16'),
                 c=data('float32', optional=True) if one_d_one_d else Scalar(t(*d.shape, dtype='float32')),
                 recipe=Scalar(*BAD_RECIPES, *(((1, 128, 128), ) if expr == 'bhd,bhr->hdr' else ())))
    return Call(args, roles)


# --- layout functions: CPU torch tensors when torch is there (they compute), stand-ins otherwise -------------------

def sf_tensor(shape, aligned=False):
    """float32 scales of ``shape``: a CPU torch tensor when torch is importable (the layout functions then run), else
    a stand-in; ``aligned``: a stand-in already in the kernel layout (returned as it is, without torch)."""
    if aligned or not HAVE_TORCH:
        return token_sf(*shape) if aligned else T(shape, 'float32')
    import torch
    return torch.rand(shape) * 4 + 0.25


def int32_tensor(values):
    if not HAVE_TORCH:
        return t(len(values), dtype='int32')
    import torch
    return torch.tensor(values, dtype=torch.int32)


LAYOUT_SF = dict(dtypes=('float32', ), fixed_shape=False, free_strides=True, cuda=False, ndims=(2, 3))


def tma_aligned_size_call(rng):
    return Call(dict(x=rng.choice((0, 5, 2**40, 2**63)), element_size=rng.choice((1, 2, 4, 8, 16))),
                dict(x=Scalar(None, 1.5, '4', -1, True), element_size=Scalar(None, 3, 0, -4, 32, 2**63, 4.0, True)))


def mn_major_call(rng):
    shape = rng.choice(((64, 3), (5, 1), (2, 61, 3)))
    aligned = not HAVE_TORCH or rng.random() < 0.3
    return Call(dict(sf=sf_tensor(shape, aligned=aligned)), dict(sf=Tensor(**LAYOUT_SF)))


def packed_call(rng):
    shape = rng.choice(((64, 5), (5, 8), (2, 61, 3)))
    psum = None
    if len(shape) == 2 and rng.random() < 0.4:
        psum = int32_tensor([shape[0] // 2, shape[0]])
    return Call(dict(sf=sf_tensor(shape), psum_layout=psum),
                dict(sf=Tensor(**LAYOUT_SF), psum_layout=Tensor(('int32', ), fixed_shape=False, cuda=False,
                                                                optional=True)),
                needs_torch=True)


def k_grouped_packed_call(rng):
    gran_k = rng.choice((32, 128))
    ks = [gran_k * rng.choice((0, 1, 4, 5)) for _ in range(rng.choice((1, 3)))]
    mn = rng.choice((4, 64))
    sf_k = sum(cdiv(k, gran_k) for k in ks)
    args = dict(sf=sf_tensor((sf_k, mn)), grouped_layout=int32_tensor(ks), ks_cpu=ks, gran_k=gran_k,
                k_alignment=rng.choice((0, 128)), use_psum_layout=False)
    # sf [sf_k, mn]: any mn that is a multiple of 4 is valid, 0 included; grouped_layout: its numel is the group
    # count, whatever its shape (as in DeepGEMM).
    roles = dict(sf=Tensor(('float32', ), fixed_shape=False, cuda=False),
                 grouped_layout=Tensor(('int32', ), cuda=False, ndims=range(5)),
                 ks_cpu=Scalar(None, 'abc', 128, [1.5] * len(ks), [True] * len(ks), [-gran_k] + ks[1:],
                               loose=(ks + [gran_k], [k + gran_k for k in ks])),
                 gran_k=Scalar(None, 64, 1.5, True, 2**63), k_alignment=Scalar(None, 16, -32, 1.5, 2**40, True),
                 use_psum_layout=Scalar(*NOT_A_BOOL))
    return Call(args, roles, needs_torch=True)


def transform_call(rng):
    mn, k = rng.choice((64, 130)), rng.choice((128, 384))
    groups = rng.choice((None, 2))
    recipe, is_sfa = rng.choice((((1, 128, 128), True), ((1, 128, 128), False), ((1, 1, 128), False), ((1, 128), None),
                                 ((128, 128), None)))
    gran_mn = recipe[0] if is_sfa in (True, None) else recipe[1]
    shape = ((groups, ) if groups else ()) + (cdiv(mn, gran_mn), cdiv(k, 128))
    per_token = gran_mn == 1
    aligned = per_token and (not HAVE_TORCH or rng.random() < 0.3)
    args = dict(sf=sf_tensor(shape, aligned=aligned), mn=mn, k=k, recipe=recipe, num_groups=groups, is_sfa=is_sfa,
                disable_ue8m0_cast=rng.random() < 0.5, psum_layout=None)
    # A size or group count that no longer matches sf's shape is blamed on sf.
    roles = dict(sf=Tensor(('float32', ), free_strides=per_token, cuda=False),
                 mn=Scalar(None, -1, 1.5, True, loose=(mn + 128, )), k=Scalar(None, -1, 1.5, True, loose=(k + 128, )),
                 recipe=Scalar((3, 3, 3), 'abc', 1, (1, 128, 128, 1), (True, 128, 128), (1.0, 128, 128),
                               loose=((1, 128), (1, 128, 32))),
                 num_groups=Scalar(0, -1, 1.5, True, 'x', loose=(3, )),
                 is_sfa=Scalar(None, 1, 'x') if len(recipe) == 3 else Scalar(True, False, 1),
                 disable_ue8m0_cast=Scalar(*NOT_A_BOOL), psum_layout=Scalar(3, 'x'))
    return Call(args, roles)


def int8_call(rng):
    m, n, k = rng.choice((2, 64, 192)), rng.choice((64, 256)), rng.choice((64, 384))
    args = dict(a=t(m, k, dtype='int8'), b=t(n, k, dtype='int8'), scale_a=t(m, dtype='float32'),
                scale_b=t(n, dtype='float32'), out=t(m, n))
    roles = dict(a=tma('int8'), b=tma('int8'), scale_a=data('float32'), scale_b=data('float32'),
                 out=out('bfloat16', optional=True))
    return Call(args, roles)


def fp8_fp4_sm90_call(rng):
    m, n, k = rng.choice((2, 64, 192)), rng.choice((64, 256)), rng.choice((128, 512))
    args = dict(a=(t(m, k, dtype='float8_e4m3fn'), t(m, k // 128, dtype='float32')),
                b=(t(n, k // 2, dtype='int8'), t(n, k // 32, dtype='float32')), d=t(m, n))
    # D is written with plain stores (no TMA rules).
    roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('int8'), tma('float32')),
                 d=Tensor(('bfloat16', 'float32'), output=True))
    return Call(args, roles)


def masked_fp8_fp4_sm90_call(rng):
    groups, m_max, n, k = rng.choice((1, 4)), rng.choice((64, 128)), rng.choice((64, 256)), rng.choice((128, 512))
    args = dict(a=(t(groups, m_max, k, dtype='float8_e4m3fn'), t(groups, m_max, k // 128, dtype='float32')),
                b=(t(groups, n, k // 2, dtype='int8'), t(groups, n, k // 32, dtype='float32')),
                d=t(groups, m_max, n), masked_m=t(groups, dtype='int32'), expected_m=rng.choice((1, 32, m_max)))
    roles = dict(a=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), b=Pair(tma('int8'), tma('float32')),
                 d=Tensor(('bfloat16', 'float32'), output=True), masked_m=data('int32'),
                 expected_m=Scalar(*BAD_INTS, 0, m_max + 1))
    return Call(args, roles)


def mxfp8_sm90_call(rng):
    m, n, k = rng.choice((2, 64, 192)), rng.choice((64, 256)), rng.choice((128, 512))
    args = dict(a=(t(m, k, dtype='float8_e4m3fn'), t(m, k // 32, dtype='float32')),
                b=(t(n, k, dtype='float8_e4m3fn'), t(n, k // 32, dtype='float32')), d=t(m, n))
    roles = dict(a=Pair(tma('float8_e4m3fn'), tma('float32')), b=Pair(tma('float8_e4m3fn'), tma('float32')),
                 d=Tensor(('bfloat16', 'float32'), output=True))
    return Call(args, roles)


def moe_call(rng):
    """deep_gemm.moe.fp8_moe with an explicit out and a Workspace over stand-ins (None would allocate on the GPU)."""
    from deep_gemm import moe
    tokens, topk, experts, hidden, inter = rng.choice((1, 24)), rng.choice((1, 4)), rng.choice((4, 8)), 256, 128
    rows = deep_gemm._C.moe_buffer_rows(tokens, topk, experts)
    ws = moe.Workspace.__new__(moe.Workspace)
    ws.max_tokens, ws.topk, ws.experts, ws.hidden, ws.intermediate, ws.rows = tokens, topk, experts, hidden, inter, rows
    ws.group_end, ws.row_of_buffer = t(experts, dtype='int32'), t(tokens * topk, dtype='int32')
    ws.a1, ws.a2 = t(rows, hidden, dtype='float8_e4m3fn'), t(rows, inter, dtype='float8_e4m3fn')
    ws.sfa1, ws.sfa2 = t(hidden // 128, rows, dtype='float32').T, t(inter // 128, rows, dtype='float32').T
    ws.h1, ws.y2 = t(rows, 2 * inter), t(rows, hidden)
    args = dict(x=t(tokens, hidden), topk_idx=t(tokens, topk, dtype=rng.choice(('int32', 'int64'))),
                topk_weights=t(tokens, topk, dtype='float32'),
                w1=(t(experts, 2 * inter, hidden, dtype='float8_e4m3fn'),
                    t(experts, 2 * inter // 128, hidden // 128, dtype='float32')),
                w2=(t(experts, hidden, inter, dtype='float8_e4m3fn'),
                    t(experts, hidden // 128, inter // 128, dtype='float32')),
                use_ue8m0=rng.random() < 0.5, out=t(tokens, hidden), workspace=ws)
    roles = dict(x=tma('bfloat16'), topk_idx=data('int32', 'int64'), topk_weights=data('float32'),
                 w1=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)), w2=Pair(tma('float8_e4m3fn'), Tensor(**SCALES)),
                 use_ue8m0=Scalar(*NOT_A_BOOL), out=out('bfloat16', optional=True),
                 workspace=Scalar('x', 3, object()))
    return Call(args, roles)


def own_families():
    """'module:function' -> factory of valid calls, for tilegemm's own GPU calls outside deep_gemm's top level (int8
    only where torch is, which deep_gemm.int8 imports)."""
    table = {'deep_gemm._fp8_fp4_sm90:fp8_fp4_gemm_nt': fp8_fp4_sm90_call,
             'deep_gemm._fp8_fp4_sm90:m_grouped_fp8_fp4_gemm_nt_masked': masked_fp8_fp4_sm90_call,
             'deep_gemm._fp8_fp4_sm90:mxfp8_gemm_nt': mxfp8_sm90_call}
    if HAVE_TORCH:
        table['deep_gemm.int8:gemm_nt'] = int8_call
        table['deep_gemm.moe:fp8_moe'] = moe_call
    return table


def resolve(name):
    """The function a families() or own_families() name stands for."""
    if ':' not in name:
        return getattr(deep_gemm, name)
    module, function = name.split(':')
    return getattr(importlib.import_module(module), function)


def families():
    """function name -> factory of valid calls (deep_gemm's exported GEMM, einsum and layout functions)."""
    table = {}
    for layout in ('nt', 'nn', 'tn', 'tt'):
        table[f'bf16_gemm_{layout}'] = dense_bf16(layout, False)
        table[f'cublaslt_gemm_{layout}'] = dense_bf16(layout, True)
        transposes = {'nt': (False, False), 'nn': (False, True), 'tn': (True, True), 'tt': (True, False)}[layout]
        table[f'fp8_gemm_{layout}'] = table[f'fp8_fp4_gemm_{layout}'] = dense_fp8(*transposes)
    for layout in ('nt', 'nn'):
        table[f'm_grouped_bf16_gemm_{layout}_contiguous'] = m_grouped_bf16(layout, layout == 'nt')
        table[f'm_grouped_fp8_gemm_{layout}_contiguous'] = m_grouped_fp8(layout, layout == 'nt')
        table[f'm_grouped_fp8_fp4_gemm_{layout}_contiguous'] = m_grouped_fp8(layout, layout == 'nt')
    table['m_grouped_bf16_gemm_nt_masked'] = table['bf16_m_grouped_gemm_nt_masked'] = masked_bf16
    table['m_grouped_fp8_gemm_nt_masked'] = table['fp8_m_grouped_gemm_nt_masked'] = masked_fp8
    table['m_grouped_fp8_fp4_gemm_nt_masked'] = masked_fp8
    table['k_grouped_bf16_gemm_tn_contiguous'] = k_grouped_bf16
    table['k_grouped_fp8_gemm_nt_contiguous'] = k_grouped_fp8
    table['fp8_gemm_nt_skip_head_mid'] = skip_head_mid_call
    table['einsum'] = einsum_call
    table['fp8_einsum'] = fp8_einsum_call
    table['get_tma_aligned_size'] = tma_aligned_size_call
    table['get_mn_major_tma_aligned_tensor'] = mn_major_call
    table['get_mn_major_tma_aligned_packed_ue8m0_tensor'] = packed_call
    table['get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor'] = k_grouped_packed_call
    table['transform_sf_into_required_layout'] = transform_call
    return table


def exported_functions():
    return sorted(name for name, value in vars(deep_gemm).items()
                  if not name.startswith('_') and inspect.isfunction(value) and value.__module__ in MODULES)


# --- breaking one argument -----------------------------------------------------------------------------------------

class Break:
    """One broken value: ``exact``, the error must name this very argument."""

    def __init__(self, label, value, exact=False):
        self.label, self.value, self.exact = label, value, exact


def torch_twin(x):
    """A CPU torch tensor with x's shape, strides and dtype (None when there is no such small tensor)."""
    import torch
    dtype = getattr(torch, x.dtype.name, None)
    if dtype is None or sum((n - 1) * s for n, s in zip(x.shape, x._strides)) > 2**16:
        return None
    return torch.empty_strided(x.shape, x._strides, dtype=dtype)


ELEMENT_BYTES = {'bfloat16': 2, 'float16': 2, 'float32': 4, 'int32': 4}


def with_stride(x, i, value):
    return x.like(strides=x._strides[:i] + (value, ) + x._strides[i + 1:])


def tensor_breaks(x, role, rng):
    """The broken values of tensor ``x`` (a stand-in or a CPU torch tensor) in ``role``."""
    breaks = [Break(f'not a tensor: {v!r}', v, exact=True) for v in NOT_A_TENSOR if v is not None or not role.optional]
    if x is None:  # an optional tensor not given
        return breaks
    if isinstance(x, T):
        base = x
    elif HAVE_TORCH:  # a CPU torch tensor of a layout function: its stand-in twin
        base = T(tuple(x.shape), str(x.dtype).replace('torch.', ''), tuple(x.stride()), device='cpu')
    else:
        return breaks
    breaks += [Break(f'dtype {d}', base.like(dtype=d)) for d in DTYPES if d not in role.dtypes]
    shape, strides = base.shape, base._strides
    for new_shape, new_strides in ((shape + (2, ), strides + (1, )), (shape[:-1], strides[:-1]), ((), ())):
        if len(new_shape) not in (role.ndims or (len(shape), )):
            breaks.append(Break(f'{len(new_shape)}-D', base.like(new_shape, strides=new_strides)))
    for i, size in enumerate(shape):
        fixed = role.fixed_shape and i not in role.free_dims
        for v in (-1, 2**63) + ((2 * size + 1, 2**31) + ((0, ) if size else ()) if fixed else ()):
            breaks.append(Break(f'size {i} = {v}', base.like(shape[:i] + (v, ) + shape[i + 1:])))
    if shape:
        breaks.append(Break('a stride too few', base.like(strides=strides[:-1])))
        i = rng.randrange(len(shape))
        if shape[i] > 1:
            # 2^62 fits int64 but the memory it spans does not; torch has no negative strides.
            breaks += [Break(f'stride[{i}] = {v}', with_stride(base, i, v))
                       for v in (2**63, -2**63 - 1, 2**62, -strides[i] or -1)]
            if role.output:  # elements written twice
                breaks.append(Break(f'stride[{i}] = 0', with_stride(base, i, 0)))
        if not role.free_strides and all(s > 1 for s in shape[-2:]):  # a [1, K] row may take any stride
            breaks.append(Break('no unit stride', base.like(strides=tuple(2 * s + 2 for s in strides))))
    breaks += [Break(f'data_ptr() {v!r}', Odd(base, v)) for v in (-16, 2**64, None, 16.0)]
    breaks += [Break(f'{attribute} = {v!r}', odd_attribute(base, attribute, v))
               for attribute, v in (('shape', None), ('shape', (2.0, )), ('stride', base._strides), ('data_ptr', 16))]
    element = ELEMENT_BYTES.get(base.dtype.name, 1)
    if all(shape):
        breaks += [Break('a null pointer', base.like(ptr=0)),
                   Break('a pointer off its elements', base.like(ptr=base._ptr + 1)) if element > 1 else None]
    if role.tma and all(shape):
        breaks.append(Break('a pointer off 16 bytes', base.like(ptr=base._ptr + element)))
        unit = [i for i in (-1, -2) if len(shape) >= -i and strides[i] == 1]
        if len(shape) >= 2 and all(s > 1 for s in shape[-2:]) and unit:
            other = -3 - unit[0]  # the row stride: -2 for a K-major view, -1 for an MN-major one
            breaks.append(Break('rows not 16 bytes apart', with_stride(base, other, strides[other] + 1)))
    if role.cuda:
        breaks += [Break('on the CPU', base.like(device='cpu', index=None)), Break('on cuda:1', base.like(index=1)),
                   Break('on cuda:-1', base.like(index=-1)), Break('on cuda:2^31', base.like(index=2**31))]
        twin = torch_twin(base) if HAVE_TORCH else None
        if twin is not None:
            breaks.append(Break('a CPU torch tensor', twin))
    return [b for b in breaks if b is not None]


def breaks_of(call, name, rng):
    """Every (path of the broken value, Break, the call's arguments with it) of argument ``name``."""
    out = []

    def add(name, brk, value, path=None):
        args = dict(call.args)
        args[name] = value
        out.append((path or name, brk, args))

    role, value = call.roles[name], call.args[name]
    if isinstance(role, Scalar):
        for bad in role.bad:
            add(name, Break(repr(bad), bad, exact=True), bad)
        for bad in role.loose:
            if type(bad) is not type(value) or bad != value:  # e.g. the recipe this call has
                add(name, Break(repr(bad), bad), bad)
    elif isinstance(role, Tensor):
        for brk in tensor_breaks(value, role, rng):
            add(name, brk, brk.value)
    else:  # a Pair
        x, sf = value
        for bad in (None, x, (x, ), (x, sf, sf), 'ab'):
            add(name, Break(f'not a pair: {bad!r}', bad, exact=True), bad)
        for brk in tensor_breaks(x, role.data, rng):
            add(name, Break('data ' + brk.label, brk.value, brk.exact), (brk.value, sf))
        for brk in tensor_breaks(sf, role.sf, rng):
            add(name, Break('sf ' + brk.label, brk.value, brk.exact), (x, brk.value), path=f'{name}[1]')
    return out


# --- running cases -------------------------------------------------------------------------------------------------

class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


MESSAGE = re.compile(r'^([A-Za-z_]\w*)((?:\[\d+\])*): ')


def outcome(fn, args):
    """('ok', result) | ('raised', exception), and the seconds it took."""
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, 2 * CASE_SECONDS)
    try:
        result = ('ok', fn(**args))
    except Hang:
        result = ('hang', None)
    except Exception as e:  # noqa: BLE001 - classified by the caller
        result = ('raised', e)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return result, time.perf_counter() - start


def check_valid(fn, args):
    """None, or what is wrong with how a valid call ended."""
    (kind, value), seconds = outcome(fn, args)
    if seconds > CASE_SECONDS or kind == 'hang':
        return f'took {seconds:.2f} s'
    if kind == 'raised' and type(value) is not RuntimeError:
        return f'a valid call raised {type(value).__name__}: {value}'
    return None


def check_broken(fn, args, path, exact):
    """None, or what is wrong with how a call with argument ``path`` broken ended."""
    (kind, value), seconds = outcome(fn, args)
    if seconds > CASE_SECONDS or kind == 'hang':
        return f'took {seconds:.2f} s'
    if kind == 'ok':
        return f'returned {value!r}: a silent success'
    if type(value) is RuntimeError:
        return f'passed every check (RuntimeError: {value})'
    if type(value) not in (TypeError, ValueError):
        return f'raised {type(value).__name__}: {value}'
    message = str(value)
    named = MESSAGE.match(message)
    if named is None or named.group(1) not in inspect.signature(fn).parameters:
        return f'raised {type(value).__name__} without an argument name: {message}'
    full = named.group(1) + named.group(2)
    if exact and full != path and not full.startswith(path + '['):  # ks_cpu[0] for ks_cpu
        return f'named {full} for a broken {path}: {message}'
    return None


def describe_value(v):
    if type(v).__module__.startswith('torch'):
        return f'torch.empty_strided({tuple(v.shape)}, {v.stride()}, dtype={v.dtype})'
    if isinstance(v, tuple):
        return '(' + ', '.join(map(describe_value, v)) + (',)' if len(v) == 1 else ')')
    return repr(v)


def describe(args):
    return ', '.join(f'{k}={describe_value(v)}' for k, v in args.items())


def run(seed, cases, out=sys.stdout):
    """Runs ``cases`` cases; returns the failures, each a line with the seed and the call."""
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(seed)
    makers = {**families(), **own_families()}
    names = exported_functions() + sorted(own_families())
    failures = []
    for i in range(cases):
        name = rng.choice(names)
        fn = resolve(name)
        call = makers[name](rng)
        # One argument, then one of its breaks (building every argument's breaks would take most of the time).
        arguments = list(call.roles)
        rng.shuffle(arguments)
        breaks = []
        while arguments and not breaks:
            breaks = breaks_of(call, arguments.pop(), rng)
        if not breaks:
            continue
        runnable = HAVE_TORCH or not call.needs_torch
        if runnable and rng.random() < 0.5:  # the valid call first: its plan is kept, a broken pointer then meets it
            print(f'case {i} (seed {seed}): valid {name}({describe(call.args)})', file=out, flush=True)
            problem = check_valid(fn, call.args)
            if problem:
                failures.append(f'seed {seed} case {i}: {name}({describe(call.args)}) {problem}')
                continue
        path, brk, args = rng.choice(breaks)
        print(f'case {i} (seed {seed}): {name} with {path} {brk.label}', file=out, flush=True)
        problem = check_broken(fn, args, path, brk.exact)
        if problem:
            failures.append(f'seed {seed} case {i}: {name} with {path} {brk.label}: {name}({describe(args)}) {problem}')
    return failures


def test_every_exported_function_is_fuzzed():
    assert sorted(families()) == exported_functions()


def run_child(cases):
    """Runs the cases in a child process: (failures, the last line it printed). A crash or a hang fails with the case
    it was running."""
    command = [sys.executable, __file__, str(SEED), str(cases)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # this deep_gemm, this conftest
    try:
        child = subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors='replace') if isinstance(e.stdout, bytes) else e.stdout or ''
        return [f'the run (seed {SEED}) took over {RUN_SECONDS} s, in {out.splitlines()[-1:]}'], ''
    lines = child.stdout.splitlines()
    failures = [line for line in lines if line.startswith('FAIL ')]
    if child.returncode and not failures:  # killed by a signal, or an error between cases
        failures = [f'exit status {child.returncode} (seed {SEED}) in {lines[-1:]}: {child.stderr[-3000:]}']
    return failures, lines[-1] if lines else ''


no_gpu_only = pytest.mark.skipif(gpu_available(), reason='valid stand-in tensors must not reach a real GPU')


@no_gpu_only
def test_fuzzed_calls():
    start = time.perf_counter()
    failures, summary = run_child(CASES)
    print(f'{summary} in {time.perf_counter() - start:.1f} s')
    assert not failures, '\n'.join(failures)


def main():
    seed, cases = int(sys.argv[1]), int(sys.argv[2])
    failures = run(seed, cases)
    for line in failures:
        print('FAIL ' + line, flush=True)
    print(f'{cases} cases, {len(failures)} failures (seed {seed})', flush=True)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
