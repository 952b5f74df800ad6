"""The SM90 FP8 GEMMs with DeepGEMM's names, argument order and defaults.

Operands come as ``(tensor, sf)`` pairs: float8_e4m3fn data and float32 scaling factors with one scale per
128 elements along K. Recipes (gran_m_a, gran_n_b, gran_k) select the kernel, as DeepGEMM does on SM90:
- (1, 128, 128), the default: "1D2D". A per-token scales [M, ceil(K/128)], B per-block scales
  [ceil(N/128), ceil(K/128)]; d is bfloat16 and there is no ``c`` (inference forward).
- (1, 1, 128): "1D1D". Both per-token; d is float32 and ``c`` (float32, may be ``d``) is optional
  (weight gradients). ``recipe_a=(1, 128), recipe_b=(1 or 128, 128)`` say the same per operand.
Scales go to the kernels untouched, in whatever strides they have (row-major as ``per_token_cast_to_fp8``
returns them, MN-major as ``get_mn_major_tma_aligned_tensor`` makes them; the kernels copy them element by
element): no layout pass, no copy. SM90 keeps fp32 scales: ``disable_ue8m0_cast`` is checked, not used.

Every operand must be K-major (stride 1 along K): SM90's wgmma reads FP8 only that way. ``fp8_gemm_nn/tn/tt``
and ``m_grouped_fp8_gemm_nn_contiguous`` exist for DeepGEMM's names: as there, they transpose their
arguments' views (``nn`` takes b as [K, N]) and then need K-major storage, i.e. a [K, N] b that is the
transposed view of an [N, K] tensor; anything else raises ValueError naming the operand.

A call whose signature (see _plans.py) was seen runs the plan the first such call made: one lookup, the data
pointers and the stream into C++, no check. Otherwise the checks run (Python's here, then C++'s in the plan_*
function) and the plan is kept.
"""
from . import _C, _torch_ops
from ._checks import (INT32_MAX, is_contiguous, require_bool, require_compiled_dims, require_dims, require_dtype,
                      require_int, require_int_sizes, require_k_major, require_no_overlap, require_psum_hint,
                      require_row_major, require_shape, require_tensor, shape_of)
from ._config import num_sms_setting
from ._plans import kept_key, run_checked, run_kept, typed, typed_sequence
from ._sf_layout import check_sf_shape
from ._tensor import common_device, current_stream, flat_view, view

RECIPE_1D2D = (1, 128, 128)
RECIPE_1D1D = (1, 1, 128)


