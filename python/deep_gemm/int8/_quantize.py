"""Per-row symmetric int8 quantisation (what produces gemm_nt's operands) and the float64 reference."""
import torch

from .._checks import require_tensor


def quantize(x):
    """``(q, scale)`` with ``x ≈ q * scale[:, None]``: q int8 [R, C] in -127..127, scale fp32 [R] = absmax / 127 of each
    row (1 for an all-zero row, so that q is 0 there). Runs on x's device with torch ops."""
    require_tensor(x, 'x')
    if x.dim() != 2 or not x.is_floating_point():
        raise ValueError(f'x: expected a 2-D floating-point tensor [rows, cols], got {x.dtype} {tuple(x.shape)}')
    absmax = x.detach().float().abs().amax(dim=1)
    scale = torch.where(absmax > 0, absmax / 127.0, torch.ones_like(absmax))
    q = torch.round(x.float() / scale[:, None]).clamp_(-127, 127).to(torch.int8)
    return q, scale.contiguous()


def reference(a, b, scale_a, scale_b):
    """gemm_nt's math in float64 on the CPU: ``scale_a[m] * scale_b[n] * sum_k a[m, k] * b[n, k]`` ([M, N] float64);
    the scales in either of gemm_nt's shapes."""
    a64, b64 = a.detach().cpu().to(torch.float64), b.detach().cpu().to(torch.float64)
    sa = scale_a.detach().cpu().to(torch.float64).reshape(-1)
    sb = scale_b.detach().cpu().to(torch.float64).reshape(-1)
    return (a64 @ b64.T) * sa[:, None] * sb[None, :]
