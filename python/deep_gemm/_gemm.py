"""The BF16 GEMMs and cuBLASLt wrappers, with DeepGEMM 2.6's names, argument order and defaults.

Every function computes into the caller's ``d`` on torch's current stream: ``d = c + a @ b.T`` for nt
(a [M, K], b [N, K]); nn takes b as [K, N], tn takes a as [K, M] (d = a.T @ b), tt both (d = a.T @ b.T).
When ``c`` is given and is not ``d`` it is copied into ``d`` first; empty M or N return at once; K = 0
writes ``c`` (or zeros) into ``d``. Bad arguments raise TypeError/ValueError naming the argument.

A call whose signature (see _plans.py) was seen runs the plan the first such call made: one lookup, the data
pointers and the stream into C++, no check. Otherwise the checks run (Python's here, then C++'s in the plan_*
function) and the plan is kept.
"""
from . import _C, _torch_ops
from ._checks import (INT32_MAX, require_bool, require_compiled_dims, require_int, require_int_sizes,
                      require_no_overlap, require_psum_hint)
from ._config import num_sms_setting
from ._plans import kept_key, run_checked, run_kept, typed, typed_sequence
from ._tensor import common_device, current_stream, require_matrices, transposed, view

# Layout tags of the signatures (each layout views the same tensors differently).
_NT, _NN, _TN, _TT = 'nt', 'nn', 'tn', 'tt'


def _dense(layout, a, b, d, c, compiled_dims):
    prefix = (layout, compiled_dims)
    if run_kept(prefix, a, b, d, c):
        return
    require_compiled_dims(compiled_dims)
    a_view, b_view = view(a, 'a'), view(b, 'b')
    if layout in (_TN, _TT):
        a_view = transposed(a_view, 'a')
    if layout in (_NN, _TN):
        b_view = transposed(b_view, 'b')
    d_view = view(d, 'd')
    require_no_overlap(d, 'd')
    c_view = None if c is None else view(c, 'c')
    device, num_sms = common_device(a=a, b=b, d=d, c=c), num_sms_setting()
    run_checked(kept_key(prefix, a, b, d, c),
                lambda: _C.plan_bf16_gemm(a_view, b_view, d_view, c_view, device, num_sms), current_stream(device), num_sms, [a_view[0], b_view[0], d_view[0], 0 if c is None else c_view[0]])


def bf16_gemm_nt(a, b, d, c=None, compiled_dims='nk'):
    if _torch_ops.compiling():
        return _torch_ops.traced('bf16_gemm_nt', a, b, d, c, compiled_dims)
    _dense(_NT, a, b, d, c, compiled_dims)


def bf16_gemm_nn(a, b, d, c=None, compiled_dims='nk'):
    if _torch_ops.compiling():
        return _torch_ops.traced('bf16_gemm_nn', a, b, d, c, compiled_dims)
    _dense(_NN, a, b, d, c, compiled_dims)


def bf16_gemm_tn(a, b, d, c=None, compiled_dims='mn'):
    if _torch_ops.compiling():
        return _torch_ops.traced('bf16_gemm_tn', a, b, d, c, compiled_dims)
    _dense(_TN, a, b, d, c, compiled_dims)


def bf16_gemm_tt(a, b, d, c=None, compiled_dims='mn'):
    if _torch_ops.compiling():
        return _torch_ops.traced('bf16_gemm_tt', a, b, d, c, compiled_dims)
    _dense(_TT, a, b, d, c, compiled_dims)


def _m_grouped_contiguous(layout, a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding,
                          expected_m_for_psum_layout):
    prefix = ('m_grouped_contiguous', layout, compiled_dims, id(use_psum_layout), id(ensure_zero_padding),
              typed(expected_m_for_psum_layout))
    if run_kept(prefix, a, b, d, grouped_layout):
        return
    require_compiled_dims(compiled_dims)
    require_bool(use_psum_layout, 'use_psum_layout')
    require_bool(ensure_zero_padding, 'ensure_zero_padding')
    require_psum_hint(expected_m_for_psum_layout, use_psum_layout)
    a_view, b_view, d_view = view(a, 'a'), view(b, 'b'), view(d, 'd')
    require_no_overlap(d, 'd')
    if layout == _NN:
        b_view = transposed(b_view, 'b')
    layout_view = view(grouped_layout, 'grouped_layout')
    device, num_sms = common_device(a=a, b=b, d=d, grouped_layout=grouped_layout), num_sms_setting()
    run_checked(kept_key(prefix, a, b, d, grouped_layout),
                lambda: _C.plan_m_grouped_contiguous(a_view, b_view, d_view, layout_view, use_psum_layout, device,
                                                     num_sms),
                current_stream(device), num_sms, [a_view[0], b_view[0], d_view[0], layout_view[0]])


# ensure_zero_padding is checked and otherwise unused, as in DeepGEMM 2.6.1 on SM90 (only its SM100 kernels read
# it): no extra work is launched for it. Rows of d that belong to no group hold what the kernel wrote there: each
# 128-row block of a group is computed whole, so a group's padding rows get a's padding rows times b[g] (zero
# when a's padding rows are zero, as DeepGEMM's callers make them); whole blocks of padding are not written.
def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False,
                                      ensure_zero_padding=True, expected_m_for_psum_layout=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_bf16_gemm_nt_contiguous', a, b, d, grouped_layout, compiled_dims,
                                 use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    _m_grouped_contiguous(_NT, a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding,
                          expected_m_for_psum_layout)


