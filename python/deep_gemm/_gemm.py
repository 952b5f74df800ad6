"""The BF16 GEMMs and cuBLASLt wrappers, with DeepGEMM 2.6's names, argument order and defaults.

Every function computes into the caller's ``d`` on torch's current stream: ``d = c + a @ b.T`` for nt
(a [M, K], b [N, K]); nn takes b as [K, N], tn takes a as [K, M] (d = a.T @ b), tt both (d = a.T @ b.T).
When ``c`` is given and is not ``d`` it is copied into ``d`` first; empty M or N return at once; K = 0
writes ``c`` (or zeros) into ``d``. Bad arguments raise TypeError/ValueError naming the argument.
"""
from . import _C
from ._checks import require_bool, require_compiled_dims, require_psum_hint
from ._config import num_sms_setting
from ._tensor import common_device, current_stream, transposed, view


def _launch_args(**tensors):
    device = common_device(**tensors)
    return device, current_stream(device)


def _dense(a_view, b_view, a, b, d, c, compiled_dims):
    require_compiled_dims(compiled_dims)
    d_view = view(d, 'd')
    c_view = None if c is None else view(c, 'c')
    device, stream = _launch_args(a=a, b=b, d=d, c=c)
    _C.bf16_gemm(a_view, b_view, d_view, c_view, device, stream, num_sms_setting())


def bf16_gemm_nt(a, b, d, c=None, compiled_dims='nk'):
    _dense(view(a, 'a'), view(b, 'b'), a, b, d, c, compiled_dims)


def bf16_gemm_nn(a, b, d, c=None, compiled_dims='nk'):
    _dense(view(a, 'a'), transposed(view(b, 'b')), a, b, d, c, compiled_dims)


def bf16_gemm_tn(a, b, d, c=None, compiled_dims='mn'):
    _dense(transposed(view(a, 'a')), transposed(view(b, 'b')), a, b, d, c, compiled_dims)


def bf16_gemm_tt(a, b, d, c=None, compiled_dims='mn'):
    _dense(transposed(view(a, 'a')), view(b, 'b'), a, b, d, c, compiled_dims)


def _zero_padding_rows(d, grouped_layout, use_psum_layout, alignment):
    """Zeroes the rows of d that belong to no group (DeepGEMM's ensure_zero_padding), on the current stream
    with device-side ops only, so it neither synchronises nor breaks CUDA-graph capture."""
    import torch
    m = d.shape[0]
    if m == 0:
        return
    if use_psum_layout:
        ends = grouped_layout.to(torch.int64)
        previous = torch.cat([ends.new_zeros(1), ends[:-1]])
        starts = (previous + alignment - 1) // alignment * alignment
        rows = torch.arange(m, device=d.device).unsqueeze(1)
        in_group = ((rows >= starts.unsqueeze(0)) & (rows < ends.unsqueeze(0))).any(dim=1)
    else:
        in_group = grouped_layout >= 0
    d.masked_fill_(~in_group.unsqueeze(1), 0)


def _m_grouped_contiguous(b_view, a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding,
                          expected_m_for_psum_layout):
    require_compiled_dims(compiled_dims)
    require_bool(use_psum_layout, 'use_psum_layout')
    require_bool(ensure_zero_padding, 'ensure_zero_padding')
    require_psum_hint(expected_m_for_psum_layout, use_psum_layout)
    a_view, d_view = view(a, 'a'), view(d, 'd')
    layout_view = view(grouped_layout, 'grouped_layout')
    device, stream = _launch_args(a=a, b=b, d=d, grouped_layout=grouped_layout)
    _C.m_grouped_contiguous(a_view, b_view, d_view, layout_view, use_psum_layout, device, stream,
                            num_sms_setting())
    if ensure_zero_padding and len(d.shape) == 2 and d.shape[1] > 0:
        _zero_padding_rows(d, grouped_layout, use_psum_layout, _C.mk_alignment())


def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False,
                                      ensure_zero_padding=True, expected_m_for_psum_layout=None):
    _m_grouped_contiguous(view(b, 'b'), a, b, d, grouped_layout, compiled_dims, use_psum_layout,
                          ensure_zero_padding, expected_m_for_psum_layout)


def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False,
                                      ensure_zero_padding=True):
    _m_grouped_contiguous(transposed(view(b, 'b')), a, b, d, grouped_layout, compiled_dims, use_psum_layout,
                          ensure_zero_padding, None)


def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims='nk'):
    require_compiled_dims(compiled_dims)
    if isinstance(expected_m, bool) or not isinstance(expected_m, int):
        raise TypeError(f'expected_m: expected an int, got {type(expected_m).__name__} {expected_m!r}')
    views = view(a, 'a'), view(b, 'b'), view(d, 'd'), view(masked_m, 'masked_m')
    device, stream = _launch_args(a=a, b=b, d=d, masked_m=masked_m)
    _C.m_grouped_masked(*views, expected_m, device, stream, num_sms_setting())


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, compiled_dims='mn',
                                      use_psum_layout=False):
    require_compiled_dims(compiled_dims)
    require_bool(use_psum_layout, 'use_psum_layout')
    if use_psum_layout:
        raise ValueError('use_psum_layout: expected False (the SM90 K-grouped kernel takes the group sizes in '
                         'ks_cpu), got True')
    if ks_cpu is None or not isinstance(ks_cpu, (list, tuple)) or len(ks_cpu) == 0:
        raise ValueError(f'ks_cpu: expected a non-empty list of group K sizes on the host, got {ks_cpu!r}')
    if any(isinstance(k, bool) or not isinstance(k, int) for k in ks_cpu):
        raise TypeError(f'ks_cpu: expected a list of ints, got {ks_cpu!r}')
    views = view(a, 'a'), view(b, 'b'), view(d, 'd')
    layout_view = view(grouped_layout, 'grouped_layout')
    c_view = None if c is None else view(c, 'c')
    device, stream = _launch_args(a=a, b=b, d=d, grouped_layout=grouped_layout, c=c)
    _C.k_grouped_tn(*views, list(ks_cpu), layout_view, c_view, device, stream, num_sms_setting())


def _cublaslt(layout, a, b, d, c):
    views = view(a, 'a'), view(b, 'b'), view(d, 'd')
    c_view = None if c is None else view(c, 'c')
    device, stream = _launch_args(a=a, b=b, d=d, c=c)
    _C.cublaslt(layout, *views, c_view, device, stream)


def cublaslt_gemm_nt(a, b, d, c=None):
    _cublaslt('nt', a, b, d, c)


def cublaslt_gemm_nn(a, b, d, c=None):
    _cublaslt('nn', a, b, d, c)


def cublaslt_gemm_tn(a, b, d, c=None):
    _cublaslt('tn', a, b, d, c)


def cublaslt_gemm_tt(a, b, d, c=None):
    _cublaslt('tt', a, b, d, c)
