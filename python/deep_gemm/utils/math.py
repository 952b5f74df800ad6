"""Rounding helpers and DeepGEMM's FP8 cast recipes (E4M3, max 448; scales optionally powers of two).

The casts follow DeepGEMM's semantics: amax per group clamped to 1e-4, scale = amax / 448 (rounded up to a
power of two with use_ue8m0), x / scale cast to float8_e4m3fn; inputs are padded with zeros to whole groups
for the per-block and per-token casts. torch is imported on first use only.
"""
from typing import Tuple

_FP8_MAX = 448.0
_AMAX_FLOOR = 1e-4


def ceil_div(x: int, y: int) -> int:
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    return ceil_div(x, y) * y


def _torch():
    import torch
    return torch


def ceil_to_ue8m0(x):
    """Rounds each |x| up to a power of two (an exponent-only UE8M0 value), as float32."""
    torch = _torch()
    bits = x.abs().float().view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    # Any mantissa bit means |x| is above the power of two of its exponent: go one up.
    exponent = exponent + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    return (exponent.clamp(1, 254) << 23).view(torch.float32)


def pack_ue8m0_to_int(x):
    """Packs four UE8M0 scales (float32 powers of two along the last dim) into one int32, lowest first."""
    torch = _torch()
    if x.dtype != torch.float32 or x.size(-1) % 4 != 0:
        raise ValueError(f'x: expected float32 with a last dimension divisible by 4, got {x.dtype} {tuple(x.shape)}')
    bits = x.view(torch.int32)
    if bool(((bits & 0x7FFFFF) != 0).any()):
        raise ValueError('x: expected powers of two (UE8M0 values, as ceil_to_ue8m0 returns), got a mantissa')
    return (bits >> 23).to(torch.uint8).view(torch.int32)


def _scale(amax, use_ue8m0):
    sf = amax / _FP8_MAX
    return ceil_to_ue8m0(sf) if use_ue8m0 else sf


def per_token_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple:
    """[M, N] -> (fp8 [M, N], scales [M, ceil(N / gran_k)]) with one scale per row and gran_k columns."""
    torch = _torch()
    if x.dim() != 2:
        raise ValueError(f'x: expected a 2-D tensor, got {x.dim()}-D')
    m, n = x.shape
    padded_n = align(n, gran_k)
    padded = torch.zeros((m, padded_n), dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    groups = padded.view(m, padded_n // gran_k, gran_k)
    sf = _scale(groups.abs().float().amax(dim=2).clamp(min=_AMAX_FLOOR), use_ue8m0)
    x_fp8 = (groups * (1.0 / sf.unsqueeze(2))).to(torch.float8_e4m3fn).view(m, padded_n)[:, :n].contiguous()
    return x_fp8, (pack_ue8m0_to_int(sf) if use_packed_ue8m0 else sf)


def per_channel_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple:
    """[M, N] with M % gran_k == 0 -> (fp8 [M, N], scales [M / gran_k, N]): one scale per column and gran_k rows."""
    torch = _torch()
    if x.dim() != 2 or x.size(0) % gran_k != 0:
        raise ValueError(f'x: expected a 2-D tensor with rows divisible by {gran_k}, got {tuple(x.shape)}')
    m, n = x.shape
    groups = x.view(-1, gran_k, n)
    sf = _scale(groups.abs().float().amax(dim=1).clamp(min=_AMAX_FLOOR), use_ue8m0)
    return (groups * (1.0 / sf.unsqueeze(1))).to(torch.float8_e4m3fn).view(m, n), sf


def per_block_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple:
    """[M, N] -> (fp8 [M, N], scales [ceil(M / gran_k), ceil(N / gran_k)]): one scale per gran_k² block."""
    torch = _torch()
    if x.dim() != 2:
        raise ValueError(f'x: expected a 2-D tensor, got {x.dim()}-D')
    m, n = x.shape
    padded = torch.zeros((align(m, gran_k), align(n, gran_k)), dtype=x.dtype, device=x.device)
    padded[:m, :n] = x
    blocks = padded.view(-1, gran_k, padded.size(1) // gran_k, gran_k)
    sf = _scale(blocks.abs().float().amax(dim=(1, 3), keepdim=True).clamp(min=_AMAX_FLOOR), use_ue8m0)
    x_fp8 = (blocks * (1.0 / sf)).to(torch.float8_e4m3fn)
    return x_fp8.view_as(padded)[:m, :n].contiguous(), sf.view(blocks.size(0), blocks.size(2))


def per_custom_dims_cast_to_fp8(x, dims: Tuple, use_ue8m0: bool) -> Tuple:
    """One scale per index of the kept ``dims`` (amax over every other dimension)."""
    torch = _torch()
    reduced = tuple(i for i in range(x.dim()) if i not in set(dims))
    sf = _scale(x.abs().float().amax(dim=reduced, keepdim=True).clamp(min=_AMAX_FLOOR), use_ue8m0)
    return (x * (1.0 / sf)).to(torch.float8_e4m3fn), sf.squeeze()
