"""DeepSeek-V3.2's mHC pre-norm GEMM with DeepGEMM 2.6.1's name and arguments.

``tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None)``: ``d = a @ b.T`` with TF32 products (a bf16 [M, K],
b fp32 [N, K], N in {8, 16, 24, 32}) and ``sqr_sum = (a.float() ** 2).sum(-1)``, from one pass over ``a``.
``num_splits=None``: d is [M, N] and sqr_sum [M]; the library chooses the K split and sums it inside the kernel.
``num_splits=S``: d is [S, M, N] and sqr_sum [S, M], each split's partial sums in its slice (the caller adds them,
as with DeepGEMM). Bad arguments raise TypeError/ValueError naming the argument.
"""
from . import _C
from ._checks import INT32_MAX, require_int, require_tensor
from ._config import num_sms_setting
from ._tensor import common_device, current_stream, view


def tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None):
    for t, name in ((a, 'a'), (b, 'b'), (d, 'd'), (sqr_sum, 'sqr_sum')):
        require_tensor(t, name)
    if num_splits is not None:
        require_int(num_splits, 'num_splits', 1, INT32_MAX)
    views = view(a, 'a'), view(b, 'b'), view(d, 'd'), view(sqr_sum, 'sqr_sum')
    device = common_device(a=a, b=b, d=d, sqr_sum=sqr_sum)
    _C.tf32_hc_prenorm_gemm(*views, num_splits, device, current_stream(device), num_sms_setting())