def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False,
                                      ensure_zero_padding=True):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_bf16_gemm_nn_contiguous', a, b, d, grouped_layout, compiled_dims,
                                 use_psum_layout, ensure_zero_padding)
    _m_grouped_contiguous(_NN, a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding, None)


def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims='nk'):
    if _torch_ops.compiling():
        return _torch_ops.traced('m_grouped_bf16_gemm_nt_masked', a, b, d, masked_m, expected_m, compiled_dims)
    prefix = ('m_grouped_masked', compiled_dims, typed(expected_m))
    if run_kept(prefix, a, b, d, masked_m):
        return
    require_compiled_dims(compiled_dims)
    require_int(expected_m, 'expected_m', low=1, high=INT32_MAX)  # the C++ layer's int
    views = view(a, 'a'), view(b, 'b'), view(d, 'd'), view(masked_m, 'masked_m')
    require_no_overlap(d, 'd')
    device, num_sms = common_device(a=a, b=b, d=d, masked_m=masked_m), num_sms_setting()
    run_checked(kept_key(prefix, a, b, d, masked_m),
                lambda: _C.plan_m_grouped_masked(*views, expected_m, device, num_sms), current_stream(device), num_sms,
                [v[0] for v in views])


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, compiled_dims='mn',
                                      use_psum_layout=False):
    if _torch_ops.compiling():
        return _torch_ops.traced('k_grouped_bf16_gemm_tn_contiguous', a, b, d, ks_cpu, grouped_layout, c, compiled_dims,
                                 use_psum_layout)
    try:
        prefix = ('k_grouped_tn', compiled_dims, typed_sequence(ks_cpu), id(use_psum_layout))
    except TypeError:  # ks_cpu not a sequence: the checks below name it
        prefix = None
    if prefix is not None and run_kept(prefix, a, b, d, grouped_layout, c):
        return
    require_compiled_dims(compiled_dims)
    require_bool(use_psum_layout, 'use_psum_layout')
    if use_psum_layout:
        raise ValueError('use_psum_layout: expected False (the SM90 K-grouped kernel takes the group sizes in '
                         'ks_cpu), got True')
    if ks_cpu is None or not isinstance(ks_cpu, (list, tuple)) or len(ks_cpu) == 0:
        raise ValueError(f'ks_cpu: expected a non-empty list of group K sizes on the host, got {ks_cpu!r}')
    require_int_sizes(ks_cpu, 'ks_cpu')
    views = view(a, 'a'), view(b, 'b'), view(d, 'd')
    require_no_overlap(d, 'd')
    for (_, _, shape, strides), name, mn in ((views[0], 'a', 'M'), (views[1], 'b', 'N')):
        # The C++ layer checks both at once and names the culprit "a/b".
        if len(shape) == 2 and strides[1] != 1:
            raise ValueError(f'{name}: expected [ΣK, {mn}] with contiguous rows (stride 1 along {mn}), got strides '
                             f'{tuple(strides)}')
    layout_view = view(grouped_layout, 'grouped_layout')
    c_view = None if c is None else view(c, 'c')
    device, num_sms = common_device(a=a, b=b, d=d, grouped_layout=grouped_layout, c=c), num_sms_setting()
    ks = list(ks_cpu)
    run_checked(kept_key(prefix, a, b, d, grouped_layout, c),
                lambda: _C.plan_k_grouped_tn(*views, ks, layout_view, c_view, device, num_sms),
                current_stream(device), num_sms,
                [v[0] for v in views] + [layout_view[0], 0 if c is None else c_view[0]])


def _cublaslt(layout, a, b, d, c):
    # The C++ layer transposes a and b for nn/tn/tt (and names a 1-D one "view"): their dimensions are checked here.
    views = require_matrices(view(a, 'a'), 'a'), require_matrices(view(b, 'b'), 'b'), view(d, 'd')
    require_no_overlap(d, 'd')
    c_view = None if c is None else view(c, 'c')
    device = common_device(a=a, b=b, d=d, c=c)
    _C.cublaslt(layout, *views, c_view, device, current_stream(device))


def cublaslt_gemm_nt(a, b, d, c=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('cublaslt_gemm_nt', a, b, d, c)
    _cublaslt('nt', a, b, d, c)


def cublaslt_gemm_nn(a, b, d, c=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('cublaslt_gemm_nn', a, b, d, c)
    _cublaslt('nn', a, b, d, c)


def cublaslt_gemm_tn(a, b, d, c=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('cublaslt_gemm_tn', a, b, d, c)
    _cublaslt('tn', a, b, d, c)


def cublaslt_gemm_tt(a, b, d, c=None):
    if _torch_ops.compiling():
        return _torch_ops.traced('cublaslt_gemm_tt', a, b, d, c)
    _cublaslt('tt', a, b, d, c)