def _pair(x, name):
    """(data, sf) of an operand; TypeError/ValueError naming ``name`` (``name[1]`` for the scales)."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TypeError(f'{name}: expected a (float8_e4m3fn tensor, float32 scale factors) pair, '
                        f'got {type(x).__name__}')
    data, sf = require_tensor(x[0], name), require_tensor(x[1], f'{name}[1]')
    require_dtype(data, name, 'float8_e4m3fn')
    return data, sf


def _transposed(t):
    return t.transpose(-2, -1)


def _int_tuple(value, length):
    return isinstance(value, (tuple, list)) and len(value) == length and \
        all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _resolve_recipe(recipe, recipe_a, recipe_b):
    """gran_n_b (1: 1D1D, 128: 1D2D) of the recipe arguments; ValueError naming the one that is wrong."""
    if (recipe_a is None) != (recipe_b is None):
        missing = 'recipe_b' if recipe_b is None else 'recipe_a'
        raise ValueError(f'{missing}: expected a (gran_mn, gran_k) tuple: recipe_a and recipe_b go together, '
                         f'got {recipe_b if recipe_b is None else recipe_a!r}')
    if recipe_a is not None:
        if recipe is not None:
            raise ValueError(f'recipe: expected None when recipe_a and recipe_b are given, got {recipe!r}')
        for value, name in ((recipe_a, 'recipe_a'), (recipe_b, 'recipe_b')):
            if not _int_tuple(value, 2):
                raise ValueError(f'{name}: expected a tuple of 2 ints (gran_mn, gran_k), got {value!r}')
        if tuple(recipe_a) != (1, 128):
            raise ValueError(f'recipe_a: expected (1, 128) (per-token A scales on SM90), got {tuple(recipe_a)!r}')
        if tuple(recipe_b) not in ((1, 128), (128, 128)):
            raise ValueError(f'recipe_b: expected (128, 128) (1D2D) or (1, 128) (1D1D) on SM90, '
                             f'got {tuple(recipe_b)!r}')
        return recipe_b[0]
    if recipe is None:
        return RECIPE_1D2D[1]
    if not _int_tuple(recipe, 3) or tuple(recipe) not in (RECIPE_1D2D, RECIPE_1D1D):
        raise ValueError(f'recipe: expected {RECIPE_1D2D} (1D2D, bf16 d) or {RECIPE_1D1D} (1D1D, fp32 d) on '
                         f'SM90, got {recipe!r}')
    return recipe[1]


def _grouped_recipe(recipe, recipe_a, recipe_b, what):
    if _resolve_recipe(recipe, recipe_a, recipe_b) != 128:
        name = 'recipe' if recipe is not None else 'recipe_b'
        raise ValueError(f'{name}: expected the 1D2D recipe {RECIPE_1D2D}: SM90 {what} FP8 GEMMs take '
                         f'per-block B scales and write bf16, got {recipe if recipe is not None else recipe_b!r}')


def _write_c_or_zero(d, c):
    if c is None:
        d.zero_()
    elif c is not d:
        d.copy_(c)


def _common(compiled_dims, disable_ue8m0_cast):
    require_compiled_dims(compiled_dims)
    require_bool(disable_ue8m0_cast, 'disable_ue8m0_cast')


_NO_RECIPES = (None, None, None)


def _recipes(recipe, recipe_a, recipe_b):
    """The recipe arguments for a signature (None, the default, costs nothing)."""
    if recipe is None and recipe_a is None and recipe_b is None:
        return _NO_RECIPES
    return (None if recipe is None else typed_sequence(recipe), None if recipe_a is None else typed_sequence(recipe_a),
            None if recipe_b is None else typed_sequence(recipe_b))


def _views(*tensors):
    """The (ptr, dtype, shape, strides) views of (tensor, name) pairs, and their pointers."""
    views = [view(t, name) for t, name in tensors]
    return views, [v[0] for v in views]


def _fp8_gemm(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, transpose_a,
              transpose_b):
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('fp8_gemm', transpose_a, transpose_b, compiled_dims, id(disable_ue8m0_cast),
                  _recipes(recipe, recipe_a, recipe_b))
    except (TypeError, ValueError):  # not (tensor, sf) pairs, a recipe that is no sequence: the checks name it
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, c):
        return
    _common(compiled_dims, disable_ue8m0_cast)
    a_data, a_sf = _pair(a, 'a')
    b_data, b_sf = _pair(b, 'b')
    gran_n_b = _resolve_recipe(recipe, recipe_a, recipe_b)
    one_d_one_d = gran_n_b == 1
    require_dims(a_data, 'a', 2, '([M, K], or [K, M] for tn/tt)')
    require_dims(b_data, 'b', 2, '([N, K], or [K, N] for nn/tn)')
    require_dims(a_sf, 'a[1]', 2, 'of scale factors')
    require_dims(b_sf, 'b[1]', 2, 'of scale factors')
    if transpose_a:
        a_data, a_sf = _transposed(a_data), _transposed(a_sf)
    if transpose_b:
        b_data, b_sf = _transposed(b_data), _transposed(b_sf)
    (m, k), (n, k_b) = shape_of(a_data), shape_of(b_data)
    if k_b != k:
        raise ValueError(f'b: expected K = {k} like a, got shape {tuple(shape_of(b[0]))}')
    require_k_major(a_data, 'a')
    require_k_major(b_data, 'b')
    require_tensor(d, 'd')
    require_dims(d, 'd', 2, '[M, N]')
    require_shape(d, 'd', (m, n), ' ([M, N])')
    require_dtype(d, 'd', 'float32' if one_d_one_d else 'bfloat16')
    require_row_major(d, 'd')
    require_no_overlap(d, 'd')
    if c is not None:
        if not one_d_one_d:
            raise ValueError(f'c: expected None with the 1D2D recipe {RECIPE_1D2D} (it has no accumulation '
                             f'input; use recipe={RECIPE_1D1D} with a float32 d to accumulate), got a tensor')
        require_tensor(c, 'c')
        require_shape(c, 'c', (m, n), ' (like d)')
        require_dtype(c, 'c', 'float32')
        require_row_major(c, 'c')
    check_sf_shape(a_sf, 'a[1]', m, k, 1, 128, None)
    check_sf_shape(b_sf, 'b[1]', n, k, gran_n_b, 128, None)
    device, num_sms = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d, c=c), num_sms_setting()
    # Empty M or N: nothing to do; K = 0 writes c (or zeros) into d, as DeepGEMM (the plan does both).
    views, pointers = _views((a_data, 'a'), (a_sf, 'a[1]'), (b_data, 'b'), (b_sf, 'b[1]'), (d, 'd'))
    c_view = None if c is None else view(c, 'c')
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, c),
                lambda: _C.plan_fp8_gemm(*views, c_view, one_d_one_d, device, num_sms),
                current_stream(device), num_sms, pointers + [0 if c is None else c_view[0]])


def fp8_gemm_nt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='nk',
                disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_gemm_nt',
                                 a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _fp8_gemm(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, False, False)


def fp8_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='nk',
                disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_gemm_nn',
                                 a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _fp8_gemm(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, False, True)


def fp8_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='mn',
                disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_gemm_tn',
                                 a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _fp8_gemm(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, True, True)


def fp8_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims='mn',
                disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_gemm_tt',
                                 a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _fp8_gemm(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, True, False)


def _head_splits(head_splits):
    """(left, mid, right) of DeepGEMM's ``head_splits``; TypeError/ValueError naming it."""
    if not isinstance(head_splits, (tuple, list)):
        raise TypeError(f'head_splits: expected a (left, mid, right) tuple of ints, got '
                        f'{type(head_splits).__name__} {head_splits!r}')
    if len(head_splits) != 3:
        raise ValueError(f'head_splits: expected 3 ints (left, mid, right), got {len(head_splits)}: {head_splits!r}')
    if any(isinstance(v, bool) or not isinstance(v, int) for v in head_splits):
        raise TypeError(f'head_splits: expected ints (left, mid, right), got {head_splits!r}')
    left, mid, right = head_splits
    if not all(0 <= v <= INT32_MAX for v in head_splits) or left + right == 0:
        raise ValueError(f'head_splits: expected (left, mid, right) in [0, 2^31) with left + right > 0, got '
                         f'{tuple(head_splits)!r}')
    return left, mid, right


# DeepGEMM's SM90 path: the 1D2D GEMM with D's columns remapped per head (d bf16; the 1D1D recipe is not offered there
# either). Plans are kept under a prefix of their own, so a plain fp8_gemm_nt call never finds one, nor the reverse.
def fp8_gemm_nt_skip_head_mid(a, b, d, head_splits, recipe=None, compiled_dims='nk', disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('fp8_gemm_nt_skip_head_mid', a, b, d, head_splits, recipe, compiled_dims,
                                 disable_ue8m0_cast)
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('fp8_gemm_nt_skip_head_mid', typed_sequence(head_splits), compiled_dims, id(disable_ue8m0_cast),
                  _recipes(recipe, None, None))
    except (TypeError, ValueError):  # not (tensor, sf) pairs, head_splits or a recipe that is no sequence: checked below
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, None):  # the plan's c slot: none
        return
    _common(compiled_dims, disable_ue8m0_cast)
    left, mid, right = _head_splits(head_splits)
    a_data, a_sf = _pair(a, 'a')
    b_data, b_sf = _pair(b, 'b')
    if _resolve_recipe(recipe, None, None) != RECIPE_1D2D[1]:
        raise ValueError(f'recipe: expected None or {RECIPE_1D2D} (SM90 runs this GEMM with the 1D2D recipe, bf16 d), '
                         f'got {recipe!r}')
    require_dims(a_data, 'a', 2, '[M, K]')
    require_dims(b_data, 'b', 2, '[N, K]')
    require_dims(a_sf, 'a[1]', 2, 'of scale factors')
    require_dims(b_sf, 'b[1]', 2, 'of scale factors')
    (m, k), (n, k_b) = shape_of(a_data), shape_of(b_data)
    if k_b != k:
        raise ValueError(f'b: expected K = {k} like a, got shape {tuple(shape_of(b_data))}')
    require_k_major(a_data, 'a')
    require_k_major(b_data, 'b')
    if k == 0:  # as DeepGEMM; zeroing d for K = 0 would also overwrite the mid columns
        raise ValueError(f'a: expected K > 0 for fp8_gemm_nt_skip_head_mid, got shape {(m, k)}')
    if n % (left + right):
        raise ValueError(f'head_splits: expected left + right = {left + right} to divide N = {n} (b\'s rows), got '
                         f'{(left, mid, right)}')
    require_tensor(d, 'd')
    require_dims(d, 'd', 2, "[M, N']")
    require_shape(d, 'd', (m, n + n // (left + right) * mid),
                  f' ([M, N + N / (left + right) * mid] for head_splits {(left, mid, right)})')
    require_dtype(d, 'd', 'bfloat16')
    require_row_major(d, 'd')
    require_no_overlap(d, 'd')
    check_sf_shape(a_sf, 'a[1]', m, k, 1, 128, None)
    check_sf_shape(b_sf, 'b[1]', n, k, 128, 128, None)
    device, num_sms = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d), num_sms_setting()
    views, pointers = _views((a_data, 'a'), (a_sf, 'a[1]'), (b_data, 'b'), (b_sf, 'b[1]'), (d, 'd'))
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, None),
                lambda: _C.plan_fp8_gemm_skip_head_mid(*views, (left, mid, right), device, num_sms),
                current_stream(device), num_sms, pointers + [0])


def _grouped_b(b, transpose_b):
    """(data, sf) of a grouped B ([G, N, K] after the optional transpose), checked K-major."""
    b_data, b_sf = _pair(b, 'b')
    require_dims(b_data, 'b', 3, '[G, N, K]' if not transpose_b else '[G, K, N]')
    require_dims(b_sf, 'b[1]', 3, 'of per-block scale factors')
    if transpose_b:
        b_data, b_sf = _transposed(b_data), _transposed(b_sf)
    require_k_major(b_data, 'b')
    return b_data, b_sf


def _m_grouped_contiguous(a, b, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                          use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout, transpose_b):
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('m_grouped_fp8_contiguous', transpose_b, compiled_dims, id(disable_ue8m0_cast), id(use_psum_layout),
                  id(ensure_zero_padding), typed(expected_m_for_psum_layout), _recipes(recipe, recipe_a, recipe_b))
    except (TypeError, ValueError):  # not (tensor, sf) pairs, a recipe that is no sequence: the checks name it
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, grouped_layout):
        return
    _common(compiled_dims, disable_ue8m0_cast)
    require_bool(use_psum_layout, 'use_psum_layout')
    require_bool(ensure_zero_padding, 'ensure_zero_padding')
    require_psum_hint(expected_m_for_psum_layout, use_psum_layout)
    a_data, a_sf = _pair(a, 'a')
    b_data, b_sf = _grouped_b(b, transpose_b)
    _grouped_recipe(recipe, recipe_a, recipe_b, 'M-grouped')
    require_dims(a_data, 'a', 2, '[M, K] (the groups\' rows one after another)')
    require_k_major(a_data, 'a')
    (m, k), (groups, n, k_b) = shape_of(a_data), shape_of(b_data)
    if k_b != k:
        raise ValueError(f'b: expected K = {k} like a, got {tuple(shape_of(b[0]))}')
    require_tensor(d, 'd')
    require_shape(d, 'd', (m, n), ' ([M, N])')
    require_dtype(d, 'd', 'bfloat16')
    require_row_major(d, 'd')
    require_no_overlap(d, 'd')
    require_tensor(grouped_layout, 'grouped_layout')
    require_dtype(grouped_layout, 'grouped_layout', 'int32')
    require_shape(grouped_layout, 'grouped_layout', (groups, ) if use_psum_layout else (m, ),
                  ' (one end row per group with use_psum_layout)' if use_psum_layout else ' (one group per row)')
    check_sf_shape(a_sf, 'a[1]', m, k, 1, 128, None)
    check_sf_shape(b_sf, 'b[1]', n, k, 128, 128, groups)
    device = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d, grouped_layout=grouped_layout)
    num_sms = num_sms_setting()
    # Empty M or N: nothing to do; K = 0 zeroes d (the plan does both).
    views, pointers = _views((a_data, 'a'), (a_sf, 'a[1]'), (b_data, 'b'), (b_sf, 'b[1]'), (d, 'd'),
                             (grouped_layout, 'grouped_layout'))
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, grouped_layout),
                lambda: _C.plan_m_grouped_fp8_contiguous(*views, use_psum_layout, expected_m_for_psum_layout or 0,
                                                         device, num_sms),
                current_stream(device), num_sms, pointers)


# ensure_zero_padding is checked and otherwise unused, as in DeepGEMM 2.6.1 on SM90 (only its SM100 kernels read
# it): no extra work is launched for it. See m_grouped_bf16_gemm_nt_contiguous for what padding rows of d hold.
def m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False,
                                     ensure_zero_padding=True, expected_m_for_psum_layout=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_fp8_gemm_nt_contiguous', a, b, d, grouped_layout, recipe, recipe_a,
                                 recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding,
                                 expected_m_for_psum_layout)
    _m_grouped_contiguous(a, b, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                          use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout, False)


def m_grouped_fp8_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None,
                                     compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False,
                                     ensure_zero_padding=True):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_fp8_gemm_nn_contiguous', a, b, d, grouped_layout, recipe, recipe_a,
                                 recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding)
    _m_grouped_contiguous(a, b, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                          use_psum_layout, ensure_zero_padding, None, True)


def m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None,
                                 compiled_dims='nk', disable_ue8m0_cast=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_fp8_gemm_nt_masked', a, b, d, masked_m, expected_m, recipe, recipe_a,
                                 recipe_b, compiled_dims, disable_ue8m0_cast)
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('m_grouped_fp8_masked', compiled_dims, id(disable_ue8m0_cast), typed(expected_m),
                  _recipes(recipe, recipe_a, recipe_b))
    except (TypeError, ValueError):  # not (tensor, sf) pairs, a recipe that is no sequence: the checks name it
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, masked_m):
        return
    _common(compiled_dims, disable_ue8m0_cast)
    require_int(expected_m, 'expected_m', low=1, high=INT32_MAX)  # the C++ layer's int
    a_data, a_sf = _pair(a, 'a')
    require_dims(a_data, 'a', 3, '[G, M_max, K]')
    require_k_major(a_data, 'a')
    b_data, b_sf = _grouped_b(b, False)
    _grouped_recipe(recipe, recipe_a, recipe_b, 'masked')
    (groups, m_max, k), (groups_b, n, k_b) = shape_of(a_data), shape_of(b_data)
    if (groups_b, k_b) != (groups, k):
        raise ValueError(f'b: expected [G, N, K] with G = {groups} and K = {k} like a, got {(groups_b, n, k_b)}')
    require_tensor(d, 'd')
    require_shape(d, 'd', (groups, m_max, n), ' ([G, M_max, N])')
    require_dtype(d, 'd', 'bfloat16')
    require_row_major(d, 'd')
    require_no_overlap(d, 'd')
    require_tensor(masked_m, 'masked_m')
    require_dtype(masked_m, 'masked_m', 'int32')
    require_shape(masked_m, 'masked_m', (groups, ), ' (valid rows per group)')
    if min(groups, m_max, k) <= 0:
        raise ValueError(f'a: expected G, M_max and K > 0 (DeepGEMM\'s masked contract), got {(groups, m_max, k)}')
    if n <= 0:
        raise ValueError(f'b: expected N > 0 (DeepGEMM\'s masked contract), got {(groups_b, n, k_b)}')
    check_sf_shape(a_sf, 'a[1]', m_max, k, 1, 128, groups)
    check_sf_shape(b_sf, 'b[1]', n, k, 128, 128, groups)
    device = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d, masked_m=masked_m)
    num_sms = num_sms_setting()
    views, pointers = _views((a_data, 'a'), (a_sf, 'a[1]'), (b_data, 'b'), (b_sf, 'b[1]'), (d, 'd'),
                             (masked_m, 'masked_m'))
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, masked_m),
                lambda: _C.plan_m_grouped_fp8_masked(*views, expected_m, device, num_sms),
                current_stream(device), num_sms, pointers)


def k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128),
                                     compiled_dims='mn', use_psum_layout=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('k_grouped_fp8_gemm_nt_contiguous', a, b, d, ks_cpu, grouped_layout, c, recipe,
                                 compiled_dims, use_psum_layout)
    try:
        (a_data, a_sf), (b_data, b_sf) = a, b
        prefix = ('k_grouped_fp8', compiled_dims, id(use_psum_layout), typed_sequence(recipe), typed_sequence(ks_cpu))
    except (TypeError, ValueError):  # not (tensor, sf) pairs, ks_cpu or a recipe that is no sequence: checked below
        prefix = None
    if prefix is not None and run_kept(prefix, a_data, a_sf, b_data, b_sf, d, grouped_layout, c):
        return
    require_compiled_dims(compiled_dims)
    require_bool(use_psum_layout, 'use_psum_layout')
    if use_psum_layout:
        raise ValueError('use_psum_layout: expected False (the SM90 K-grouped kernel takes the group sizes in '
                         'ks_cpu), got True')
    if not _int_tuple(recipe, 3) or tuple(recipe) != RECIPE_1D1D:
        raise ValueError(f'recipe: expected {RECIPE_1D1D} (SM90 K-grouped FP8 GEMMs are 1D1D), got {recipe!r}')
    if not isinstance(ks_cpu, (list, tuple)) or len(ks_cpu) == 0:
        raise ValueError(f'ks_cpu: expected a non-empty list of group K sizes on the host, got {ks_cpu!r}')
    require_int_sizes(ks_cpu, 'ks_cpu')
    for g, k in enumerate(ks_cpu):
        if k % 128:
            raise ValueError(f'ks_cpu[{g}]: expected a multiple of 128 >= 0 (the SM90 K alignment), got {k}')
    a_data, a_sf = _pair(a, 'a')
    b_data, b_sf = _pair(b, 'b')
    require_tensor(d, 'd')
    require_dims(d, 'd', 3, '[G, M, N]')
    require_dtype(d, 'd', 'float32')
    groups, m, n = shape_of(d)
    if groups != len(ks_cpu):
        raise ValueError(f'ks_cpu: expected {groups} sizes (one per group of d), got {len(ks_cpu)}')
    sum_k = sum(ks_cpu)
    for t, name, mn in ((a_data, 'a', m), (b_data, 'b', n)):
        numel = 1
        for s in shape_of(t):
            numel *= s
        if numel != sum_k * mn:
            raise ValueError(f'{name}: expected {sum_k * mn} elements (the groups\' K-major [{mn}, k] blocks '
                             f'one after another, ΣK = {sum_k}), got {numel} in {tuple(shape_of(t))}')
        if not is_contiguous(t):
            raise ValueError(f'{name}: expected a contiguous tensor, got strides {tuple(t.stride())}')
    for t, name in ((d, 'd'), (c, 'c')):
        if t is not None and not is_contiguous(require_tensor(t, name)):
            raise ValueError(f'{name}: expected a contiguous tensor, got strides {tuple(t.stride())}')
    if c is not None:
        require_shape(c, 'c', (groups, m, n), ' (like d)')
        require_dtype(c, 'c', 'float32')
    require_tensor(grouped_layout, 'grouped_layout')
    require_dtype(grouped_layout, 'grouped_layout', 'int32')
    require_shape(grouped_layout, 'grouped_layout', (groups, ), ' (the group K sizes, as ks_cpu)')
    for sf, name, mn in ((a_sf, 'a[1]', m), (b_sf, 'b[1]', n)):
        check_sf_shape(sf, name, mn, sum_k, 1, 128, None)
    device = common_device(a=a_data, **{'a[1]': a_sf}, b=b_data, **{'b[1]': b_sf}, d=d, c=c,
                           grouped_layout=grouped_layout)
    num_sms = num_sms_setting()
    if m == 0 or n == 0:
        return
    if sum_k == 0:
        _write_c_or_zero(d, c)
        return
    # DeepGEMM's layout (each group's K-major [mn, k_g] block after the previous group's) as the 1-D views the C++
    # API reads it from, through one TMA map per group: no copy.
    a_view, b_view = flat_view(a_data, 'a', sum_k * m), flat_view(b_data, 'b', sum_k * n)
    views = a_view, view(a_sf, 'a[1]'), b_view, view(b_sf, 'b[1]'), view(d, 'd')
    pointers = [v[0] for v in views]
    layout_view = view(grouped_layout, 'grouped_layout')
    c_view = None if c is None else view(c, 'c')
    ks = list(ks_cpu)
    run_checked(kept_key(prefix, a[0], a[1], b[0], b[1], d, grouped_layout, c),
                lambda: _C.plan_k_grouped_fp8(*views, ks, layout_view, c_view, device, num_sms),
                current_stream(device), num_sms, pointers + [layout_view[0], 0 if c is None else c_view[0]])
